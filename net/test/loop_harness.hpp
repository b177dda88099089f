#pragma once
// Shared by the unit tests of net/, router/ and icestorm-bridge/: shards run by the test thread
// (no shard threads, so every step is deterministic), a socketpair peer standing for a client or
// a back end that accepted the router's connection, a loopback back end for outgoing
// connections, and Ice messages built and read with the protocol/ codec. Every wait is bounded.
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/ice_connection.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moraine::test {

/// Runtime settings for `threads` shards; `tweak` may change the rest.
inline std::shared_ptr<const net::runtime_config> runtime(unsigned threads = 1,
                                                          const std::function<void(net::runtime_config&)>& tweak = {}) {
    net::runtime_config rt;
    rt.threads = threads;
    if (tweak) tweak(rt);
    return std::make_shared<const net::runtime_config>(rt);
}

/// Takes the shards' work guards away (shard::stop, once), so the test thread runs the shards
/// itself with settle() and run_until(); the shard threads are never started.
inline void own_shards(net::shard_set& shards) {
    for (unsigned i = 0; i < shards.size(); ++i) {
        auto& io = shards.at(i).io();
        shards.at(i).stop();
        io.poll();
        io.restart();
    }
}

/// A shard set with `threads` shards, owned by the test thread (own_shards).
inline std::unique_ptr<net::shard_set> owned_shards(unsigned threads = 1,
                                                    const std::function<void(net::runtime_config&)>& tweak = {}) {
    auto s = std::make_unique<net::shard_set>(runtime(threads, tweak));
    own_shards(*s);
    return s;
}

/// Runs every ready handler of every shard until none is ready (bounded). @return handlers run.
inline std::size_t settle(net::shard_set& shards) {
    std::size_t total = 0;
    for (int round = 0; round < 100000; ++round) {
        std::size_t ran = 0;
        for (unsigned i = 0; i < shards.size(); ++i) {
            auto& io = shards.at(i).io();
            io.restart();
            ran += io.poll();
        }
        total += ran;
        if (ran == 0) return total;
    }
    throw std::runtime_error("settle: the shards never went idle");
}

/// Runs the shards until `done()` is true or `limit` has passed. @return done().
template <class Pred>
bool run_until(net::shard_set& shards, Pred done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        settle(shards);
        if (done()) return true;
        if (std::chrono::steady_clock::now() > deadline) return false;
        for (unsigned i = 0; i < shards.size(); ++i) {
            auto& io = shards.at(i).io();
            io.restart();
            io.run_one_for(std::chrono::milliseconds(1));
        }
    }
}

/// After a test: closes the back-end connections and runs the shards dry (bounded), so nothing
/// of the test outlives it.
inline void finish(net::shard_set& shards) {
    for (unsigned i = 0; i < shards.size(); ++i) shards.at(i).backends().close_all();
    for (int round = 0; round < 1000; ++round) {
        std::size_t ran = 0;
        for (unsigned i = 0; i < shards.size(); ++i) {
            auto& io = shards.at(i).io();
            io.restart();
            ran += io.run_for(std::chrono::milliseconds(20));
        }
        if (ran == 0) return;
    }
}

/// A whole encapsulation (encoding 1.1) holding what `write` writes.
template <class Fn>
protocol::byte_buffer encaps(Fn&& write, protocol::encoding_version enc = protocol::encoding_1_1) {
    protocol::output_stream os(enc);
    const auto start = os.start_encapsulation(enc);
    write(os);
    os.end_encapsulation(start);
    return os.take();
}

/// An empty encapsulation (no parameters).
inline protocol::byte_buffer empty_encaps() {
    return encaps([](protocol::output_stream&) {});
}

/// A request message to `target` (request id 0 = oneway) with `params` (a whole encapsulation)
/// and context `ctx`.
inline protocol::byte_buffer request_message(std::int32_t request_id, protocol::identity_view target,
                                             std::string_view operation, protocol::byte_view params,
                                             std::uint8_t mode = 0, std::string_view facet = {},
                                             const std::vector<std::pair<std::string, std::string>>& ctx = {}) {
    protocol::output_stream os;
    os.start_message(protocol::message_type::request);
    os.write_int(request_id);
    os.write_identity(target);
    os.write_facet(facet);
    os.write_string(operation);
    os.write_byte(mode);
    os.write_size(static_cast<std::int32_t>(ctx.size()));
    for (const auto& [k, v] : ctx) {
        os.write_string(k);
        os.write_string(v);
    }
    os.write_bytes(params);
    os.end_message();
    return os.take();
}

/// The validate connection message (the accepting side's first message).
inline protocol::byte_buffer validate_connection() {
    return protocol::byte_buffer(protocol::validate_connection_message.begin(),
                                 protocol::validate_connection_message.end());
}

/// An OK reply to `request_id` whose results are `results` (a whole encapsulation).
inline protocol::byte_buffer ok_reply(std::int32_t request_id, protocol::byte_view results) {
    protocol::byte_buffer out;
    protocol::write_reply_ok(out, request_id, results);
    return out;
}

