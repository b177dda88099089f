// shard_set: the shards and their threads. Checked: one shard per configured thread, work posted
// with invoke_on runs on the target shard's own thread, call_on waits for it and rethrows, the per-address connection limit,
// listen() on port 0 sharing one real port across shards, two sets sharing one port with
// port_sharing::shared (and refused without it), stop hooks run at stop, and a takeover:
// sockets shared by one set, adopted by another, released by the first.
#include "loop_harness.hpp"

#include <moraine/net/connection_origin.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>

using namespace moraine;
using namespace std::chrono_literals;

TEST(shard_set, makes_one_shard_per_thread_with_its_index) {
    net::shard_set shards(test::runtime(3));
    ASSERT_EQ(shards.size(), 3u);
    for (unsigned i = 0; i < 3; ++i) {
        EXPECT_EQ(shards.at(i).index(), i);
        EXPECT_EQ(&shards.at(i).set(), &shards);
        EXPECT_EQ(shards.at(i).budget(), &shards.budget());
    }
}

TEST(shard_set, invoke_on_runs_on_the_target_shards_thread) {
    net::shard_set shards(test::runtime(2));
    shards.start();
    std::promise<std::thread::id> on0, on1;
    std::promise<unsigned> index1;
    shards.invoke_on(0, [&](net::shard&) { on0.set_value(std::this_thread::get_id()); });
    shards.invoke_on(1, [&](net::shard& sh) {
        index1.set_value(sh.index());
        on1.set_value(std::this_thread::get_id());
    });
    auto f0 = on0.get_future(), f1 = on1.get_future();
    auto fi = index1.get_future();
    ASSERT_EQ(f0.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    ASSERT_EQ(f1.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(fi.get(), 1u);
    const auto t0 = f0.get(), t1 = f1.get();
    EXPECT_NE(t0, t1) << "two shards, two threads";
    EXPECT_NE(t0, std::this_thread::get_id());
    EXPECT_NE(t1, std::this_thread::get_id());
    shards.stop();
    shards.join();
}

TEST(shard_set, call_on_waits_for_the_shard_and_rethrows_what_it_threw) {
    net::shard_set shards(test::runtime(2));
    shards.start();
    std::thread::id ran_on;
    unsigned index = 9;
    shards.call_on(1, [&](net::shard& sh) {
        ran_on = std::this_thread::get_id();
        index = sh.index();
    });
    // call_on returned: the function has run, on shard 1's thread.
    EXPECT_EQ(index, 1u);
    EXPECT_NE(ran_on, std::thread::id());
    EXPECT_NE(ran_on, std::this_thread::get_id());
    EXPECT_THROW(shards.call_on(0, [](net::shard&) { throw std::invalid_argument("refused"); }), std::invalid_argument);
    // The shard serves on after a throw.
    bool again = false;
    shards.call_on(0, [&](net::shard&) { again = true; });
    EXPECT_TRUE(again);
    shards.stop();
    shards.join();
}

TEST(shard_set, work_crossing_shards_comes_back_to_the_sender) {
    net::shard_set shards(test::runtime(2));
    shards.start();
    std::promise<unsigned> back;
    // Shard 0 asks shard 1, which answers on shard 0: the pattern of a callback reply.
    shards.invoke_on(0, [&shards, &back](net::shard&) {
        shards.invoke_on(1, [&shards, &back](net::shard& there) {
            const unsigned from = there.index();
            shards.invoke_on(0, [&back, from](net::shard& home) { back.set_value(from * 10 + home.index()); });
        });
    });
    auto f = back.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(f.get(), 10u);
    shards.stop();
    shards.join();
}

TEST(shard_set, stop_runs_each_shards_stop_hooks_on_its_thread_and_join_returns) {
    net::shard_set shards(test::runtime(2));
    std::atomic<int> ran{0};
    std::thread::id hook0;
    shards.at(0).on_stop([&] {
        hook0 = std::this_thread::get_id();
        ++ran;
    });
    shards.at(1).on_stop([&] { ++ran; });
    shards.start();
    shards.stop();
    shards.join();
    EXPECT_EQ(ran.load(), 2);
    EXPECT_NE(hook0, std::this_thread::get_id());
    shards.stop();  // idempotent
}

TEST(shard_set, admit_connection_counts_per_address_up_to_the_limit) {
    net::shard_set shards(test::runtime(1, [](net::runtime_config& c) { c.connections_per_address = 2; }));
    const auto a = net::asio::ip::make_address("192.0.2.1"), b = net::asio::ip::make_address("192.0.2.2");
    EXPECT_TRUE(shards.admit_connection(a));
    EXPECT_TRUE(shards.admit_connection(a));
    EXPECT_FALSE(shards.admit_connection(a)) << "a third from the same address";
    EXPECT_TRUE(shards.admit_connection(b)) << "another address has its own count";
    shards.release_connection(a);
    EXPECT_TRUE(shards.admit_connection(a)) << "a closed connection frees its place";
    shards.release_connection(net::asio::ip::make_address("192.0.2.9"));  // never counted: no effect
    EXPECT_FALSE(shards.admit_connection(a));
}

TEST(shard_set, a_moved_connection_is_counted_even_over_the_limit) {
    net::shard_set shards(test::runtime(1, [](net::runtime_config& c) { c.connections_per_address = 1; }));
    const auto a = net::asio::ip::make_address("192.0.2.1");
    EXPECT_TRUE(shards.admit_connection(a));
    EXPECT_TRUE(shards.admit_connection(a, net::connection_origin::moved));  // a takeover brought a second one
    shards.release_connection(a);
    EXPECT_FALSE(shards.admit_connection(a)) << "one is still open";
    shards.release_connection(a);
    EXPECT_TRUE(shards.admit_connection(a)) << "both closed";
}

TEST(shard_set, listen_on_port_zero_binds_one_real_port_on_every_shard) {
    auto shards = test::owned_shards(2);
    std::vector<unsigned> accepted_on;
    auto bound = shards->listen("test", *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 0"),
                                [&](net::shard& sh, net::transport t) {
                                    accepted_on.push_back(sh.index());
                                    EXPECT_FALSE(t.secure());
                                });
    ASSERT_EQ(bound.size(), 1u);
    EXPECT_NE(bound[0].port, 0);
    EXPECT_EQ(bound[0].host, "127.0.0.1");
    // A client connects: one of the shards accepts it and hands it over.
    net::asio::io_context client_io;
    net::tcp::socket client(client_io);
    client.connect({net::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(bound[0].port)});
    ASSERT_TRUE(test::run_until(*shards, [&] { return accepted_on.size() == 1; }));
    EXPECT_LT(accepted_on[0], 2u);
}

namespace {

// Connects `n` clients to 127.0.0.1:`port` (the kernel completes each handshake in a listen
// backlog), then runs both shard sets until every one was accepted by one of them or 5 s passed.
void connect_and_accept(net::asio::io_context& client_io, std::vector<net::tcp::socket>& clients, unsigned short port,
                        int n, net::shard_set& a, net::shard_set* b, const std::function<int()>& accepted) {
    for (int i = 0; i < n; ++i) {
        clients.emplace_back(client_io);
        clients.back().connect({net::asio::ip::make_address("127.0.0.1"), port});
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (accepted() < static_cast<int>(clients.size()) && std::chrono::steady_clock::now() < deadline) {
        test::settle(a);
        if (b) test::settle(*b);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace

// Moraine.Client.ReusePort: two shard sets (two routers) on one port, the kernel spreading the
// connections; without port_sharing::shared the second one is refused, as is sharing a port
// whose listener has no SO_REUSEPORT.
TEST(shard_set, shared_port_is_spread_over_two_sets_and_survives_one) {
    auto a = test::owned_shards(2);
    auto b = test::owned_shards(2);
    int on_a = 0, on_b = 0;
    const auto any = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 0");
    auto bound = a->listen("test", any, [&](net::shard&, net::transport) { ++on_a; }, net::port_sharing::shared);
    const auto port = static_cast<unsigned short>(bound.at(0).port);
    auto same = bound;

    try {
        b->listen("test", same, [](net::shard&, net::transport) {});
        ADD_FAILURE() << "an exclusive listen on a port another set listens on must throw";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), net::asio::error::address_in_use);
    }
    auto again = b->listen("test", same, [&](net::shard&, net::transport) { ++on_b; }, net::port_sharing::shared);
    EXPECT_EQ(again.at(0).port, port);

    net::asio::io_context client_io;
    std::vector<net::tcp::socket> clients;
    connect_and_accept(client_io, clients, port, 64, *a, b.get(), [&] { return on_a + on_b; });
    EXPECT_EQ(on_a + on_b, 64);
    EXPECT_GT(on_a, 0) << "4 sockets in one SO_REUSEPORT group: 64 connections all on one set would be a 2^-63 event";
    EXPECT_GT(on_b, 0);

    a.reset();  // the first "router" exits: its sockets leave the group
    const int before = on_b;
    connect_and_accept(client_io, clients, port, 16, *b, nullptr, [&] { return on_a + on_b; });
    EXPECT_EQ(on_b - before, 16) << "every new connection reaches the set still listening";
}

TEST(shard_set, sharing_a_port_held_without_reuseport_is_refused) {
    net::asio::io_context io;
    net::tcp::acceptor plain(io, {net::asio::ip::make_address("127.0.0.1"), 0});  // no SO_REUSEPORT
    auto shards = test::owned_shards();
    auto ep = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p " + std::to_string(plain.local_endpoint().port()));
    try {
        shards->listen("test", ep, [](net::shard&, net::transport) {}, net::port_sharing::shared);
        ADD_FAILURE() << "must throw";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), net::asio::error::address_in_use);
        EXPECT_NE(std::string(e.what()).find("cannot share"), std::string::npos) << e.what();
    }
}

// Takeover: one set's listening sockets, shared and adopted by a second set with another shard
// count, keep their port, and after the first set releases its copies every new connection
// reaches the second, none refused.
TEST(shard_set, takeover_adopted_sockets_keep_the_port_and_take_every_connection_once_released) {
    std::atomic<int> on_old{0}, on_new{0};
    const auto ep = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 0");
    const auto udp = *protocol::endpoints_from_string("udp -h 127.0.0.1 -p 0");
    auto old_set = std::make_unique<net::shard_set>(test::runtime(2));
    const auto bound = old_set->listen("Glacier2.Client", ep, [&](net::shard&, net::transport) { ++on_old; });
    const auto bound_udp = old_set->listen_datagrams("Glacier2.Server", udp, [](net::shard&, const protocol::request_view&) {});
    old_set->start();

    auto shared = old_set->share_listeners();
    ASSERT_EQ(shared.size(), 4u) << "2 shards x (tcp + udp)";
    std::vector<net::listener_record> records;
    for (const auto& s : shared) records.push_back(s.record);
    EXPECT_NO_THROW(net::check_descriptors(shared));
    EXPECT_NO_THROW(net::check_same_listeners(records, {{"Glacier2.Client", protocol::endpoint_to_string(ep[0]), 0},
                                                        {"Glacier2.Server", protocol::endpoint_to_string(udp[0]), 0}}));

    net::shard_set new_set(test::runtime(3));  // more shards than sockets: the third binds the same port
    new_set.adopt(std::make_unique<net::inherited_listeners>(std::move(shared)));
    const auto adopted = new_set.listen("Glacier2.Client", ep, [&](net::shard&, net::transport) { ++on_new; });
    const auto adopted_udp =
        new_set.listen_datagrams("Glacier2.Server", udp, [](net::shard&, const protocol::request_view&) {});
    EXPECT_EQ(adopted.at(0).port, bound.at(0).port) << "the same port, port 0 in both configurations";
    EXPECT_EQ(adopted_udp.at(0).port, bound_udp.at(0).port);
    EXPECT_TRUE(new_set.inherited_left().empty());
    EXPECT_EQ(new_set.listeners().size(), 6u) << "3 shards x (tcp + udp)";
    new_set.start();

    EXPECT_EQ(old_set->release_listeners(), 4u);
    EXPECT_EQ(old_set->release_listeners(), 0u) << "closed once";
    EXPECT_THROW(old_set->share_listeners(), net::channel_error) << "nothing left to hand over";

    net::asio::io_context client_io;
    std::vector<net::tcp::socket> clients;
    for (int i = 0; i < 32; ++i) {
        clients.emplace_back(client_io);
        boost::system::error_code ec;
        clients.back().connect({net::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(bound[0].port)}, ec);
        EXPECT_FALSE(ec) << "connection " << i << " refused: " << ec.message();
    }
    for (int i = 0; i < 500 && on_new.load() < 32; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(on_new.load(), 32);
    EXPECT_EQ(on_old.load(), 0) << "the old set accepts nothing once released";
    old_set.reset();  // the old process exits: the new one keeps the port
    clients.emplace_back(client_io);
    boost::system::error_code ec;
    clients.back().connect({net::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(bound[0].port)}, ec);
    EXPECT_FALSE(ec) << ec.message();
    for (int i = 0; i < 500 && on_new.load() < 33; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(on_new.load(), 33);
}
