// takeover_server::move_sessions sends several sessions before it reads their answers (a window),
// and takeover_client::receive_session_batches adopts those waiting together: every session is
// answered once, by its serial, in order; a refusal goes back to the old side. If the new side
// vanishes without answering, every session sent and not answered is given up by the old side
// (`moved`: the new side may serve it), every one never sent stays (`keep`); a session too large
// for a message stays and the others still move; no descriptor leaks.
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/takeover_server.hpp>

#include "open_descriptors.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <thread>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

std::string category_of(std::size_t i) { return "session-" + std::to_string(1000 + i); }

/// A server whose hooks offer `n` sessions at once (each on its own socket pair), then none.
struct window_fixture {
    std::filesystem::path dir;
    std::string path;
    net::unique_fd listener{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    std::vector<net::unique_fd> near, far;
    std::mutex mutex;
    bool offered = false;
    std::vector<std::string> moved, kept;
    std::atomic<std::uint32_t> open_sessions;
    std::unique_ptr<net::takeover_server> server;

    /// `too_large`: the index of a session whose message the encoder refuses (none by default).
    explicit window_fixture(std::size_t n, std::size_t too_large = SIZE_MAX)
        : open_sessions(static_cast<std::uint32_t>(n)) {
        for (std::size_t i = 0; i < n; ++i) {
            int fds[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
            near.emplace_back(fds[0]);
            far.emplace_back(fds[1]);
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener.get(), 4) != 0)
            throw std::runtime_error("bind");
        socklen_t len = sizeof a;
        ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len);
        const net::listener_record record{{"Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0},
                                          "tcp -h 127.0.0.1 -p " + std::to_string(ntohs(a.sin_port)), 0,
                                          net::socket_kind::stream};
        std::string tmpl = (std::filesystem::temp_directory_path() / "moraine-takeover-window-XXXXXX").string();
        dir = ::mkdtemp(tmpl.data());
        path = (dir / "takeover.sock").string();
        net::takeover_hooks hooks{
            [this, record] {
                std::vector<net::inherited_socket> out;
                out.push_back({record, net::unique_fd(::fcntl(listener.get(), F_DUPFD_CLOEXEC, 0))});
                return out;
            },
            [] { return std::size_t{1}; },
            [this] { return open_sessions.load(); },
            [] {},
            [this, too_large](std::size_t) {
                std::lock_guard lock(mutex);
                std::vector<std::pair<net::takeover_session, net::unique_fd>> out;
                if (std::exchange(offered, true)) return out;
                for (std::size_t i = 0; i < near.size(); ++i) {
                    net::takeover_session s;
                    s.category = category_of(i);
                    s.user_id = "user";
                    if (i == too_large) s.pending.resize(600 * 1024);  // above the 512 KiB a message may carry
                    out.emplace_back(std::move(s), net::unique_fd(::fcntl(near[i].get(), F_DUPFD_CLOEXEC, 0)));
                }
                return out;
            },
            [this](const net::takeover_session& s) {
                std::lock_guard lock(mutex);
                moved.push_back(s.category);
                --open_sessions;
            },
            [this](net::takeover_session s, net::unique_fd fd) {
                std::lock_guard lock(mutex);
                EXPECT_TRUE(fd) << "a session that stays comes back with its descriptor";
                kept.push_back(s.category);
                --open_sessions;  // stays, but counted out here so that the server stops looking
            },
            std::chrono::milliseconds(5000),
        };
        server = std::make_unique<net::takeover_server>(path, "old-router", std::move(hooks));
        server->start();
    }
    ~window_fixture() {
        server.reset();
        std::filesystem::remove_all(dir);
    }
    /// Waits until the server has settled all `n` sessions.
    void settled(std::size_t n) {
        for (int i = 0; i < 400; ++i) {
            {
                std::lock_guard lock(mutex);
                if (moved.size() + kept.size() >= n) return;
            }
            std::this_thread::sleep_for(5ms);
        }
    }
};

}  // namespace

