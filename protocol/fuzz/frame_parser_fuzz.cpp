// libFuzzer target: frames a byte stream with parse_frame (and, cut in pieces, with
// frame_assembler, which must agree) and pushes every frame (and the raw input) through each
// decoder; decoded requests, replies and proxies are re-encoded and decoded again, and any
// difference aborts. Build: -DMORAINE_FUZZ=ON with clang (protocol/CMakeLists.txt).
// Run: build-fuzz/bin/frame_parser_fuzz protocol/fuzz/corpus -max_total_time=120
#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace moraine::protocol;

namespace {

// Small enough that a lying size prefix cannot make one input allocate much.
constexpr limits fuzz_limits{256 * 1024};

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "property violated: %s\n", what);
        std::abort();
    }
}

bool same_request(const request_view& a, const request_view& b, bool with_context) {
    bool same = a.id == b.id && a.facet == b.facet && a.operation == b.operation && a.mode == b.mode &&
                a.params.encoding == b.params.encoding &&
                std::equal(a.params.bytes.begin(), a.params.bytes.end(), b.params.bytes.begin(), b.params.bytes.end()) &&
                std::equal(a.target.begin(), a.target.end(), b.target.begin(), b.target.end());
    if (with_context) same = same && a.context.entries == b.context.entries;
    else same = same && b.context.empty();
    return same;
}

// Any identity survives stringification (the router logs and compares these strings).
void check_identity_string(identity_view id) {
    if (id.name.empty()) return;
    const auto back = identity_from_string(identity_to_string(id));
    check(back && back->view() == id, "identity string round trip");
}

// A proxy written and read back equals itself; endpoint encapsulation versions of known types
// follow the stream, so they are compared after normalising.
void check_proxy_bytes(byte_view bytes, encoding_version enc) {
    input_stream in(bytes, enc);
    proxy p = read_proxy(in);
    if (!in.ok() || p.is_nil()) return;
    check_identity_string(p.id.view());
    (void)proxy_to_string(p);
    output_stream out(enc);
    write_proxy(out, p);
    input_stream again(out.view(), enc);
    proxy q = read_proxy(again);
    check(again.ok() && again.remaining() == 0, "re-read proxy");
    for (auto& e : p.endpoints)
        if (e.type >= 1 && e.type <= 5) e.encoding = enc;
    check(p == q, "proxy round trip");
}

void check_request(const request_view& r) {
    check_identity_string(r.id);
    for (const bool keep : {true, false}) {
        byte_buffer out;
        const auto n = write_request_message(out, 42, r, keep);
        check(n == out.size(), "write_request_message size");
        boost::system::error_code ec;
        const auto f = parse_frame(out, limits{0}, ec);
        check(f && f->size() == out.size() && f->header.type == message_type::request, "reframed request parses");
        const auto back = decode_request(f->body());
        check(back && back->request_id == 42 && same_request(r, *back, keep), "reframed request decodes equal");
    }
    check_proxy_bytes(r.params.payload(), r.params.encoding);
}

void check_reply(const reply_view& r) {
    byte_buffer out;
    write_reply_message(out, 7, r, 1);
    const auto back = decode_reply(byte_view(out).subspan(header_size));
    check(back && back->request_id == 7 && back->status == r.status &&
              std::equal(r.payload.begin(), r.payload.end(), back->payload.begin(), back->payload.end()),
          "relayed reply decodes equal");
    if (auto info = decode_not_exist(r.payload)) check_identity_string(info->id);
    (void)decode_unknown_text(r.payload);
    if (auto ex = decode_user_exception(r.payload)) {
        byte_buffer encaps;
        input_stream in(r.payload);
        const auto e = in.read_encapsulation();
        write_user_exception_encaps(encaps, e.encoding, ex->type_id, ex->members, true);
        check(decode_user_exception(encaps).has_value(), "rewritten exception decodes");
    }
    input_stream in(r.payload);
    const auto e = in.read_encapsulation();
    if (in.ok()) check_proxy_bytes(e.payload(), e.encoding);
}

