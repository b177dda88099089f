// takeover_server::move_sessions + takeover_client::receive_session_batches, in one process: after the
// listeners, sessions offered by the server's hooks arrive with their descriptor (the same
// connection: bytes written at its peer are read from the descriptor received); a session the
// new side refuses goes back to the old side's `keep` hook with its reason logged, a taken one
// to `moved`; sessions_done ends the exchange with the counts; no descriptor is left open.
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/takeover_server.hpp>

#include "open_descriptors.hpp"

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

/// Both ends of a connected stream socket pair: `near` plays the moved client connection, `far` the client.
struct connection_pair {
    net::unique_fd near, far;
    connection_pair() {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
        near.reset(fds[0]);
        far.reset(fds[1]);
    }
};

/// A server whose hooks offer two sessions once, then report none left after they are settled.
struct session_fixture {
    std::filesystem::path dir;
    std::string path;
    net::unique_fd listener{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    connection_pair first, second;
    std::mutex mutex;
    bool offered = false;
    std::vector<std::string> moved, kept;
    std::atomic<std::uint32_t> open_sessions{2};
    std::unique_ptr<net::takeover_server> server;

    session_fixture() {
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
        std::string tmpl = (std::filesystem::temp_directory_path() / "moraine-takeover-sessions-XXXXXX").string();
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
            [this](std::size_t) {
                std::lock_guard lock(mutex);
                std::vector<std::pair<net::takeover_session, net::unique_fd>> out;
                if (std::exchange(offered, true)) return out;
                for (auto* c : {&first, &second}) {
                    net::takeover_session s;
                    s.category = c == &first ? "!refuse-me-aaaaaaaaa" : "\"take-me-aaaaaaaaaaa";
                    s.user_id = c == &first ? "bob" : "alice";
                    s.idle_ms = 5;
                    out.emplace_back(std::move(s), net::unique_fd(::fcntl(c->near.get(), F_DUPFD_CLOEXEC, 0)));
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
                EXPECT_TRUE(fd) << "a refused session comes back with its descriptor";
                kept.push_back(s.category);
                --open_sessions;  // stays, but counted out here so that the server stops looking
            },
            std::chrono::milliseconds(5000),
        };
        server = std::make_unique<net::takeover_server>(path, "old-router", std::move(hooks));
        server->start();
    }
    ~session_fixture() {
        server.reset();
        std::filesystem::remove_all(dir);
    }
};

}  // namespace

TEST(takeover_sessions, sessions_arrive_with_their_connection_and_a_refusal_goes_back) {
    const int before = net::test::open_descriptors();
    {
        session_fixture f;
        net::takeover_client c(f.path);
        auto offer = c.request("new-router");
        ASSERT_EQ(offer.sockets.size(), 1u);
        c.accept(1);

        std::vector<std::string> seen;
        std::string read_through_second;
        const auto got = c.receive_session_batches(
            one_by_one([&](const net::takeover_session& s, net::unique_fd fd) -> std::string {
                seen.push_back(s.user_id);
                EXPECT_EQ(s.idle_ms, 5u);
                if (s.user_id == "bob") return "a category already in use here";
                // The descriptor is the same connection: what its peer writes is read here.
                EXPECT_EQ(::write(f.second.far.get(), "Ice", 3), 3);
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
