// transport: a connection's byte stream. Checked: kind_of() for every endpoint type, a plain
// TCP transport's socket moving with it (the address connections keep), the accepting side
// flag, and a TLS kind refused without TLS contexts.
#include "loop_harness.hpp"

#include <moraine/net/transport.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

using namespace moraine;

namespace {
protocol::endpoint ep(const std::string& s) { return protocol::endpoints_from_string(s)->at(0); }
}  // namespace

TEST(transport, kind_of_follows_the_endpoint_type) {
    EXPECT_EQ(net::kind_of(ep("tcp -h 127.0.0.1 -p 1")), net::transport_kind::tcp);
    EXPECT_EQ(net::kind_of(ep("ssl -h 127.0.0.1 -p 1")), net::transport_kind::ssl);
    EXPECT_EQ(net::kind_of(ep("ws -h 127.0.0.1 -p 1")), net::transport_kind::ws);
    EXPECT_EQ(net::kind_of(ep("wss -h 127.0.0.1 -p 1")), net::transport_kind::wss);
    EXPECT_EQ(net::kind_of(ep("udp -h 127.0.0.1 -p 1")), net::transport_kind::tcp) << "anything else";
}

TEST(transport, plain_tcp_keeps_its_socket_when_moved) {
    net::asio::io_context io;
    net::tcp::socket s(io);
    s.open(net::tcp::v4());
    const auto fd = s.native_handle();
    net::transport a(std::move(s), net::transport_kind::tcp, nullptr, true);
    EXPECT_FALSE(a.secure());
    EXPECT_FALSE(a.websocket());
    EXPECT_TRUE(a.server_side());
    EXPECT_EQ(a.contexts(), nullptr);
    net::transport b(std::move(a));
    EXPECT_EQ(b.socket().native_handle(), fd);
    EXPECT_TRUE(b.socket().is_open());
}

TEST(transport, websocket_over_tcp_needs_no_tls) {
    net::asio::io_context io;
    net::transport t(net::tcp::socket(io), net::transport_kind::ws, nullptr, false);
    EXPECT_TRUE(t.websocket());
    EXPECT_FALSE(t.secure());
    EXPECT_FALSE(t.server_side());
}

TEST(transport, tls_without_contexts_is_refused) {
    net::asio::io_context io;
    EXPECT_THROW(net::transport(net::tcp::socket(io), net::transport_kind::ssl, nullptr, true), std::invalid_argument);
    EXPECT_THROW(net::transport(net::tcp::socket(io), net::transport_kind::wss, nullptr, false), std::invalid_argument);
}