void check_body(message_type type, byte_view body) {
    switch (type) {
    case message_type::request:
        if (auto r = decode_request(body)) check_request(*r);
        break;
    case message_type::batch_request: {
        batch_reader batch(body);
        for (int i = 0; !batch.done() && i < 1000; ++i)
            if (auto r = batch.next()) check_request(*r);
        break;
    }
    case message_type::reply:
        if (auto r = decode_reply(body)) check_reply(*r);
        break;
    default:
        break;
    }
}

void check_frame(const frame_view& f) {
    if (f.header.compression != compression_status::compressed) {
        check_body(f.header.type, f.body());
        return;
    }
    const auto d = decompress_message(f, fuzz_limits);
    if (!d) return;
    byte_buffer storage;
    boost::system::error_code ec;
    const auto inner = decompress_frame(f, fuzz_limits, storage, ec);
    check(inner && storage == *d && inner->header.type == f.header.type, "decompressed message parses");
    check_body(inner->header.type, inner->body());
    const auto again = compress_message(*d);
    check(again.has_value(), "recompress");
    boost::system::error_code ec2;
    const auto cf = parse_frame(*again, limits{0}, ec2);
    check(cf.has_value(), "recompressed parses");
    const auto d2 = decompress_message(*cf, limits{0});
    check(d2 && *d2 == *d, "compression round trip");
}

// The assembler, fed the input in pieces (their size taken from the first byte), must find
// exactly the frames and the error that parse_frame finds in the input whole.
void check_assembler(byte_view input, std::size_t whole_frames, const boost::system::error_code& whole_ec) {
    const std::size_t step = input.empty() ? 1 : 1 + std::to_integer<std::size_t>(input[0]) % 61;
    frame_assembler in;
    boost::system::error_code ec;
    std::size_t frames = 0, offset = 0;
    bool more = true;
    for (std::size_t at = 0; more && at < input.size(); at += step) {
        more = in.feed(input.subspan(at, std::min(step, input.size() - at)), fuzz_limits, ec, [&](const frame_view& f) {
            const auto end = std::min(offset + f.size(), input.size());
            check(std::equal(f.bytes.begin(), f.bytes.end(), input.begin() + static_cast<std::ptrdiff_t>(offset),
                             input.begin() + static_cast<std::ptrdiff_t>(end)),
                  "assembled frame equals the stream's bytes");
            offset += f.size();
            ++frames;
            return true;
        });
    }
    check(frames == whole_frames, "assembler finds the frames parse_frame finds");
    check(ec == whole_ec, "assembler finds the error parse_frame finds");
    check(!more || in.buffered() == input.size() - offset, "assembler holds exactly the unframed tail");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const byte_view input(reinterpret_cast<const std::byte*>(data), size);
    byte_view rest = input;
    boost::system::error_code ec;
    std::size_t frames = 0;
    while (auto f = parse_frame(rest, fuzz_limits, ec)) {
        check(f->size() >= header_size && f->size() <= rest.size(), "frame within input");
        check_frame(*f);
        rest = rest.subspan(f->size());
        ++frames;
    }
    check_assembler(input, frames, ec);
    // The decoders also take the raw input, so they are reached without a valid header.
    check_body(message_type::request, input);
    check_body(message_type::batch_request, input);
    check_body(message_type::reply, input);
    check_proxy_bytes(input, encoding_1_0);
    check_proxy_bytes(input, encoding_1_1);
    (void)decode_user_exception(input);
    if (size < 512) {
        const std::string_view text = as_chars(input);
        (void)endpoints_from_string(text);
        if (auto p = proxy_from_string(text)) (void)proxy_to_string(*p);
        if (auto id = identity_from_string(text)) check_identity_string(id->view());
    }
    return 0;
}
