// listener: binding and accepting on a shard. Checked: bind_listener on port 0 gets a real
// port and can be bound again with SO_REUSEPORT (every shard on one port), ensure_port_free
// refusing a port another socket listens on, port_is_free telling it, and start_accepting
// handing each accepted connection to the handler as a transport of the endpoint's kind until
// the acceptor closes.
#include "loop_harness.hpp"

#include <moraine/net/listener.hpp>

#include <gtest/gtest.h>

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
