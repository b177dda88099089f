#pragma once
// An old router's side of a takeover, in one process: a takeover_server on a temporary socket
// whose hooks hand over one listening socket and offer a given set of sessions once, each on a
// socket pair of its own. Shared by takeover_sessions_test and takeover_window_test.
#include <moraine/net/takeover_server.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace moraine::net::test {

/** The server offers `sessions` at the first take_movable and none after: session i on `near[i]`
    (the moved client connection), whose peer `far[i]` plays the client. The `moved` and `keep`
    hooks record the categories in `moved` and `kept`; a session in either no longer counts as
    open, so the server stops looking once all are settled. */
struct takeover_fixture {
    std::filesystem::path dir;
    std::string path;  ///< the takeover socket
    unique_fd listener{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    std::vector<unique_fd> near, far;
    std::mutex mutex;
    std::vector<std::string> moved, kept;  ///< guarded by mutex
    std::atomic<std::uint32_t> open_sessions;
    std::unique_ptr<takeover_server> server;

    /// `tag` names the temporary directory (moraine-takeover-TAG-XXXXXX).
    takeover_fixture(std::vector<takeover_session> sessions, const std::string& tag)
        : open_sessions(static_cast<std::uint32_t>(sessions.size())), offer_(std::move(sessions)) {
        for (std::size_t i = 0; i < offer_.size(); ++i) {
            int fds[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
            near.emplace_back(fds[0]);
            far.emplace_back(fds[1]);
        }
        const auto record = listen_on_loopback();
        std::string tmpl = (std::filesystem::temp_directory_path() / ("moraine-takeover-" + tag + "-XXXXXX")).string();
        dir = ::mkdtemp(tmpl.data());
        path = (dir / "takeover.sock").string();
        server = std::make_unique<takeover_server>(path, "old-router", hooks(record));
        server->start();
    }
    ~takeover_fixture() {
        server.reset();
        std::filesystem::remove_all(dir);
    }

    /// Waits (at most 2 s) until the server has settled `n` sessions.
    void settled(std::size_t n) {
        for (int i = 0; i < 400; ++i) {
            {
                std::lock_guard lock(mutex);
                if (moved.size() + kept.size() >= n) return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

private:
    listener_record listen_on_loopback() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener.get(), 4) != 0)
            throw std::runtime_error("bind");
        socklen_t len = sizeof a;
        ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len);
        return {{"Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0}, "tcp -h 127.0.0.1 -p " + std::to_string(ntohs(a.sin_port)),
                0, socket_kind::stream};
    }

    takeover_hooks hooks(const listener_record& record) {
        return takeover_hooks{
            [this, record] {
                std::vector<inherited_socket> out;
                out.push_back({record, unique_fd(::fcntl(listener.get(), F_DUPFD_CLOEXEC, 0))});
                return out;
            },
            [] { return std::size_t{1}; },
            [this] { return open_sessions.load(); },
            [] {},
            [this](std::size_t) {
                std::lock_guard lock(mutex);
                std::vector<std::pair<takeover_session, unique_fd>> out;
                if (std::exchange(offered_, true)) return out;
                for (std::size_t i = 0; i < offer_.size(); ++i)
                    out.emplace_back(offer_[i], unique_fd(::fcntl(near[i].get(), F_DUPFD_CLOEXEC, 0)));
                return out;
            },
            [this](const takeover_session& s) {
                std::lock_guard lock(mutex);
                moved.push_back(s.category);
                --open_sessions;
            },
            [this](takeover_session s, unique_fd fd) {
                std::lock_guard lock(mutex);
                EXPECT_TRUE(fd) << "a session that stays comes back with its descriptor";
                kept.push_back(s.category);
                --open_sessions;  // stays, but counted out here so that the server stops looking
            },
            std::chrono::milliseconds(5000),
            {}, {}, {}, {}, {},  // no topic service
        };
    }

    std::vector<takeover_session> offer_;
    bool offered_ = false;  // guarded by mutex
};

}  // namespace moraine::net::test
