#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/request.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

// The uncompressed message of a record (decompressed when the capture was status 2).
byte_buffer message_bytes(const test::record& r) {
    auto b = test::bytes(r);
    boost::system::error_code ec;
    const auto f = parse_frame(b, limits{}, ec);
    EXPECT_TRUE(f) << ec.message();
    if (f && f->header.compression == compression_status::compressed) {
        auto d = decompress_message(*f, limits{});
        EXPECT_TRUE(d);
        return d ? *d : byte_buffer{};
    }
    return b;
}

byte_view body_of(const byte_buffer& message) { return byte_view(message).subspan(header_size); }

// Checks the decoded fields against those the tap recorded. `body` is the request body
// after the header, `with_id` false for batched requests (no request id).
void expect_fields(const request_view& req, const boost::json::object& r, byte_view body, const std::string& where) {
    SCOPED_TRACE(where);
    if (r.contains("requestId")) {
        EXPECT_EQ(req.request_id, test::num(r, "requestId"));
    }
    EXPECT_EQ(req.id.name, std::string_view(r.at("identity").at("name").as_string()));
    EXPECT_EQ(req.id.category, std::string_view(r.at("identity").at("category").as_string()));
    const auto& facet = r.at("facet").as_array();
    EXPECT_EQ(req.facet, facet.empty() ? std::string_view() : std::string_view(facet[0].as_string()));
    EXPECT_EQ(req.operation, test::str(r, "operation"));
    EXPECT_EQ(req.mode, test::num(r, "mode"));
    const auto& ctx = r.at("context").as_object();
    EXPECT_EQ(req.context.entries.size(), ctx.size());
    for (const auto& [k, v] : ctx) EXPECT_EQ(req.context.find(k), std::string_view(v.as_string()));
    const auto& params = r.at("params").as_object();
    EXPECT_EQ(req.params.bytes.data() - body.data(), params.at("offset").to_number<std::int64_t>());
    EXPECT_EQ(static_cast<std::int64_t>(req.params.bytes.size()), params.at("size").to_number<std::int64_t>());
    const auto [major, minor] = test::version(params.at("encoding"));
    EXPECT_EQ(req.params.encoding, (encoding_version{static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor)}));
    EXPECT_EQ(to_hex(req.params.payload()), test::str(params, "payloadHex"));
}

TEST(request, every_captured_request_decodes_to_the_recorded_fields) {
    std::size_t n = 0;
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (!test::is_type(r, "request")) continue;
            const auto msg = message_bytes(r);
            const auto req = decode_request(body_of(msg));
            ASSERT_TRUE(req) << name << ": " << req.error().message();
            expect_fields(*req, r, body_of(msg), name);
            // target = identity .. mode, verbatim.
            EXPECT_EQ(req->target.data(), body_of(msg).data() + 4);
            EXPECT_EQ(req->context.raw.data(), req->target.data() + req->target.size());
            ++n;
        }
    }
    EXPECT_GT(n, 80u);
}

TEST(request, reframing_with_the_same_id_reproduces_the_capture) {
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (!test::is_type(r, "request") || test::num(r, "compress") != 0) continue;
            const auto msg = test::bytes(r);
            const auto req = decode_request(body_of(msg));
            ASSERT_TRUE(req);
            byte_buffer out;
            EXPECT_EQ(write_request_message(out, req->request_id, *req, true), msg.size());
            EXPECT_EQ(to_hex(out), to_hex(msg)) << name;
        }
    }
}

// The router's forwarding: new request id, context dropped or kept, all else verbatim.
TEST(request, reframing_reproduces_every_forwarded_request) {
    std::size_t n = 0;
    for (const auto& name : test::vector_names()) {
        for (const auto& [in, out] : test::request_relays(name)) {
            const auto msg = message_bytes(in);
            const auto req = decode_request(body_of(msg));
            ASSERT_TRUE(req);
            const bool keep_context = !out.at("context").as_object().empty();
            byte_buffer buf;
            const auto id = static_cast<std::int32_t>(test::num(out, "requestId"));
            write_request_message(buf, id, *req, keep_context);
            EXPECT_EQ(to_hex(buf), test::str(out, "hex")) << name << " " << test::str(in, "operation");
            ++n;
        }
    }
    EXPECT_GE(n, 25u);
}

