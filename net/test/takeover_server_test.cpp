// takeover_server + takeover_client, in one process: a takeover hands a real listening socket
// over and calls release and handed_over once; garbage, another version, descriptors sent to
// the server, a client that refuses or vanishes: each leaves the server serving the next
// takeover, with no descriptor left open. The socket is mode 0600; a stale one is replaced, a
// live one refused; nobody listening (or a stopped server) is takeover_unreachable.
#include <moraine/net/takeover_client.hpp>
#include <moraine/net/takeover_server.hpp>

#include "open_descriptors.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

using moraine::net::test::open_descriptors;

/// Whether the open descriptors come back to `n` within 2 s (the server closes a channel just
/// after its last answer).
bool settles_to(int n) {
    for (int i = 0; i < 200 && open_descriptors() != n; ++i) std::this_thread::sleep_for(10ms);
    return open_descriptors() == n;
}

/// A listening TCP socket on 127.0.0.1, port chosen by the kernel.
struct tcp_listener {
    net::unique_fd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    unsigned short port = 0;
    tcp_listener() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd.get(), 8) != 0)
            throw std::runtime_error("bind");
        socklen_t len = sizeof a;
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
    }
    net::listener_record record() const {
        return {{"Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0}, "tcp -h 127.0.0.1 -p " + std::to_string(port), 0,
                net::socket_kind::stream};
    }
};

/// A server on a fresh path whose hooks share `listener` and count what they are asked.
struct fixture {
    std::filesystem::path dir;
    std::string path;
    tcp_listener listener;
    std::atomic<int> shared{0}, released{0}, handed{0};
    std::unique_ptr<net::takeover_server> server;

    fixture() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "moraine-takeover-test-XXXXXX").string();
        dir = ::mkdtemp(tmpl.data());
        path = (dir / "takeover.sock").string();
        server = make();
        server->start();
    }
    ~fixture() {
        server.reset();
        std::filesystem::remove_all(dir);
    }
    std::unique_ptr<net::takeover_server> make() {
        net::takeover_hooks hooks{
            [this] {
                ++shared;
                std::vector<net::inherited_socket> out;
                out.push_back({listener.record(), net::unique_fd(::fcntl(listener.fd.get(), F_DUPFD_CLOEXEC, 0))});
                return out;
            },
            [this] {
                ++released;
                return std::size_t{1};
            },
            [] { return std::uint32_t{3}; },
            [this] { ++handed; },
            {}, {}, {}, {},  // no session moves here (takeover_sessions_test)
            {}, {}, {}, {}, {},  // nor any topic service
        };
        return std::make_unique<net::takeover_server>(path, "old-router", std::move(hooks));
    }
    /// A raw seqpacket connection to the server.
    net::unique_fd raw() const {
        net::unique_fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("connect");
        return s;
    }
    /// The server's answer on `s`, which must be a refusal; returns its reason.
    static std::string refusal(int s) {
        auto m = net::decode_takeover(net::receive_packet(s, net::takeover_message_max, 0, 5s).bytes);
        auto* no = std::get_if<net::takeover_refuse>(&m);
        return no ? no->reason : std::string("not a refusal: ") + net::takeover_name(m);
    }
    /// A complete takeover through the client; returns what the server released.
    net::takeover_released take_over() {
        net::takeover_client c(path);
        auto offer = c.request("new-router");
        EXPECT_EQ(offer.program, "old-router");
        EXPECT_EQ(offer.pid, static_cast<std::uint32_t>(::getpid()));
        EXPECT_EQ(offer.sockets.size(), 1u);
        return c.accept(static_cast<std::uint32_t>(offer.sockets.size()));
    }
};

std::vector<std::byte> text(std::string_view s) {
    std::vector<std::byte> out;
    for (char c : s) out.push_back(static_cast<std::byte>(c));
    return out;
}

}  // namespace

