#include <moraine/protocol/error.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/request.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

// Checks a decoded proxy against the tap's JSON form of it.
void expect_proxy(const proxy& p, const boost::json::object& j, const std::string& where) {
    SCOPED_TRACE(where);
    EXPECT_EQ(p.id.name, std::string_view(j.at("identity").at("name").as_string()));
    EXPECT_EQ(p.id.category, std::string_view(j.at("identity").at("category").as_string()));
    EXPECT_EQ(p.mode, j.at("mode").to_number<int>());
    EXPECT_EQ(p.secure, j.at("secure").as_bool());
    if (j.contains("encoding")) {
        const auto [major, minor] = test::version(j.at("encoding"));
        EXPECT_EQ(p.encoding, (encoding_version{static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor)}));
    }
    const auto& eps = j.at("endpoints").as_array();
    ASSERT_EQ(p.endpoints.size(), eps.size());
    for (std::size_t i = 0; i < eps.size(); ++i) {
        const auto& e = eps[i].as_object();
        EXPECT_EQ(p.endpoints[i].type, e.at("type").to_number<int>());
        EXPECT_EQ(p.endpoints[i].host, std::string_view(e.at("host").as_string()));
        EXPECT_EQ(p.endpoints[i].port, e.at("port").to_number<int>());
        if (e.contains("timeout")) {
            EXPECT_EQ(p.endpoints[i].timeout, e.at("timeout").to_number<int>());
        }
        EXPECT_EQ(p.endpoints[i].compress, e.at("compress").as_bool());
    }
}

// Every addProxies in the captures: decode the ObjectProxySeq, re-encode, compare bytes.
TEST(proxy, every_captured_add_proxies_round_trips_byte_exact) {
    std::size_t n = 0;
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (!test::is_type(r, "request") || test::str(r, "operation") != "addProxies") continue;
            const auto msg = test::bytes(r);
            const auto req = decode_request(byte_view(msg).subspan(header_size));
            ASSERT_TRUE(req);
            input_stream in(req->params.payload(), req->params.encoding);
            const auto count = in.read_size();
            const auto& expected = r.at("args").at("proxies").as_array();
            ASSERT_EQ(static_cast<std::size_t>(count), expected.size());
            output_stream out(req->params.encoding);
            out.write_size(count);
            for (std::int32_t i = 0; i < count; ++i) {
                const proxy p = read_proxy(in);
                ASSERT_TRUE(in.ok()) << name << ": " << in.error().message();
                expect_proxy(p, expected[static_cast<std::size_t>(i)].as_object(), name);
                write_proxy(out, p);
            }
            EXPECT_EQ(in.remaining(), 0u);
            EXPECT_EQ(to_hex(out.view()), to_hex(req->params.payload())) << name;
            ++n;
        }
    }
    EXPECT_GE(n, 5u);
}

TEST(proxy, get_server_proxy_result_round_trips) {
    const auto r = test::find_record("callback-adapter", [](auto& r) { return test::is_type(r, "reply"); });
    const auto msg = test::bytes(r);
    // reply body: request id, status, then the result encapsulation
    input_stream encaps_in(byte_view(msg).subspan(header_size + 5));
    const auto e = encaps_in.read_encapsulation();
    ASSERT_TRUE(encaps_in.ok());
    input_stream in(e.payload(), e.encoding);
    const proxy p = read_proxy(in);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in.remaining(), 0u);
    expect_proxy(p, r.at("decoded").at("serverProxy").as_object(), "getServerProxy");
    EXPECT_EQ(p.id.name, "dummy");
    output_stream out(encoding_1_1);
    write_proxy(out, p);
    EXPECT_EQ(to_hex(out.view()), to_hex(e.payload()));
}