TEST(request, twoway_string_request_id_rewritten_9_to_2) {
    const auto relays = test::request_relays("twoway-string");
    ASSERT_EQ(relays.size(), 1u);
    const auto msg = test::bytes(relays[0].in);
    const auto req = decode_request(body_of(msg));
    ASSERT_TRUE(req);
    EXPECT_EQ(req->request_id, 9);
    byte_buffer out;
    write_request_message(out, 2, *req, false);
    EXPECT_EQ(to_hex(out), test::str(relays[0].out, "hex"));
}

TEST(request, extra_context_entries_replace_the_clients) {
    // Glacier2.AddConnectionContext: `extra` goes in; a client's entry with one of its keys does not.
    const auto kept = test::request_relays("forward-context-enabled");
    ASSERT_FALSE(kept.empty());
    const auto msg = test::bytes(kept[0].in);
    const auto req = decode_request(body_of(msg));
    ASSERT_TRUE(req);
    ASSERT_EQ(req->context.find("k"), "v");
    const context extra{{"_con.type", "tcp"}, {"k", "router's"}};
    byte_buffer out;
    const auto size = write_request_message(out, 3, *req, true, extra);
    EXPECT_EQ(size, out.size());
    const auto again = decode_request(body_of(out));
    ASSERT_TRUE(again);
    EXPECT_EQ(again->request_id, 3);
    EXPECT_EQ(again->operation, req->operation);
    EXPECT_EQ(again->context.find("_con.type"), "tcp");
    EXPECT_EQ(again->context.find("k"), "router's");
    EXPECT_EQ(again->context.entries.size(), req->context.entries.size() + 1);  // "k" once
    EXPECT_EQ(to_hex(again->params.bytes), to_hex(req->params.bytes));
    byte_buffer dropped;
    write_request_message(dropped, 3, *req, false, extra);
    EXPECT_EQ(decode_request(body_of(dropped))->context.entries.size(), 2u);
}

TEST(request, forward_context_dropped_and_kept) {
    const auto dropped = test::request_relays("forward-context");
    ASSERT_EQ(dropped.size(), 2u);
    const auto msg = test::bytes(dropped[0].in);
    const auto req = decode_request(body_of(msg));
    ASSERT_TRUE(req);
    EXPECT_EQ(req->context.find("k"), "v");
    byte_buffer out;
    write_request_message(out, 10, *req, false);
    EXPECT_EQ(to_hex(out), test::str(dropped[0].out, "hex"));
    const auto kept = test::request_relays("forward-context-enabled");
    ASSERT_EQ(kept.size(), 2u);
    out.clear();
    write_request_message(out, 0, *decode_request(body_of(test::bytes(kept[1].in))), true);
    EXPECT_EQ(to_hex(out), test::str(kept[1].out, "hex"));  // _fwd=o: twoway 22 became oneway 0
}

TEST(request, write_appends_to_existing_bytes) {
    const auto msg = from_hex("496365500100010000002f000000080000000568656c6c6f00000873617948656c6c6f00000a000000010103626f62");
    const auto req = decode_request(body_of(msg));
    ASSERT_TRUE(req);
    byte_buffer out = from_hex("aabb");
    EXPECT_EQ(write_request_message(out, 8, *req, true), msg.size());
    EXPECT_EQ(to_hex(out), "aabb" + to_hex(msg));
}

TEST(request, default_view_writes_an_empty_context) {
    request_view r;
    static const auto target = from_hex("0568656c6c6f00" "00" "0470696e67" "00");
    static const auto params = from_hex("060000000101");
    r.target = target;
    r.params.bytes = params;
    byte_buffer out;
    write_request_message(out, 1, r, true);
    const auto back = decode_request(body_of(out));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->operation, "ping");
    EXPECT_TRUE(back->context.empty());
}

TEST(request, every_truncation_fails_cleanly) {
    const auto msg = test::bytes(test::find_record("forward-context", [](auto& r) { return test::is_type(r, "request"); }));
    const auto body = body_of(msg);
    for (std::size_t len = 0; len < body.size(); ++len) {
        const auto req = decode_request(body.first(len));
        ASSERT_FALSE(req) << len;
        EXPECT_EQ(req.error().category(), error_category());
    }
}

TEST(request, trailing_bytes_are_an_error) {
    auto msg = test::bytes(test::find_record("routed-twoway", [](auto& r) { return test::is_type(r, "request"); }));
    msg.push_back(std::byte{0});
    EXPECT_EQ(decode_request(body_of(msg)).error(), errc::bad_encapsulation);
}