/// Splits `bytes` into whole Ice messages, leaving an incomplete tail in place.
inline std::vector<protocol::byte_buffer> take_frames(protocol::byte_buffer& bytes) {
    std::vector<protocol::byte_buffer> out;
    std::size_t used = 0;
    for (;;) {
        boost::system::error_code ec;
        auto f = protocol::parse_frame(protocol::byte_view(bytes).subspan(used), protocol::limits{0}, ec);
        if (ec) throw std::runtime_error("not an Ice message: " + ec.message());
        if (!f) break;
        out.emplace_back(f->bytes.begin(), f->bytes.end());
        used += f->size();
    }
    bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(used));
    return out;
}

/// The header of a whole message.
inline protocol::header header_of(const protocol::byte_buffer& message) {
    boost::system::error_code ec;
    auto f = protocol::parse_frame(message, protocol::limits{0}, ec);
    if (!f) throw std::runtime_error("not a whole Ice message");
    return f->header;
}

/// The reply a whole reply message carries (a loan of `message`).
inline protocol::reply_view reply_of(const protocol::byte_buffer& message) {
    if (header_of(message).type != protocol::message_type::reply) throw std::runtime_error("not a reply");
    auto r = protocol::decode_reply(protocol::byte_view(message).subspan(protocol::header_size));
    if (!r) throw std::runtime_error("reply does not decode");
    return *r;
}

/// The request a whole request message carries (a loan of `message`).
inline protocol::request_view request_of(const protocol::byte_buffer& message) {
    if (header_of(message).type != protocol::message_type::request) throw std::runtime_error("not a request");
    auto r = protocol::decode_request(protocol::byte_view(message).subspan(protocol::header_size));
    if (!r) throw std::runtime_error("request does not decode");
    return *r;
}

/// The string an OK reply's results start with.
inline std::string string_result(const protocol::reply_view& r) {
    protocol::input_stream in(r.payload);
    auto e = in.read_encapsulation();
    protocol::input_stream body(e.payload(), e.encoding);
    return std::string(body.read_string());
}

/// A non-blocking socket end: sends bytes, and collects what the other end writes.
class socket_end {
public:
    explicit socket_end(int fd = -1) : fd_(fd) {}
    ~socket_end() { reset(); }
    socket_end(const socket_end&) = delete;
    socket_end& operator=(const socket_end&) = delete;
    socket_end(socket_end&& o) noexcept : fd_(o.fd_), in_(std::move(o.in_)), eof_(o.eof_) { o.fd_ = -1; }
    socket_end& operator=(socket_end&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
            in_ = std::move(o.in_);
            frames_ = std::move(o.frames_);
            eof_ = o.eof_;
        }
        return *this;
    }

    int fd() const noexcept { return fd_; }
    void reset() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    /// Writes all of `bytes` (the socket buffers are far larger than a test's messages).
    void send(protocol::byte_view bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error("send to the connection failed");
            bytes = bytes.subspan(static_cast<std::size_t>(n));
        }
    }

    /// Reads what is there now, without blocking. @return bytes read.
    std::size_t read() {
        std::size_t total = 0;
        std::byte buf[16384];
        for (;;) {
            const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
            if (n < 0 && errno == EINTR) continue;
            if (n == 0) eof_ = true;
            if (n <= 0) break;
            in_.insert(in_.end(), buf, buf + n);
            total += static_cast<std::size_t>(n);
        }
        return total;
    }

    /// Reads, then moves every whole message read so far to frames().
    std::vector<protocol::byte_buffer>& frames() {
        read();
        for (auto& f : take_frames(in_)) frames_.push_back(std::move(f));
        return frames_;
    }
    /// True once the other end closed (seen by read()).
    bool eof() {
        read();
        return eof_;
    }
    /// Bytes read and not yet a whole message.
    const protocol::byte_buffer& partial() const noexcept { return in_; }

private:
    int fd_;
    protocol::byte_buffer in_;
    std::vector<protocol::byte_buffer> frames_;
    bool eof_ = false;
};

/** A socketpair: `peer` is the test's end; the other end becomes a transport on `home` (asio
    takes the AF_UNIX stream socket as "tcp": the connection only reads and writes it). */
class socket_pair {
public:
    explicit socket_pair(net::shard& home) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
            throw std::runtime_error("socketpair");
        peer = socket_end(fds[0]);
        net::tcp::socket s(home.executor());
        boost::system::error_code ec;
        s.assign(net::tcp::v4(), fds[1], ec);
        if (ec) throw std::runtime_error("assign: " + ec.message());
        transport_.emplace(std::move(s), net::transport_kind::tcp, nullptr, true);
    }
    socket_pair(const socket_pair&) = delete;
    socket_pair& operator=(const socket_pair&) = delete;

    /// The connection's end, once.
    net::transport take_transport() { return std::move(*transport_); }

    socket_end peer;

private:
    std::optional<net::transport> transport_;
};

