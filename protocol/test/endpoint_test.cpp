#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

TEST(endpoint, from_string_tcp) {
    const auto e = endpoint_from_string("tcp -h 127.0.0.1 -p 4063 -t 60000 -z");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->type, 1);
    EXPECT_TRUE(e->is_tcp());
    EXPECT_EQ(e->host, "127.0.0.1");
    EXPECT_EQ(e->port, 4063);
    EXPECT_EQ(e->timeout, 60000);
    EXPECT_TRUE(e->compress);
}

TEST(endpoint, from_string_defaults_and_variants) {
    const auto any = endpoint_from_string("tcp -p 4063");
    ASSERT_TRUE(any);
    EXPECT_EQ(any->host, "");
    EXPECT_EQ(any->timeout, 60000);
    EXPECT_FALSE(any->compress);
    EXPECT_EQ(endpoint_from_string("ssl -h * -p 4064")->host, "");
    EXPECT_EQ(endpoint_from_string("ssl -h * -p 4064")->type, 2);
    EXPECT_EQ(endpoint_from_string("tcp -h h -p 1 -t infinite")->timeout, -1);
    const auto ws = endpoint_from_string("wss -h example.com -p 443 -r /ice");
    ASSERT_TRUE(ws);
    EXPECT_EQ(ws->type, 5);
    EXPECT_EQ(ws->resource, "/ice");
    // Without -r, Ice's default resource "/": a client needs a request target for its upgrade.
    EXPECT_EQ(endpoint_from_string("ws -h h -p 80")->resource, "/");
    const auto udp = endpoint_from_string("udp -h 239.255.0.1 -p 10000 -z");
    ASSERT_TRUE(udp);
    EXPECT_EQ(udp->type, 3);
    EXPECT_TRUE(udp->compress);
    const auto v6 = endpoint_from_string("tcp -h \"::1\" -p 10");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(endpoint_from_string("  tcp   -p 1  ")->port, 1);
}

// As Ice reads them (docs/ice-wire.md §9): no -p is port 0 (ephemeral when bound), no -h is
// Ice.Default.Host, and `-h *` is every interface whatever the default.
TEST(endpoint, from_string_as_ice_defaults_port_and_host) {
    const auto bare = endpoint_from_string("tcp");
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->port, 0);
    EXPECT_EQ(bare->host, "");
    const auto host_only = endpoint_from_string("tcp -h 127.0.0.1");
    ASSERT_TRUE(host_only);
    EXPECT_EQ(host_only->port, 0);
    EXPECT_EQ(host_only->host, "127.0.0.1");
    EXPECT_EQ(endpoint_from_string("tcp -p 5", "10.0.0.1")->host, "10.0.0.1");
    EXPECT_EQ(endpoint_from_string("tcp -h h -p 5", "10.0.0.1")->host, "h");
    EXPECT_EQ(endpoint_from_string("tcp -h * -p 5", "10.0.0.1")->host, "");
    const auto list = endpoints_from_string("tcp:ssl -p 7", "127.0.0.1");
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 2u);
    EXPECT_EQ((*list)[0].host, "127.0.0.1");
    EXPECT_EQ((*list)[0].port, 0);
    EXPECT_EQ((*list)[1].host, "127.0.0.1");
    EXPECT_EQ((*list)[1].port, 7);
    const auto proxy = proxy_from_string("SessionManager:tcp -p 12010", "127.0.0.1");
    ASSERT_TRUE(proxy);
    EXPECT_EQ(proxy->endpoints.at(0).host, "127.0.0.1");
}

TEST(endpoint, from_string_errors) {
    EXPECT_FALSE(endpoint_from_string(""));
    EXPECT_FALSE(endpoint_from_string("bt -p 1"));
    EXPECT_FALSE(endpoint_from_string("tcp -p 70000"));
    EXPECT_FALSE(endpoint_from_string("tcp -p x"));
    EXPECT_FALSE(endpoint_from_string("tcp -p"));
    EXPECT_FALSE(endpoint_from_string("tcp -p 1 -t 0"));
    EXPECT_FALSE(endpoint_from_string("tcp -p 1 -t"));
    EXPECT_FALSE(endpoint_from_string("tcp -p 1 -q"));
    EXPECT_FALSE(endpoint_from_string("tcp -p 1 -r /x"));          // -r is ws/wss only
    EXPECT_FALSE(endpoint_from_string("udp -p 1 -t 100"));         // udp has no timeout
    EXPECT_FALSE(endpoint_from_string("tcp -h \"unterminated -p 1"));
}

TEST(endpoint, list_from_string) {
    const auto eps = endpoints_from_string("tcp -h 127.0.0.1 -p 4063:ssl -p 4064 -t 1000: tcp -h \"::1\" -p 5");
    ASSERT_TRUE(eps);
    ASSERT_EQ(eps->size(), 3u);
    EXPECT_EQ((*eps)[1].type, 2);
    EXPECT_EQ((*eps)[1].timeout, 1000);
    EXPECT_EQ((*eps)[2].host, "::1");
    EXPECT_FALSE(endpoints_from_string("tcp -p 1:"));
    EXPECT_FALSE(endpoints_from_string("tcp -p 1:bogus"));
}