TEST(request, hostile_fields) {
    // id 1, identity "a", facet count 2
    EXPECT_EQ(decode_request(from_hex("01000000" "0161" "00" "02")).error(), errc::bad_facet);
    // context count 2^31-1 with nothing behind it
    EXPECT_EQ(decode_request(from_hex("01000000" "0161" "00" "00" "0170" "00" "ffffffff7f")).error(), errc::out_of_bounds);
    // negative string size
    EXPECT_EQ(decode_request(from_hex("01000000" "ff00000080")).error(), errc::negative_size);
    // encapsulation claims 2 GiB
    EXPECT_EQ(decode_request(from_hex("01000000" "0161" "00" "00" "0170" "00" "00" "ffffff7f0101")).error(), errc::out_of_bounds);
}

TEST(request, batch_of_three_decodes) {
    const auto batch = test::find_record("batch-oneway", [](auto& r) { return test::is_type(r, "batchRequest"); });
    const auto msg = test::bytes(batch);
    batch_reader reader(body_of(msg));
    EXPECT_FALSE(reader.error());
    EXPECT_EQ(reader.count(), test::num(batch, "batchCount"));
    std::vector<test::record> forwarded;
    for (const auto& r : test::load_vectors("batch-oneway"))
        if (test::is_type(r, "request")) forwarded.push_back(r);
    ASSERT_EQ(forwarded.size(), 3u);
    const auto& expected = batch.at("requests").as_array();
    std::size_t i = 0;
    while (!reader.done()) {
        const auto req = reader.next();
        ASSERT_TRUE(req) << req.error().message();
        EXPECT_EQ(req->request_id, 0);
        expect_fields(*req, expected[i].as_object(), body_of(msg), "batch");
        // Glacier2 forwards each batched request as its own oneway (spec §5).
        byte_buffer out;
        write_request_message(out, 0, *req, false);
        EXPECT_EQ(to_hex(out), test::str(forwarded[i], "hex"));
        ++i;
    }
    EXPECT_EQ(i, 3u);
    EXPECT_FALSE(reader.error());
    EXPECT_FALSE(reader.next());
}

TEST(request, batch_builder_rebuilds_a_client_batch) {
    // Re-batching the requests of a real Ice client's batch gives back its very bytes.
    const auto batch = test::find_record("batch-oneway", [](auto& r) { return test::is_type(r, "batchRequest"); });
    const auto msg = test::bytes(batch);
    batch_reader reader(body_of(msg));
    batch_builder builder;
    EXPECT_TRUE(builder.empty());
    while (!reader.done()) {
        const auto req = reader.next();
        ASSERT_TRUE(req);
        byte_buffer one;
        write_request_message(one, 0, *req, true);
        const std::size_t expected = builder.size_with(one);
        builder.add(one);
        EXPECT_EQ(builder.size(), expected);
    }
    EXPECT_FALSE(builder.empty());
    EXPECT_EQ(builder.size(), msg.size());
    EXPECT_EQ(to_hex(builder.finish()), to_hex(msg));
    EXPECT_EQ(builder.size(), 0u);
    EXPECT_TRUE(builder.empty());
    EXPECT_EQ(to_hex(builder.finish()), "496365500100010001001200000000000000");
}

TEST(request, batch_errors) {
    batch_reader negative(test::lasting_hex("ffffffff"));
    EXPECT_EQ(negative.error(), errc::negative_size);
    EXPECT_TRUE(negative.done());
    batch_reader short_count(test::lasting_hex("0100"));
    EXPECT_EQ(short_count.error(), errc::out_of_bounds);
    EXPECT_TRUE(short_count.done());
    batch_reader huge(test::lasting_hex("ffffff7f" "0161"));  // 2^31-1 requests announced
    EXPECT_EQ(huge.count(), 0x7fffffff);
    EXPECT_FALSE(huge.done());
    EXPECT_FALSE(huge.next());
    EXPECT_TRUE(huge.done());
    EXPECT_EQ(huge.error(), errc::out_of_bounds);
    batch_reader empty(test::lasting_hex("00000000"));
    EXPECT_TRUE(empty.done());
    EXPECT_FALSE(empty.error());
}

}  // namespace
}  // namespace moraine::protocol
