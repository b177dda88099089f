// inherited_listeners: take() hands each endpoint's sockets over once, in shard order;
// check_same_listeners names an endpoint only one side has; check_descriptors refuses a
// descriptor that is not the socket its record says.
#include <moraine/net/inherited_listeners.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <functional>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

net::listener_record record(std::string adapter, std::string endpoint, std::uint32_t shard, std::string bound = "") {
    return {{std::move(adapter), std::move(endpoint), 0}, std::move(bound), shard, net::socket_kind::stream};
}

std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
        return "";
    } catch (const net::channel_error& e) {
        return e.what();
    }
}

net::unique_fd tcp_socket(bool listening) {
    net::unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (listening) ::listen(fd.get(), 4);
    return fd;
}

unsigned short port_of(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}

}  // namespace

TEST(inherited_listeners, take_gives_each_endpoints_sockets_once_in_shard_order) {
    std::vector<net::inherited_socket> sockets;
    sockets.push_back({record("Glacier2.Client", "tcp -p 1", 1), {}});
    sockets.push_back({record("Glacier2.Server", "tcp -p 2", 0), {}});
    sockets.push_back({record("Glacier2.Client", "tcp -p 1", 0), {}});
    net::inherited_listeners held(std::move(sockets));
    auto client = held.take({"Glacier2.Client", "tcp -p 1", 0});
    ASSERT_EQ(client.size(), 2u);
    EXPECT_EQ(client[0].record.shard, 0u);
    EXPECT_EQ(client[1].record.shard, 1u);
    EXPECT_TRUE(held.take({"Glacier2.Client", "tcp -p 1", 0}).empty()) << "taken once";
    ASSERT_EQ(held.left().size(), 1u);
    EXPECT_EQ(held.left()[0].id.adapter, "Glacier2.Server");
}

TEST(inherited_listeners, check_same_listeners_names_the_difference) {
    const std::vector<net::listener_record> offered{record("Glacier2.Client", "tcp -h * -p 4063", 0),
                                                    record("Glacier2.Client", "tcp -h * -p 4063", 1),
                                                    record("Glacier2.Server", "tcp -h 127.0.0.1 -p 0", 0)};
    const std::vector<net::listener_id> same{{"Glacier2.Client", "tcp -h * -p 4063", 0},
                                             {"Glacier2.Server", "tcp -h 127.0.0.1 -p 0", 0}};
    EXPECT_EQ(error_of([&] { net::check_same_listeners(offered, same); }), "");

    auto moved = same;
    moved[0].endpoint = "tcp -h * -p 4064";
    const auto why = error_of([&] { net::check_same_listeners(offered, moved); });
    EXPECT_NE(why.find("this configuration listens on Glacier2.Client 'tcp -h * -p 4064'"), std::string::npos) << why;

    auto fewer = same;
    fewer.pop_back();
    const auto why2 = error_of([&] { net::check_same_listeners(offered, fewer); });
    EXPECT_NE(why2.find("the running router listens on Glacier2.Server"), std::string::npos) << why2;
}

TEST(inherited_listeners, check_descriptors_refuses_what_is_not_the_socket_named) {
    auto listening = tcp_socket(true);
    const auto port = std::to_string(port_of(listening.get()));
    auto rec = record("Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0, "tcp -h 127.0.0.1 -p " + port);
    std::vector<net::inherited_socket> ok;
    ok.push_back({rec, std::move(listening)});
    EXPECT_EQ(error_of([&] { net::check_descriptors(ok); }), "");

    std::vector<net::inherited_socket> idle;
    auto bound = tcp_socket(false);
    idle.push_back({record("Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0,
                           "tcp -h 127.0.0.1 -p " + std::to_string(port_of(bound.get()))),
                    std::move(bound)});
    EXPECT_NE(error_of([&] { net::check_descriptors(idle); }).find("not listening"), std::string::npos);

    std::vector<net::inherited_socket> elsewhere;
    auto other = tcp_socket(true);
    elsewhere.push_back({record("Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0, "tcp -h 127.0.0.1 -p 1"), std::move(other)});
    EXPECT_NE(error_of([&] { net::check_descriptors(elsewhere); }).find("not to tcp -h 127.0.0.1 -p 1"), std::string::npos);

    std::vector<net::inherited_socket> not_a_socket;
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    ::close(p[1]);
    not_a_socket.push_back({rec, net::unique_fd(p[0])});
    EXPECT_NE(error_of([&] { net::check_descriptors(not_a_socket); }).find("not a stream socket"), std::string::npos);
}