/** An ice_connection whose service part only records: every whole message on_frame sees, every
    close, every relayed reply. Its protected entry points are opened for the tests. */
class probe_connection final : public net::ice_connection {
public:
    probe_connection(net::shard& home, net::transport t) : ice_connection(home, std::move(t)) {}

    /// As an accepted connection: validate connection first, then the loops.
    void start_as_accepted() { start_accepted(); }
    /// The loops only (an outgoing connection's start, without the connect).
    void start_plain() { start_loops(); }
    /// Opens the base's decoding of requests and batches.
    template <class Fn>
    bool each_request(const protocol::frame_view& f, Fn&& fn) {
        return for_each_request(f, std::forward<Fn>(fn));
    }

    struct relayed {
        std::int32_t request_id;
        protocol::reply_status status;
        std::uint8_t compression;
    };

    std::vector<protocol::byte_buffer> received;  ///< whole messages, as on_frame saw them
    std::vector<protocol::header> headers;        ///< their headers (compression as dispatched)
    std::vector<std::string> closes;              ///< on_closed's `why`, once per close
    std::vector<relayed> replies;                 ///< relay_reply calls
    bool stop_reading = false;                    ///< on_frame returns false (stop reading)

    void relay_reply(std::int32_t id, const protocol::reply_view& r, std::uint8_t compression) override {
        replies.push_back({id, r.status, compression});
    }

private:
    bool on_frame(const protocol::frame_view& f) override {
        received.emplace_back(f.bytes.begin(), f.bytes.end());
        headers.push_back(f.header);
        return !stop_reading;
    }
    void on_closed(std::string_view why) override { closes.emplace_back(why); }
};

/// A socketpair whose far end is a probe_connection on `home` (not started).
struct probed {
    explicit probed(net::shard& home) : pair(home), conn(std::make_shared<probe_connection>(home, pair.take_transport())) {}
    socket_pair pair;
    std::shared_ptr<probe_connection> conn;
    socket_end& peer() noexcept { return pair.peer; }
};

/** A back end on 127.0.0.1 (a POSIX listening socket, polled by the test): accepts the router's
    connections, sends them validate connection, records their requests and answers each twoway
    with what `answer` returns (default: an OK reply echoing the request's params). */
class loopback_backend {
public:
    using answer_fn = std::function<protocol::byte_buffer(const protocol::request_view&)>;

    loopback_backend() {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        socklen_t len = sizeof a;
        if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::listen(listen_fd_, 16) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            throw std::runtime_error("loopback back end: cannot listen");
        port_ = ntohs(a.sin_port);
    }
    ~loopback_backend() {
        if (listen_fd_ >= 0) ::close(listen_fd_);
    }
    loopback_backend(const loopback_backend&) = delete;
    loopback_backend& operator=(const loopback_backend&) = delete;

    unsigned short port() const noexcept { return port_; }
    /// "tcp -h 127.0.0.1 -p PORT"
    std::string endpoint() const { return "tcp -h 127.0.0.1 -p " + std::to_string(port_); }

    /// Accepts, reads, answers: call it from run_until's predicate.
    void pump() {
        for (;;) {
            const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) break;
            conns_.push_back({std::make_unique<socket_end>(fd), 0});
            ++accepted_;
            if (validate_) conns_.back().end->send(validate_connection());
        }
        for (auto& [c, seen] : conns_) {
            auto& frames = c->frames();
            for (; seen < frames.size(); ++seen) {
                const auto& m = frames[seen];
                requests.push_back(m);
                if (header_of(m).type != protocol::message_type::request) continue;
                auto r = request_of(m);
                if (r.request_id == 0 || !answer_) continue;
                auto reply = answer_(r);
                if (!reply.empty()) c->send(reply);
            }
        }
    }

    /// Messages received (every type), in the order they were read.
    std::vector<protocol::byte_buffer> requests;
    std::size_t accepted() const noexcept { return accepted_; }
    void answer_with(answer_fn fn) { answer_ = std::move(fn); }
    /// Stops sending validate connection to later connections (a back end that never validates).
    void never_validate() noexcept { validate_ = false; }
    /// Closes every accepted connection.
    void drop_connections() { conns_.clear(); }
    /// Sends validate connection on every accepted connection (after never_validate).
    void validate_now() {
        for (auto& c : conns_) c.end->send(validate_connection());
    }

private:
    int listen_fd_ = -1;
    unsigned short port_ = 0;
    struct accepted_conn {
        std::unique_ptr<socket_end> end;
        std::size_t seen = 0;  // its messages handled so far
    };
    std::vector<accepted_conn> conns_;
    std::size_t accepted_ = 0;
    bool validate_ = true;
    answer_fn answer_ = [](const protocol::request_view& r) { return echo(r.request_id, r.params); };

public:
    /// An OK reply to `id` whose results are the request's params encapsulation, verbatim.
    static protocol::byte_buffer echo(std::int32_t id, const protocol::encapsulation_view& params) {
        return ok_reply(id, params.bytes);
    }
};

}  // namespace moraine::test