TEST(proxy, encoding_1_0_callback_proxy_round_trips) {
    for (const auto& r : test::load_vectors("encoding-1.0")) {
        if (!test::is_type(r, "request") || test::str(r, "operation") != "callMeBack") continue;
        const auto msg = test::bytes(r);
        const auto req = decode_request(byte_view(msg).subspan(header_size));
        ASSERT_TRUE(req);
        ASSERT_EQ(req->params.encoding, encoding_1_0);
        input_stream in(req->params.payload(), encoding_1_0);
        const proxy p = read_proxy(in);
        ASSERT_TRUE(in.ok());
        expect_proxy(p, r.at("args").at("cb").as_object(), "callMeBack");
        EXPECT_EQ(p.encoding, encoding_1_0);  // a 1.0 stream has no versions: Ice assumes 1.0
        EXPECT_EQ(p.endpoints[0].encoding, encoding_1_0);
        EXPECT_EQ(in.read_string(), "ring10");
        output_stream out(encoding_1_0);
        write_proxy(out, p);
        out.write_string("ring10");
        EXPECT_EQ(to_hex(out.view()), to_hex(req->params.payload()));
    }
}

TEST(proxy, nil_proxy) {
    const auto b = from_hex("0000" "0801");  // getClientProxy result: nil, then the optional
    input_stream in(b);
    const proxy p = read_proxy(in);
    ASSERT_TRUE(in.ok());
    EXPECT_TRUE(p.is_nil());
    EXPECT_EQ(in.position(), 2u);
    output_stream out;
    write_proxy(out, proxy{});
    EXPECT_EQ(to_hex(out.view()), "0000");
}

TEST(proxy, indirect_proxy_with_adapter_id) {
    proxy p;
    p.id = {"hello", ""};
    p.adapter_id = "HelloAdapter";
    for (const auto enc : {encoding_1_0, encoding_1_1}) {
        output_stream out(enc);
        write_proxy(out, p);
        input_stream in(out.view(), enc);
        const proxy back = read_proxy(in);
        ASSERT_TRUE(in.ok());
        EXPECT_EQ(back.adapter_id, "HelloAdapter");
        EXPECT_TRUE(back.endpoints.empty());
    }
    output_stream out(encoding_1_1);
    write_proxy(out, p);
    EXPECT_EQ(to_hex(out.view()), "0568656c6c6f00" "00" "00" "00" "01000101" "00" "0c48656c6c6f41646170746572");
}

TEST(proxy, to_string_like_ice) {
    proxy p = *proxy_from_string("hello:tcp -h 127.0.0.1 -p 41171");
    EXPECT_EQ(proxy_to_string(p), "hello -t -e 1.1:tcp -h 127.0.0.1 -p 41171 -t 60000");
    p.mode = 1;
    p.secure = true;
    p.facet = "f x";
    p.id.category = "cat";
    EXPECT_EQ(proxy_to_string(p), "cat/hello -f \"f x\" -o -s -e 1.1:tcp -h 127.0.0.1 -p 41171 -t 60000");
    proxy indirect;
    indirect.id = {"a b", ""};
    indirect.adapter_id = "Adapter";
    indirect.encoding = encoding_1_0;
    EXPECT_EQ(proxy_to_string(indirect), "\"a b\" -t -e 1.0 @ Adapter");
    proxy well_known;
    well_known.id = {"x", ""};
    EXPECT_EQ(proxy_to_string(well_known), "x -t -e 1.1");
    EXPECT_EQ(proxy_to_string(proxy{}), "");
}

TEST(proxy, to_string_of_a_captured_proxy) {
    const auto r = test::find_record("routed-twoway", [](auto& r) { return test::str(r, "operation") == "addProxies"; });
    const auto msg = test::bytes(r);
    const auto req = decode_request(byte_view(msg).subspan(header_size));
    input_stream in(req->params.payload());
    (void)in.read_size();
    EXPECT_EQ(proxy_to_string(read_proxy(in)), "hello -t -e 1.1:tcp -h 127.0.0.1 -p 41171 -t 60000");
}

