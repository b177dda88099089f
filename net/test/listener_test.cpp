// listener: binding and accepting on a shard. Checked: bind_listener on port 0 gets a real
// port and can be bound again with SO_REUSEPORT (every shard on one port), ensure_port_free
// refusing a port another socket listens on, port_is_free telling it, and start_accepting
// handing each accepted connection to the handler as a transport of the endpoint's kind until
// the acceptor closes (a burst of waiting connections in one go), listen_backlog, and
// adopted_is_ipv4 telling the family of a socket to take over.
#include "loop_harness.hpp"

#include <moraine/net/listener.hpp>
#include <moraine/net/runtime_config.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <vector>

using namespace moraine;

namespace {
protocol::endpoint loopback(unsigned short port) {
    return protocol::endpoints_from_string("tcp -h 127.0.0.1 -p " + std::to_string(port))->at(0);
}
}  // namespace

TEST(listener, port_zero_gets_a_real_port_shared_with_reuseport) {
    auto shards = test::owned_shards(2);
    auto a = net::bind_listener(shards->at(0), loopback(0));
    const auto port = a.local_endpoint().port();
    EXPECT_NE(port, 0);
    auto b = net::bind_listener(shards->at(1), loopback(port));  // the second shard on the same port
    EXPECT_EQ(b.local_endpoint().port(), port);
}

TEST(listener, ensure_port_free_refuses_a_port_in_use) {
    auto shards = test::owned_shards();
    auto taken = net::bind_listener(shards->at(0), loopback(0));
    EXPECT_THROW(net::ensure_port_free(shards->at(0), loopback(taken.local_endpoint().port())),
                 boost::system::system_error);
    EXPECT_NO_THROW(net::ensure_port_free(shards->at(0), loopback(0))) << "port 0: the kernel picks";
}

TEST(listener, port_is_free_tells_a_port_in_use) {
    auto shards = test::owned_shards();
    auto taken = net::bind_listener(shards->at(0), loopback(0));
    const auto port = taken.local_endpoint().port();
    EXPECT_FALSE(net::port_is_free(shards->at(0), loopback(port)));
    EXPECT_TRUE(net::port_is_free(shards->at(0), loopback(0)));
    taken.close();
    EXPECT_TRUE(net::port_is_free(shards->at(0), loopback(port)))
        << "a closed listener frees its port";
}

TEST(listener, start_accepting_hands_each_connection_over_until_closed) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    auto acceptor = net::bind_listener(sh, loopback(0));
    const auto port = acceptor.local_endpoint().port();
    std::vector<net::tcp::endpoint> remotes;
    net::start_accepting(sh, std::move(acceptor), net::transport_kind::tcp, [&](net::shard& on, net::transport t) {
        EXPECT_EQ(&on, &sh);
        EXPECT_TRUE(t.server_side());
        EXPECT_FALSE(t.secure());
        remotes.push_back(t.socket().remote_endpoint());
    });
    net::asio::io_context client_io;
    net::tcp::socket c1(client_io), c2(client_io);
    c1.connect({net::asio::ip::make_address("127.0.0.1"), port});
    c2.connect({net::asio::ip::make_address("127.0.0.1"), port});
    ASSERT_TRUE(test::run_until(*shards, [&] { return remotes.size() == 2; }));
    EXPECT_EQ(remotes[0].port(), c1.local_endpoint().port());
    EXPECT_EQ(remotes[1].port(), c2.local_endpoint().port());
    sh.begin_drain();  // closes the shard's acceptors: accepting stops
    test::settle(*shards);
    net::tcp::socket c3(client_io);
    boost::system::error_code ec;
    c3.connect({net::asio::ip::make_address("127.0.0.1"), port}, ec);
    EXPECT_TRUE(ec) << "nothing listens any more";
}

TEST(listener, a_burst_of_waiting_connections_is_taken_in_one_go) {
    auto shards = test::owned_shards();
    auto& sh = shards->at(0);
    auto acceptor = net::bind_listener(sh, loopback(0));
    const auto port = acceptor.local_endpoint().port();
    // Twenty connections wait in the accept queue before the shard runs (connect returns once
    // the kernel completed the handshake, accepted or not).
    net::asio::io_context client_io;
    std::vector<net::tcp::socket> clients;
    for (int i = 0; i < 20; ++i) {
        clients.emplace_back(client_io);
        clients.back().connect({net::asio::ip::make_address("127.0.0.1"), port});
    }
    std::size_t accepted = 0;
    std::optional<std::size_t> seen_by_next_turn;  // the count a handler posted at the first accept sees
    net::start_accepting(sh, std::move(acceptor), net::transport_kind::tcp, [&](net::shard&, net::transport) {
        if (accepted++ == 0)
            net::asio::post(sh.executor(), [&] { seen_by_next_turn = accepted; });
    });
    ASSERT_TRUE(test::run_until(*shards, [&] { return accepted == 20 && seen_by_next_turn; }));
    EXPECT_EQ(*seen_by_next_turn, 20u) << "every waiting connection before the shard's next handler";
}

TEST(listener, listen_backlog_is_ice_tcp_backlog_else_somaxconn) {
    net::runtime_config cfg;
    EXPECT_EQ(net::listen_backlog(cfg), SOMAXCONN);
    cfg.tcp_backlog = 16384;
    EXPECT_EQ(net::listen_backlog(cfg), 16384);
}

TEST(listener, adopted_is_ipv4_tells_the_family_and_refuses_others) {
    net::unique_fd v4(::socket(AF_INET, SOCK_STREAM, 0));
    net::unique_fd v6(::socket(AF_INET6, SOCK_DGRAM, 0));
    net::unique_fd local(::socket(AF_UNIX, SOCK_STREAM, 0));
    ASSERT_TRUE(v4 && v6 && local);
    EXPECT_TRUE(net::adopted_is_ipv4(v4, "a listener"));
    EXPECT_FALSE(net::adopted_is_ipv4(v6, "a udp socket"));
    try {
        (void)net::adopted_is_ipv4(local, "a listener");
        ADD_FAILURE() << "a Unix socket was accepted";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), boost::system::error_code(net::asio::error::address_family_not_supported));
        EXPECT_NE(std::string(e.what()).find("adopting a listener"), std::string::npos) << e.what();
    }
    net::unique_fd closed;
    EXPECT_THROW((void)net::adopted_is_ipv4(closed, "a listener"), boost::system::system_error);
}
