// socket_buffers: Ice.TCP.SndSize / RcvSize on a socket, and on every connection a listener
// accepts. Linux reports twice the size it grants, some kernels the size itself (both are
// accepted); the test sizes are far below any net.core.wmem_max / rmem_max default, and none is
// a kernel's default size (16 KiB send, 128 KiB receive on Linux), so a size not set shows.
#include "loop_harness.hpp"

#include <moraine/net/listener.hpp>
#include <moraine/net/socket_buffers.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

/// The size the kernel reports for a request of `bytes`: the size, or twice it (Linux).
bool granted(int reported, int bytes) { return reported == bytes || reported == 2 * bytes; }

int send_buffer(net::tcp::socket& s) {
    net::asio::socket_base::send_buffer_size o;
    s.get_option(o);
    return o.value();
}

int receive_buffer(net::tcp::socket& s) {
    net::asio::socket_base::receive_buffer_size o;
    s.get_option(o);
    return o.value();
}

}  // namespace

TEST(socket_buffers, sets_what_is_configured_and_leaves_the_rest_to_the_kernel) {
    net::asio::io_context io;
    net::tcp::socket s(io);
    s.open(net::tcp::v4());
    const int default_receive = receive_buffer(s);
    net::runtime_config cfg;
    cfg.tcp_send_buffer = 48 * 1024;
    net::apply_socket_buffers(s, cfg);
    EXPECT_TRUE(granted(send_buffer(s), 48 * 1024)) << send_buffer(s);
    EXPECT_EQ(receive_buffer(s), default_receive) << "0: the kernel's";
    cfg.tcp_receive_buffer = 40 * 1024;
    net::apply_socket_buffers(s, cfg);
    EXPECT_TRUE(granted(receive_buffer(s), 40 * 1024)) << receive_buffer(s);
}

TEST(socket_buffers, every_accepted_connection_gets_them) {
    auto shards = test::owned_shards(1, [](net::runtime_config& c) { c.tcp_send_buffer = 32 * 1024; });
    auto& sh = shards->at(0);
    auto acceptor = net::bind_listener(sh, *protocol::endpoint_from_string("tcp -h 127.0.0.1 -p 0"));
    const auto port = acceptor.local_endpoint().port();
    std::optional<int> accepted_send_buffer;
    net::start_accepting(sh, std::move(acceptor), net::transport_kind::tcp, [&](net::shard&, net::transport t) {
        accepted_send_buffer = send_buffer(t.socket());
    });
    net::asio::io_context client_io;
    net::tcp::socket c(client_io);
    c.connect({net::asio::ip::make_address("127.0.0.1"), port});
    ASSERT_TRUE(test::run_until(*shards, [&] { return accepted_send_buffer.has_value(); }));
    EXPECT_TRUE(granted(*accepted_send_buffer, 32 * 1024)) << *accepted_send_buffer;
    sh.begin_drain();
    test::settle(*shards);
}