TEST(proxy, from_string) {
    const auto p = proxy_from_string("Glacier2/router -t:tcp -h 127.0.0.1 -p 4063 -t 10000:ssl -h h -p 4064");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->id, (identity{"router", "Glacier2"}));
    ASSERT_EQ(p->endpoints.size(), 2u);
    EXPECT_EQ(p->endpoints[0].timeout, 10000);
    EXPECT_EQ(p->endpoints[1].type, 2);
    const auto adapter = proxy_from_string("verifier@VerifierAdapter");
    ASSERT_TRUE(adapter);
    EXPECT_EQ(adapter->id.name, "verifier");
    EXPECT_EQ(adapter->adapter_id, "VerifierAdapter");
    const auto quoted = proxy_from_string("\"my object\" -f facet -O -s -e 1.0 @ \"an adapter\"");
    ASSERT_TRUE(quoted);
    EXPECT_EQ(quoted->id.name, "my object");
    EXPECT_EQ(quoted->facet, "facet");
    EXPECT_EQ(quoted->mode, 2);
    EXPECT_TRUE(quoted->secure);
    EXPECT_EQ(quoted->encoding, encoding_1_0);
    EXPECT_EQ(quoted->adapter_id, "an adapter");
    const auto escaped = proxy_from_string("cat\\/x/name");
    ASSERT_TRUE(escaped);
    EXPECT_EQ(escaped->id.category, "cat/x");
    EXPECT_EQ(proxy_from_string("hello")->endpoints.size(), 0u);
}

TEST(proxy, from_string_errors) {
    EXPECT_FALSE(proxy_from_string(""));
    EXPECT_FALSE(proxy_from_string("   "));
    EXPECT_FALSE(proxy_from_string(":tcp -p 1"));
    EXPECT_FALSE(proxy_from_string("a -x"));
    EXPECT_FALSE(proxy_from_string("a -f"));
    EXPECT_FALSE(proxy_from_string("a -e x"));
    EXPECT_EQ(proxy_from_string("a:tcp")->endpoints.at(0).port, 0);  // as Ice reads it: port 0
    EXPECT_FALSE(proxy_from_string("a@"));
    EXPECT_FALSE(proxy_from_string("a @ b c"));
    EXPECT_FALSE(proxy_from_string("\"unterminated"));
    EXPECT_FALSE(proxy_from_string("a b"));
}

TEST(proxy, to_string_from_string_round_trip) {
    for (const char* s : {"hello -t -e 1.1:tcp -h 127.0.0.1 -p 41171 -t 60000",
                          "cat/hello -f fac -o -s -e 1.0:tcp -p 1 -t infinite -z:ws -h h -p 2 -t 60000 -r /r",
                          "\"a:b\" -t -e 1.1 @ \"x y\"", "x -D -e 1.1:udp -h 239.1.1.1 -p 9"}) {
        const auto p = proxy_from_string(s);
        ASSERT_TRUE(p) << s;
        EXPECT_EQ(proxy_to_string(*p), s);
    }
}

TEST(proxy, hostile_wire_input) {
    auto error_of = [](const char* hex, encoding_version enc = encoding_1_1) {
        const auto b = from_hex(hex);
        input_stream in(b, enc);
        (void)read_proxy(in);
        return in.error();
    };
    // mode 9
    EXPECT_EQ(error_of("0161" "00" "00" "09" "00" "01000101" "00" "00"), errc::bad_proxy);
    // 2^31-1 endpoints announced with 1 byte left: fails before reserving
    EXPECT_EQ(error_of("0161" "00" "00" "00" "00" "01000101" "ffffffff7f" "00"), errc::out_of_bounds);
    // truncated versions
    EXPECT_EQ(error_of("0161" "00" "00" "00" "00" "0100"), errc::out_of_bounds);
    // facet with two elements
    EXPECT_EQ(error_of("0161" "00" "02" "0161" "0162"), errc::bad_facet);
    // the same bytes are a different (valid) proxy in 1.0: no versions, adapter id follows
    EXPECT_FALSE(error_of("0161" "00" "00" "00" "00" "00" "00", encoding_1_0));
}

}  // namespace
}  // namespace moraine::protocol
