// moraine-router's new side of a takeover (session_intake.hpp).
#include "session_intake.hpp"

#include <moraine/icestorm_bridge/catalog_image.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <unistd.h>

namespace moraine::app {

session_intake::session_intake(net::takeover_client channel, router::session_router& glacier2,
                               icestorm_bridge::topic_service* topics, std::chrono::milliseconds idle_limit)
    : channel_(std::move(channel)), topics_(topics) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe: cannot wait for moved sessions");
    cancel_read_.reset(fds[0]);
    cancel_write_.reset(fds[1]);
    thread_ = std::thread([this, &glacier2, idle_limit] { run(glacier2, idle_limit); });
}

session_intake::~session_intake() {
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(cancel_write_.get(), &byte, 1);
    thread_.join();
}

void session_intake::run(router::session_router& glacier2, std::chrono::milliseconds idle_limit) {
    // The old router sends several sessions ahead of the answers: those waiting are adopted
    // together, one handler per shard.
    const auto adopt = [&glacier2](std::vector<std::pair<net::takeover_session, net::unique_fd>>& batch) {
        auto why = glacier2.adopt_sessions(batch, true);
        for (std::size_t i = 0; i < batch.size(); ++i) {
            const auto& s = batch[i].first;
            if (why[i].empty()) spdlog::debug("takeover: adopted the session of '{}' ({})", s.user_id, s.category);
            else
                spdlog::warn("takeover: refused the session of '{}': {}; it stays with the old router", s.user_id, why[i]);
        }
        return why;
    };
    try {
        const auto got = channel_.receive_session_batches(adopt, cancel_read_.get(), idle_limit, adopt_batch, topic_receiver());
        spdlog::info("takeover: adopted {} session(s) ({} bytes of session state) from the old router in {} ms; "
                     "{} refused; {} stay with it",
                     got.adopted, got.bytes, got.took.count(), got.refused, got.stayed);
    } catch (const std::exception& e) {
        spdlog::warn("takeover: no more sessions from the old router: {}", e.what());
    }
    // Whatever became of the old router's topic service; with a database, once it is open here
    // (if the old router kept it: once it exits).
    if (topics_ && (!topics_->store_pending() || await_store(std::nullopt))) topics_->hold_intake(false);
}

bool session_intake::await_store(std::optional<std::chrono::milliseconds> limit) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto next_note = start;  // at the first miss, then every 10 s
    for (;;) {
        try {
            if (topics_->open_pending_store(!catalog_received_)) return true;
        } catch (const std::exception& e) {
            spdlog::error("takeover: the topic database cannot be opened ({}); the topic service serves on without it, "
                          "and its changes are not stored",
                          e.what());
            return true;
        }
        const auto now = clock::now();
        if (limit && now - start >= *limit) return false;
        if (now >= next_note) {
            spdlog::info("takeover: waiting for the old router to let go of the topic database; the topic service "
                         "answers here once it has ({} s so far)",
                         std::chrono::duration_cast<std::chrono::seconds>(now - start).count());
            next_note = now + std::chrono::seconds(10);
        }
        pollfd cancel{cancel_read_.get(), POLLIN, 0};
        if (::poll(&cancel, 1, 200) > 0) return false;  // this router stops
    }
}

net::takeover_client::topic_receiver session_intake::topic_receiver() {
    if (!topics_) return {};
    auto& topics = *topics_;
    return {
        [this, &topics](std::vector<std::byte> image) {
            try {
                auto moved = icestorm_bridge::decode_catalog_image(image);
                const auto offered = moved.subscribers.size();
                const auto topic_count = moved.topics.size();
                const auto added = topics.install(std::move(moved));
                catalog_received_ = true;
                spdlog::info("takeover: took over the topic catalog ({} bytes): {} topic(s), {} of {} subscriber(s)",
                             image.size(), topic_count, added, offered);
            } catch (const std::exception& e) {
                spdlog::error("takeover: the old router's topic catalog is refused: {}", e.what());
            }
        },
        [&topics](const net::takeover_topic_connection& m, net::unique_fd fd) {
            if (const auto why = topics.adopt_connection(m, std::move(fd)); !why.empty())
                spdlog::warn("takeover: a topic connection is refused ({}); its peer reconnects", why);
        },
        [this, &topics](bool moved) {
            spdlog::info("takeover: {}", moved ? "the topic service moved here; its publishers are read again"
                                               : "the old router keeps its topic service");
            // Moved: the old router closed its database before the connections, so it opens at
            // once (2 s at most here, else after the sessions). Kept: it stays pending until the
            // old router exits, and the intake with it.
            if (!topics.store_pending() || (moved && await_store(std::chrono::seconds(2)))) topics.hold_intake(false);
        },
    };
}

}  // namespace moraine::app