TEST(endpoint, to_string_as_ice_prints_it) {
    EXPECT_EQ(endpoint_to_string(*endpoint_from_string("tcp -h 127.0.0.1 -p 41171")), "tcp -h 127.0.0.1 -p 41171 -t 60000");
    EXPECT_EQ(endpoint_to_string(*endpoint_from_string("tcp -p 1 -t infinite -z")), "tcp -p 1 -t infinite -z");
    EXPECT_EQ(endpoint_to_string(*endpoint_from_string("ws -h h -p 80 -r /x")), "ws -h h -p 80 -t 60000 -r /x");
    EXPECT_EQ(endpoint_to_string(*endpoint_from_string("udp -h h -p 9 -z")), "udp -h h -p 9 -z");
    EXPECT_EQ(endpoint_to_string(*endpoint_from_string("tcp -h \"::1\" -p 5")), "tcp -h \"::1\" -p 5 -t 60000");
    endpoint opaque;
    opaque.type = 99;
    opaque.encoding = encoding_1_1;
    opaque.opaque = from_hex("010203");
    EXPECT_EQ(endpoint_to_string(opaque), "opaque -t 99 -e 1.1 -v AQID");
}

TEST(endpoint, string_round_trip) {
    for (const char* s : {"tcp -h 127.0.0.1 -p 4063 -t 60000", "ssl -h a.b -p 1 -t 5 -z", "wss -h h -p 443 -t 60000 -r /ice",
                          "udp -h 239.1.1.1 -p 10000", "tcp -p 0 -t infinite"}) {
        const auto e = endpoint_from_string(s);
        ASSERT_TRUE(e) << s;
        EXPECT_EQ(endpoint_to_string(*e), s);
    }
}

// tcp endpoint bytes from the routed-twoway addProxies (spec §9).
constexpr const char* tcp_1_1 = "0100" "19000000" "0101" "093132372e302e302e31" "d3a00000" "60ea0000" "00";

TEST(endpoint, wire_tcp_1_1) {
    const auto b = from_hex(tcp_1_1);
    input_stream in(b);
    const auto e = read_endpoint(in);
    ASSERT_TRUE(in.ok()) << in.error().message();
    EXPECT_EQ(in.remaining(), 0u);
    EXPECT_EQ(e.host, "127.0.0.1");
    EXPECT_EQ(e.port, 41171);
    EXPECT_EQ(e.timeout, 60000);
    EXPECT_EQ(e.encoding, encoding_1_1);
    output_stream out;
    write_endpoint(out, e);
    EXPECT_EQ(to_hex(out.view()), tcp_1_1);
}

TEST(endpoint, wire_uses_the_stream_encoding_for_known_types) {
    const auto e = *endpoint_from_string("tcp -h 127.0.0.1 -p 41165");
    output_stream out(encoding_1_0);
    write_endpoint(out, e);
    EXPECT_EQ(to_hex(out.view()), "0100" "19000000" "0100" "093132372e302e302e31" "cda00000" "60ea0000" "00");
}

TEST(endpoint, wire_ws_udp_and_opaque_round_trip) {
    for (const char* s : {"ws -h h -p 80 -r /r", "wss -h h -p 443", "udp -h 239.1.1.1 -p 10000 -z", "ssl -h s -p 1 -t infinite"}) {
        for (const auto enc : {encoding_1_0, encoding_1_1}) {
            auto e = *endpoint_from_string(s);
            e.encoding = enc;
            output_stream out(enc);
            write_endpoint(out, e);
            input_stream in(out.view(), enc);
            const auto back = read_endpoint(in);
            ASSERT_TRUE(in.ok()) << s;
            EXPECT_EQ(in.remaining(), 0u);
            EXPECT_EQ(back, e) << s;
        }
    }
    // udp in a 1.0 encapsulation carries protocol 1.0 + encoding 1.0 before `compress`.
    output_stream out(encoding_1_0);
    write_endpoint(out, *endpoint_from_string("udp -h h -p 1"));
    EXPECT_EQ(to_hex(out.view()), "0300" "11000000" "0100" "0168" "01000000" "01000100" "00");
    // An unknown type keeps its version and body.
    const auto opaque = from_hex("6300" "09000000" "0102" "aabbcc");
    input_stream in(opaque);
    const auto e = read_endpoint(in);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(e.type, 99);
    EXPECT_EQ(e.encoding, (encoding_version{1, 2}));
    EXPECT_EQ(to_hex(e.opaque), "aabbcc");
    output_stream back;
    write_endpoint(back, e);
    EXPECT_EQ(to_hex(back.view()), to_hex(opaque));
}

TEST(endpoint, wire_errors) {
    auto error_of = [](const char* hex) {
        const auto b = from_hex(hex);
        input_stream in(b);
        (void)read_endpoint(in);
        return in.error();
    };
    EXPECT_EQ(error_of("0100" "05000000" "0101"), errc::bad_proxy);
    EXPECT_EQ(error_of("0100" "ffffff7f" "0101"), errc::out_of_bounds);
    EXPECT_EQ(error_of("0100" "07000000" "0102" "00"), errc::unsupported_encoding);
    EXPECT_EQ(error_of("0100" "08000000" "0101" "0068"), errc::bad_proxy);  // body too short for tcp
    // A tcp body followed by junk inside its encapsulation.
    EXPECT_EQ(error_of("0100" "11000000" "0101" "00" "01000000" "ffffffff" "00" "aa"), errc::bad_proxy);
}

TEST(endpoint, same_address_ignores_host_case_and_settings_only) {
    const auto a = *endpoint_from_string("tcp -h Router.Example.COM -p 4063 -t 1000 -z");
    EXPECT_TRUE(same_address(a, *endpoint_from_string("tcp -h router.example.com -p 4063")));
    EXPECT_FALSE(same_address(a, *endpoint_from_string("tcp -h router.example.com -p 4064")));
    EXPECT_FALSE(same_address(a, *endpoint_from_string("ssl -h router.example.com -p 4063")));
    EXPECT_FALSE(same_address(a, *endpoint_from_string("tcp -h router.example.co -p 4063")));
}

}  // namespace
}  // namespace moraine::protocol
