#include <moraine/net/takeover_client.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace moraine::net {

namespace {

/// The next message; a refusal becomes channel_error with the running router's reason.
takeover_message receive_message(int sock, std::size_t max_fds, std::chrono::milliseconds timeout,
                                 std::vector<unique_fd>* fds = nullptr) {
    auto p = receive_packet(sock, takeover_message_max, max_fds, timeout);
    auto m = decode_takeover(p.bytes);
    if (const auto* no = std::get_if<takeover_refuse>(&m)) throw channel_error("the running router refused: " + no->reason);
    if (fds)
        for (auto& fd : p.fds) fds->push_back(std::move(fd));
    else if (!p.fds.empty())
        throw channel_error(std::string("descriptors attached to a ") + takeover_name(m) + " message");
    return m;
}

}  // namespace

takeover_client::takeover_client(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof a.sun_path) throw channel_error("takeover socket '" + path + "': bad path");
    std::memcpy(a.sun_path, path.data(), path.size());
    sock_.reset(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!sock_ || ::connect(sock_.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
        const std::string why = "cannot reach a running router at takeover socket '" + path + "': " + std::strerror(errno);
        if (errno == ENOENT || errno == ECONNREFUSED) throw takeover_unreachable(why);
        throw channel_error(why);
    }
    const timeval send_limit{5, 0};
    ::setsockopt(sock_.get(), SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
}

takeover_offer takeover_client::request(const std::string& program, std::chrono::milliseconds timeout) {
    send_takeover(sock_.get(), takeover_hello{program, static_cast<std::uint32_t>(::getpid())});
    const auto first = receive_message(sock_.get(), 0, timeout);
    const auto* listeners = std::get_if<takeover_listeners>(&first);
    if (!listeners) throw channel_error(std::string("expected the listeners, got ") + takeover_name(first));
    takeover_offer offer{listeners->program, listeners->pid, {}};
    std::vector<unique_fd> fds;
    while (fds.size() < listeners->sockets.size()) {
        const auto before = fds.size();
        const auto m = receive_message(sock_.get(), max_fds_per_packet, timeout, &fds);
        const auto* batch = std::get_if<takeover_descriptors>(&m);
        if (!batch) throw channel_error(std::string("expected descriptors, got ") + takeover_name(m));
        if (fds.size() == before) throw channel_error("a descriptor batch without descriptors");
        if (batch->first != before || batch->count != fds.size() - before || fds.size() > listeners->sockets.size())
            throw channel_error("descriptor batch " + std::to_string(batch->first) + "+" + std::to_string(batch->count) +
                                " does not match the " + std::to_string(fds.size() - before) + " descriptor(s) attached");
    }
    for (std::size_t i = 0; i < fds.size(); ++i) offer.sockets.push_back({listeners->sockets[i], std::move(fds[i])});
    check_descriptors(offer.sockets);
    return offer;
}

void takeover_client::refuse(const std::string& reason) noexcept {
    try {
        send_takeover(sock_.get(), takeover_refuse{reason});
    } catch (const std::exception&) {
        // It learns from the closed channel instead.
    }
}

takeover_released takeover_client::accept(std::uint32_t adopted, std::chrono::milliseconds timeout) {
    send_takeover(sock_.get(), takeover_accept{adopted});
    const auto m = receive_message(sock_.get(), 0, timeout);
    const auto* released = std::get_if<takeover_released>(&m);
    if (!released) throw channel_error(std::string("expected released, got ") + takeover_name(m));
    return *released;
}

takeover_client::sessions_received takeover_client::receive_session_batches(const session_batch_adopter& adopt, int cancel,
                                                                             std::chrono::milliseconds idle_limit,
                                                                             std::size_t max_batch,
                                                                             const topic_receiver& topics) {
    const auto start = std::chrono::steady_clock::now();
    sessions_received got;
    std::vector<std::byte> image;  // the topic catalog's parts so far
    // A topic service message: handled at once, in channel order. @return false for any other.
    const auto topic_message = [&](takeover_message& m, std::vector<unique_fd>& fds) {
        if (auto* part = std::get_if<takeover_topics>(&m)) {
            if (!fds.empty()) throw channel_error("descriptors attached to a topics message");
            if (image.size() + part->part.size() > catalog_image_max) throw channel_error("a topic catalog larger than allowed");
            image.insert(image.end(), part->part.begin(), part->part.end());
            if (part->last) {
                if (topics.install) topics.install(std::move(image));
                image.clear();
            }
            return true;
        }
        if (auto* c = std::get_if<takeover_topic_connection>(&m)) {
            if (fds.size() != 1)
                throw channel_error("a topic connection message with " + std::to_string(fds.size()) + " descriptors, not 1");
            if (topics.adopt) topics.adopt(*c, std::move(fds.front()));
            return true;
        }
        if (auto* d = std::get_if<takeover_topics_done>(&m)) {
            if (topics.done) topics.done(d->moved);
            return true;
        }
        return false;
    };
    for (;;) {
        std::vector<std::pair<takeover_session, unique_fd>> batch;
        std::vector<std::size_t> sizes;
        bool done = false;
        // The first message is waited for; more are taken only while they are there already.
        const auto read_one = [&](std::chrono::milliseconds limit) {
            auto p = receive_packet(sock_.get(), takeover_message_max, 1, limit, cancel);
            auto m = decode_takeover(p.bytes);
            if (topic_message(m, p.fds)) return;
            if (const auto* d = std::get_if<takeover_sessions_done>(&m)) {
                done = true;
                got.done = true;
                got.stayed = d->stayed;
                return;
            }
            auto* s = std::get_if<takeover_session>(&m);
            if (!s) throw channel_error(std::string("expected a session, got ") + takeover_name(m));
            if (p.fds.size() != 1)
                throw channel_error("a session message with " + std::to_string(p.fds.size()) + " descriptors, not 1");
            batch.emplace_back(std::move(*s), std::move(p.fds.front()));
            sizes.push_back(p.bytes.size());
        };
        read_one(idle_limit);
        std::exception_ptr failed;  // after messages already read: those are adopted and answered first
        while (!done && batch.size() < max_batch) {
            pollfd ready{sock_.get(), POLLIN, 0};
            if (::poll(&ready, 1, 0) != 1) break;
            try {
                read_one(idle_limit);
            } catch (const std::exception&) {
                failed = std::current_exception();
                break;
            }
        }
        if (!batch.empty()) {
            // The old process may take an unanswered session as ours: an adopter that throws ends
            // the exchange without an answer, so no session is served by both processes.
            const auto why = adopt(batch);
            if (why.size() != batch.size()) throw channel_error("the adopter answered for the wrong number of sessions");
            for (std::size_t i = 0; i < batch.size(); ++i) {
                const auto serial = batch[i].first.serial;
                if (why[i].empty()) {
                    send_takeover(sock_.get(), takeover_session_taken{serial});
                    ++got.adopted;
                    got.bytes += sizes[i];
                    got.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
                } else {
                    send_takeover(sock_.get(), takeover_session_refused{serial, why[i]});
                    ++got.refused;
                }
            }
        }
        if (failed) std::rethrow_exception(failed);
        if (done) return got;
    }
}

}  // namespace moraine::net
