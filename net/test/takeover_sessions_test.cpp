// takeover_server::move_sessions + takeover_client::receive_session_batches, in one process: after the
// listeners, sessions offered by the server's hooks arrive with their descriptor (the same
// connection: bytes written at its peer are read from the descriptor received); a session the
// new side refuses goes back to the old side's `keep` hook with its reason logged, a taken one
// to `moved`; sessions_done ends the exchange with the counts; no descriptor is left open.
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/takeover_server.hpp>

#include "open_descriptors.hpp"
#include "takeover_fixture.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

/// A batch adopter that adopts each session of a batch through `adopt`, in order.
template <class Adopt>
net::takeover_client::session_batch_adopter one_by_one(Adopt adopt) {
    return [adopt](std::vector<std::pair<net::takeover_session, net::unique_fd>>& batch) {
        std::vector<std::string> why;
        for (auto& [s, fd] : batch) why.push_back(adopt(s, std::move(fd)));
        return why;
    };
}

/// The old side offers bob's session (refused by the tests' new side) and alice's.
net::test::takeover_fixture session_fixture() {
    std::vector<net::takeover_session> offer(2);
    offer[0].category = "!refuse-me-aaaaaaaaa";
    offer[0].user_id = "bob";
    offer[1].category = "\"take-me-aaaaaaaaaaa";
    offer[1].user_id = "alice";
    for (auto& s : offer) s.idle_ms = 5;
    return net::test::takeover_fixture(std::move(offer), "sessions");
}

}  // namespace

TEST(takeover_sessions, sessions_arrive_with_their_connection_and_a_refusal_goes_back) {
    const int before = net::test::open_descriptors();
    {
        auto f = session_fixture();
        net::takeover_client c(f.path);
        auto offer = c.request("new-router");
        ASSERT_EQ(offer.sockets.size(), 1u);
        c.accept(1);
        // From the handover until the moves end: the old router's drain waits for it.
        EXPECT_TRUE(f.server->moving());

        std::vector<std::string> seen;
        std::string read_through_second;
        const auto got = c.receive_session_batches(
            one_by_one([&](const net::takeover_session& s, net::unique_fd fd) -> std::string {
                seen.push_back(s.user_id);
                EXPECT_EQ(s.idle_ms, 5u);
                if (s.user_id == "bob") return "a category already in use here";
                // The descriptor is the same connection: what its peer writes is read here.
                EXPECT_EQ(::write(f.far[1].get(), "Ice", 3), 3);
                char buf[3];
                EXPECT_EQ(::read(fd.get(), buf, 3), 3);
                read_through_second.assign(buf, 3);
                return {};
            }),
            -1, 5000ms, 1);
        EXPECT_EQ(seen, (std::vector<std::string>{"bob", "alice"}));
        EXPECT_EQ(read_through_second, "Ice");
        EXPECT_TRUE(got.done);
        EXPECT_EQ(got.adopted, 1u);
        EXPECT_EQ(got.refused, 1u);
        EXPECT_GT(got.bytes, net::takeover_header_bytes);
        for (int i = 0; i < 200 && f.server->moving(); ++i) std::this_thread::sleep_for(5ms);
        EXPECT_FALSE(f.server->moving()) << "sessions_done sent: the moves are over";
        for (int i = 0; i < 200; ++i) {
            std::lock_guard lock(f.mutex);
            if (f.moved.size() + f.kept.size() == 2) break;
            std::this_thread::sleep_for(5ms);
        }
        std::lock_guard lock(f.mutex);
        EXPECT_EQ(f.moved, (std::vector<std::string>{"\"take-me-aaaaaaaaaaa"}));
        EXPECT_EQ(f.kept, (std::vector<std::string>{"!refuse-me-aaaaaaaaa"}));
    }
    EXPECT_EQ(net::test::open_descriptors(), before) << "every descriptor sent or received is closed";
}
