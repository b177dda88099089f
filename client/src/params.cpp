#include <moraine/client/params.hpp>

namespace moraine::client {

protocol::byte_buffer empty_params(protocol::encoding_version enc) {
    protocol::output_stream out(enc);
    out.buffer().reserve(6);  // its whole size: one allocation
    out.write_empty_encapsulation(enc);
    return out.take();
}

protocol::byte_buffer encode_string_params(std::string_view s, protocol::encoding_version enc) {
    return encode_params([s](protocol::output_stream& out) { out.write_string(s); }, enc);
}

std::optional<std::string> decode_string_result(protocol::byte_view encaps) {
    std::string result;
    const auto ec = decode_results(encaps, [&](protocol::input_stream& in) { result = in.read_string(); });
    if (ec) return std::nullopt;
    return result;
}

}  // namespace moraine::client
