// takeover_server::move_sessions sends several sessions before it reads their answers (a window),
// and takeover_client::receive_session_batches adopts those waiting together: every session is
// answered once, by its serial, in order; a refusal goes back to the old side. If the new side
// vanishes without answering, every session sent and not answered is given up by the old side
// (`moved`: the new side may serve it), every one never sent stays (`keep`); a session too large
// for a message stays and the others still move; no descriptor leaks.
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/takeover_server.hpp>

#include "open_descriptors.hpp"
#include "takeover_fixture.hpp"

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

/// The old side offers `n` sessions at once (category_of(i)); `too_large`: the index of one whose
/// message the encoder refuses (none by default).
net::test::takeover_fixture window_fixture(std::size_t n, std::size_t too_large = SIZE_MAX) {
    std::vector<net::takeover_session> offer(n);
    for (std::size_t i = 0; i < n; ++i) {
        offer[i].category = category_of(i);
        offer[i].user_id = "user";
        if (i == too_large) offer[i].pending.resize(600 * 1024);  // above the 512 KiB a message may carry
    }
    return net::test::takeover_fixture(std::move(offer), "window");
}

}  // namespace

TEST(takeover_window, many_sessions_are_sent_ahead_and_answered_by_serial) {
    constexpr std::size_t n = 300;
    const int before = net::test::open_descriptors();
    {
        auto f = window_fixture(n);
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
        auto f = window_fixture(n);
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
        auto f = window_fixture(n, 40);
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
