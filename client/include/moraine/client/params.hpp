#pragma once
// Encoding parameters and decoding results as encapsulations (docs/ice-wire.md §7), using the codec.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace moraine::client {

/// A whole encapsulation with no parameters (`06000000 0101` for 1.1): for operations without in-params.
protocol::byte_buffer empty_params(protocol::encoding_version enc = protocol::encoding_1_1);

/// Builds a whole encapsulation (size, version, payload) of encoding `enc`; `write(out)`
/// writes the in-parameters in Slice order with the protocol::output_stream API.
template <class WriteFn>
protocol::byte_buffer encode_params(WriteFn&& write, protocol::encoding_version enc = protocol::encoding_1_1) {
    protocol::output_stream out(enc);
    out.buffer().reserve(64);  // most parameters fit: one allocation, not one per growth
    const std::size_t at = out.start_encapsulation(enc);
    std::forward<WriteFn>(write)(out);
    out.end_encapsulation(at);
    return out.take();
}

/// Parameters of an operation taking one string, e.g. `Demo::Clock::tick(string)`.
protocol::byte_buffer encode_string_params(std::string_view s, protocol::encoding_version enc = protocol::encoding_1_1);

/// Reads results from a whole encapsulation `encaps` (e.g. call_result::encaps): `read(in)`
/// reads them in Slice order. @return the stream's first error (protocol::errc), if any.
template <class ReadFn>
boost::system::error_code decode_results(protocol::byte_view encaps, ReadFn&& read) {
    protocol::input_stream outer(encaps);
    const protocol::encapsulation_view e = outer.read_encapsulation();
    if (!outer.ok()) return outer.error();
    protocol::input_stream in(e.payload(), e.encoding);
    std::forward<ReadFn>(read)(in);
    return in.error();
}

/// The result of an operation returning one string (e.g. `Demo::Hello::sayHello`);
/// nullopt if `encaps` does not hold one.
std::optional<std::string> decode_string_result(protocol::byte_view encaps);

}  // namespace moraine::client