TEST(takeover_server, hands_a_listening_socket_over_and_releases_once_accepted) {
    fixture f;
    struct stat st{};
    ASSERT_EQ(::stat(f.path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "owner only";

    net::takeover_client c(f.path);
    auto offer = c.request("new-router");
    ASSERT_EQ(offer.sockets.size(), 1u);
    EXPECT_EQ(offer.sockets[0].record, f.listener.record());
    EXPECT_EQ(f.released.load(), 0) << "nothing released before the new process accepts";
    // The descriptor received is the same listening socket: a connection to its port shows in it.
    sockaddr_in got{};
    socklen_t len = sizeof got;
    ASSERT_EQ(::getsockname(offer.sockets[0].fd.get(), reinterpret_cast<sockaddr*>(&got), &len), 0);
    EXPECT_EQ(ntohs(got.sin_port), f.listener.port);

    const auto released = c.accept(1);
    EXPECT_EQ(released.closed, 1u);
    EXPECT_EQ(released.sessions, 3u);
    EXPECT_EQ(f.released.load(), 1);
    EXPECT_TRUE(f.server->handed_over());
    for (int i = 0; i < 100 && f.handed.load() == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(f.handed.load(), 1);
    EXPECT_THROW(net::takeover_client{f.path}, net::takeover_unreachable) << "one takeover, then it stops listening";
}

TEST(takeover_server, garbage_another_version_and_stray_descriptors_are_refused_and_it_goes_on) {
    fixture f;
    const int before = open_descriptors();
    {
        auto s = f.raw();
        net::send_packet(s.get(), text("GET / HTTP/1.1\r\n\r\n"));
        EXPECT_NE(fixture::refusal(s.get()).find("MRTK"), std::string::npos);
    }
    {
        auto s = f.raw();
        auto hello = net::encode_takeover(net::takeover_hello{"router from the future", 1});
        hello[4] = std::byte{4};
        net::send_packet(s.get(), hello);
        const auto why = fixture::refusal(s.get());
        EXPECT_NE(why.find("version 4"), std::string::npos) << why;
    }
    {
        auto s = f.raw();  // a hello carrying descriptors: they are closed on arrival
        const int fds[] = {s.get(), s.get(), s.get()};
        net::send_packet(s.get(), net::encode_takeover(net::takeover_hello{"x", 1}), fds);
        EXPECT_NE(fixture::refusal(s.get()).find("descriptors"), std::string::npos);
    }
    {
        auto s = f.raw();  // an accept out of turn
        net::send_packet(s.get(), net::encode_takeover(net::takeover_accept{1}));
        EXPECT_NE(fixture::refusal(s.get()).find("expected a hello"), std::string::npos);
    }
    {
        auto s = f.raw();  // a truncated hello
        auto hello = net::encode_takeover(net::takeover_hello{"x", 1});
        hello.resize(hello.size() - 2);
        net::send_packet(s.get(), hello);
        EXPECT_NE(fixture::refusal(s.get()).find("truncated"), std::string::npos);
    }
    EXPECT_EQ(f.shared.load(), 0);
    EXPECT_TRUE(settles_to(before)) << "no descriptor left behind";
    EXPECT_EQ(f.take_over().closed, 1u) << "a good takeover still works";
}

TEST(takeover_server, a_refusing_or_vanishing_new_process_leaves_it_serving) {
    fixture f;
    const int before = open_descriptors();
    {
        net::takeover_client c(f.path);
        auto offer = c.request("new-router");
        c.refuse("configuration differs");
    }
    {
        net::takeover_client c(f.path);
        auto offer = c.request("new-router");
    }  // closes without a word
    for (int i = 0; i < 200 && f.shared.load() < 2; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(f.shared.load(), 2);
    EXPECT_EQ(f.released.load(), 0);
    EXPECT_FALSE(f.server->handed_over());
    EXPECT_TRUE(settles_to(before)) << "the duplicates shared and refused are all closed";
    EXPECT_EQ(f.take_over().closed, 1u);
}

TEST(takeover_server, stale_socket_is_replaced_live_one_refused) {
    fixture f;
    EXPECT_THROW(f.make(), std::runtime_error) << "a server listens there";
    f.server.reset();
    EXPECT_FALSE(std::filesystem::exists(f.path)) << "an orderly stop removes its socket";
    // A stale socket file (its process died): replaced.
    {
        net::unique_fd s(::socket(AF_UNIX, SOCK_SEQPACKET, 0));
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, f.path.c_str(), sizeof a.sun_path - 1);
        ASSERT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    }
    ASSERT_TRUE(std::filesystem::exists(f.path));
    EXPECT_NO_THROW(f.make());
}

TEST(takeover_server, once_stopped_a_new_router_finds_nobody) {
    fixture f;
    f.server->stop();  // the router drains on SIGTERM: no takeover any more
    EXPECT_THROW(net::takeover_client{f.path}, net::takeover_unreachable) << "refused at once, not left waiting";
    EXPECT_EQ(f.shared.load(), 0);
}

TEST(takeover_client, nobody_listening_is_unreachable) {
    EXPECT_THROW(net::takeover_client{"/nonexistent/moraine/takeover.sock"}, net::takeover_unreachable);
}
