// Cost of the router's per-message protocol work: frame, decode, re-frame with a new request
// id (docs/ice-wire.md §4, §6). Run: build-proto/bin/bench_protocol --benchmark_min_time=0.5
#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

using namespace moraine::protocol;

namespace {

byte_buffer from_hex(std::string_view hex) {
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    byte_buffer out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<std::byte>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
    return out;
}

// tests/vectors/routed-twoway.jsonl: client->router hello.sayHello("bob") (47 bytes) and the
// back end's reply "hello bob" (35 bytes).
const byte_buffer routed_twoway_request =
    from_hex("496365500100010000002f000000080000000568656c6c6f00000873617948656c6c6f00000a000000010103626f62");
const byte_buffer routed_twoway_reply =
    from_hex("496365500100010002002300000001000000001000000001010968656c6c6f20626f62");

// A ~1 KiB request: hello.sayHello with a {k:v} context and a 1000-character string argument.
byte_buffer make_1k_request() {
    output_stream out;
    out.start_message(message_type::request);
    out.write_int(8);
    out.write_identity({"hello", ""});
    out.write_facet("");
    out.write_string("sayHello");
    out.write_byte(0);
    out.write_context({{"k", "v"}});
    const auto e = out.start_encapsulation(encoding_1_1);
    out.write_string(std::string(1000, 'z'));
    out.end_encapsulation(e);
    out.end_message();
    return out.take();
}
const byte_buffer request_1k = make_1k_request();

// parse_frame + decode_request + write_request_message into a reused buffer, as the router
// forwards a request to a back end.
void forward_request(benchmark::State& state, const byte_buffer& message, bool keep_context) {
    byte_buffer out;
    out.reserve(2 * message.size());
    std::int32_t next_id = 1;
    for (auto _ : state) {
        boost::system::error_code ec;
        const auto frame = parse_frame(message, limits{}, ec);
        if (!frame) throw std::runtime_error("bad frame");
        const auto req = decode_request(frame->body());
        if (!req) throw std::runtime_error("bad request");
        out.clear();
        write_request_message(out, next_id++, *req, keep_context);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(message.size()));
}

void BM_forward_request_routed_twoway_drop_context(benchmark::State& s) { forward_request(s, routed_twoway_request, false); }
void BM_forward_request_routed_twoway_keep_context(benchmark::State& s) { forward_request(s, routed_twoway_request, true); }
void BM_forward_request_1k_drop_context(benchmark::State& s) { forward_request(s, request_1k, false); }
void BM_forward_request_1k_keep_context(benchmark::State& s) { forward_request(s, request_1k, true); }

// parse_frame + decode_reply + write_reply_message with the client's request id.
void BM_relay_reply_routed_twoway(benchmark::State& state) {
    byte_buffer out;
    out.reserve(256);
    for (auto _ : state) {
        boost::system::error_code ec;
        const auto frame = parse_frame(routed_twoway_reply, limits{}, ec);
        if (!frame) throw std::runtime_error("bad frame");
        const auto rep = decode_reply(frame->body());
        if (!rep) throw std::runtime_error("bad reply");
        out.clear();
        write_reply_message(out, 8, *rep);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations());
}

// The three steps separately, for the routed-twoway request.
void BM_parse_frame_only(benchmark::State& state) {
    for (auto _ : state) {
        boost::system::error_code ec;
        benchmark::DoNotOptimize(parse_frame(routed_twoway_request, limits{}, ec));
    }
}
void BM_decode_request_only(benchmark::State& state) {
    const byte_view body = byte_view(routed_twoway_request).subspan(header_size);
    for (auto _ : state) benchmark::DoNotOptimize(decode_request(body));
}

// A stream of one kind of message, cut into 64 KiB reads as the shard's scratch reads it under
// load: almost every read ends inside a message. Reports bytes framed per second.
byte_buffer stream_of(const byte_buffer& m, std::size_t total) {
    byte_buffer s;
    while (s.size() < total) s.insert(s.end(), m.begin(), m.end());
    return s;
}

void BM_assemble_64k_reads(benchmark::State& state) {
    const byte_buffer& m = state.range(0) == 0 ? routed_twoway_request : request_1k;
    const byte_buffer stream = stream_of(m, 4 * 1024 * 1024);
    constexpr std::size_t read_bytes = 64 * 1024;
    frame_assembler in;
    std::size_t frames = 0;
    for (auto _ : state) {
        for (std::size_t at = 0; at < stream.size(); at += read_bytes) {
            boost::system::error_code ec;
            in.feed(byte_view(stream).subspan(at, std::min(read_bytes, stream.size() - at)), limits{}, ec,
                    [&](const frame_view& f) {
                        benchmark::DoNotOptimize(f.bytes.data());
                        ++frames;
                        return true;
                    });
        }
        in.reset();
    }
    benchmark::DoNotOptimize(frames);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stream.size()));
}

}  // namespace

BENCHMARK(BM_assemble_64k_reads)->Arg(0)->Arg(1);
BENCHMARK(BM_forward_request_routed_twoway_drop_context);
BENCHMARK(BM_forward_request_routed_twoway_keep_context);
BENCHMARK(BM_forward_request_1k_drop_context);
BENCHMARK(BM_forward_request_1k_keep_context);
BENCHMARK(BM_relay_reply_routed_twoway);
BENCHMARK(BM_parse_frame_only);
BENCHMARK(BM_decode_request_only);
BENCHMARK_MAIN();