TEST(takeover_window, many_sessions_are_sent_ahead_and_answered_by_serial) {
    constexpr std::size_t n = 300;
    const int before = net::test::open_descriptors();
    {
        window_fixture f(n);
        net::takeover_client c(f.path);
        c.request("new-router");
        c.accept(1);
        std::vector<std::uint32_t> serials;
        std::size_t largest_batch = 0;
        const auto got = c.receive_session_batches(
            [&](std::vector<std::pair<net::takeover_session, net::unique_fd>>& batch) {
                // The first time, let the old side fill its window before anything is answered.
                if (serials.empty()) std::this_thread::sleep_for(100ms);
                largest_batch = std::max(largest_batch, batch.size());
                std::vector<std::string> why;
                for (auto& [s, fd] : batch) {
                    EXPECT_TRUE(fd);
                    serials.push_back(s.serial);
                    why.push_back(s.serial % 10 == 0 ? "every tenth is refused" : "");
                }
                return why;
            },
            -1, 5000ms, 64);
        EXPECT_TRUE(got.done);
        EXPECT_EQ(got.adopted, n - n / 10);
        EXPECT_EQ(got.refused, n / 10);
        EXPECT_GT(largest_batch, 1u) << "the old side sends ahead of the answers";
        EXPECT_LE(largest_batch, 64u);
        ASSERT_EQ(serials.size(), n);
        for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(serials[i], i + 1);
        f.settled(n);
        std::lock_guard lock(f.mutex);
        EXPECT_EQ(f.moved.size(), n - n / 10);
        EXPECT_EQ(f.kept.size(), n / 10);
        EXPECT_EQ(f.kept.front(), category_of(9));
    }
    EXPECT_EQ(net::test::open_descriptors(), before) << "every descriptor sent or received is closed";
}

TEST(takeover_window, sessions_sent_and_not_answered_are_given_up_the_rest_stay) {
    constexpr std::size_t n = 200;
    const int before = net::test::open_descriptors();
    {
        window_fixture f(n);
        {
            net::takeover_client c(f.path);
            c.request("new-router");
            c.accept(1);
            // The new side vanishes without answering once the old side has filled its window.
            EXPECT_THROW(c.receive_session_batches(
                             [&](std::vector<std::pair<net::takeover_session, net::unique_fd>>&) -> std::vector<std::string> {
                                 std::this_thread::sleep_for(100ms);
                                 throw std::runtime_error("gone");
                             },
                             -1, 5000ms, 1),
                         std::runtime_error);
        }
        f.settled(n);
        std::lock_guard lock(f.mutex);
        ASSERT_EQ(f.moved.size() + f.kept.size(), n);
        EXPECT_GT(f.moved.size(), 1u) << "several were in flight";
        EXPECT_GT(f.kept.size(), 0u) << "those never sent stay";
        // The ones given up are the first sent; those kept come after them, none twice.
        for (std::size_t i = 0; i < f.moved.size(); ++i) EXPECT_EQ(f.moved[i], category_of(i));
        for (std::size_t i = 0; i < f.kept.size(); ++i) EXPECT_EQ(f.kept[i], category_of(f.moved.size() + i));
    }
    EXPECT_EQ(net::test::open_descriptors(), before) << "every descriptor sent or received is closed";
}

TEST(takeover_window, a_session_too_large_for_a_message_stays_the_others_move) {
    constexpr std::size_t n = 100;
    const int before = net::test::open_descriptors();
    {
        window_fixture f(n, 40);
        net::takeover_client c(f.path);
        c.request("new-router");
        c.accept(1);
        std::vector<std::uint32_t> serials;
        const auto got = c.receive_session_batches(
            [&](std::vector<std::pair<net::takeover_session, net::unique_fd>>& batch) {
                for (auto& s : batch) serials.push_back(s.first.serial);
                return std::vector<std::string>(batch.size());
            },
            -1, 5000ms, 64);
        EXPECT_TRUE(got.done);
        EXPECT_EQ(got.adopted, n - 1);
        ASSERT_EQ(serials.size(), n - 1);
        for (std::size_t i = 0; i < serials.size(); ++i) EXPECT_EQ(serials[i], i + 1) << "no gap for the one kept";
        f.settled(n);
        std::lock_guard lock(f.mutex);
        EXPECT_EQ(f.moved.size(), n - 1);
        EXPECT_EQ(f.kept, (std::vector<std::string>{category_of(40)}));
    }
    EXPECT_EQ(net::test::open_descriptors(), before) << "every descriptor sent or received is closed";
}
