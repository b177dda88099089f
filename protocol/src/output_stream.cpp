// Writing Ice-encoded values (docs/ice-wire.md §1, §7).
#include <moraine/protocol/output_stream.hpp>

#include "detail/little_endian.hpp"

#include <bit>

namespace moraine::protocol {
namespace {
template <class T>
void append_le(byte_buffer& buf, T v) {
    const std::size_t at = buf.size();
    buf.resize(at + sizeof(T));
    detail::store_le<T>(buf.data() + at, v);
}
}  // namespace

void output_stream::write_short(std::int16_t v) { append_le(buf_, v); }
void output_stream::write_int(std::int32_t v) { append_le(buf_, v); }
void output_stream::write_long(std::int64_t v) { append_le(buf_, v); }
void output_stream::write_float(float v) { append_le(buf_, std::bit_cast<std::int32_t>(v)); }
void output_stream::write_double(double v) { append_le(buf_, std::bit_cast<std::int64_t>(v)); }

void output_stream::write_size(std::int32_t v) {
    if (v >= 0 && v < 255) {
        write_byte(static_cast<std::uint8_t>(v));
    } else {
        write_byte(0xFF);
        write_int(v);
    }
}

void output_stream::write_string(std::string_view s) {
    write_size(static_cast<std::int32_t>(s.size()));
    write_bytes(as_bytes(s));
}

void output_stream::write_identity(identity_view id) {
    write_string(id.name);
    write_string(id.category);
}

void output_stream::write_facet(std::string_view facet) {
    if (facet.empty()) {
        write_size(0);
    } else {
        write_size(1);
        write_string(facet);
    }
}

void output_stream::write_context(const context& ctx) {
    write_size(static_cast<std::int32_t>(ctx.size()));
    for (const auto& [k, v] : ctx) {
        write_string(k);
        write_string(v);
    }
}

void output_stream::start_message(message_type type, compression_status c) {
    buf_.resize(header_size);
    write_header(buf_.data(), type, c, 0);
}

std::size_t output_stream::end_message() {
    patch_message_size(buf_.data(), static_cast<std::int32_t>(buf_.size()));
    return buf_.size();
}

std::size_t output_stream::start_encapsulation(encoding_version e) {
    const std::size_t start = buf_.size();
    write_int(0);  // patched by end_encapsulation
    write_byte(e.major);
    write_byte(e.minor);
    saved_enc_ = enc_;
    enc_ = e;
    return start;
}

void output_stream::end_encapsulation(std::size_t start) {
    patch_int(start, static_cast<std::int32_t>(buf_.size() - start));
    enc_ = saved_enc_;
}

void output_stream::write_empty_encapsulation(encoding_version e) {
    write_int(6);
    write_byte(e.major);
    write_byte(e.minor);
}

void output_stream::patch_int(std::size_t pos, std::int32_t v) noexcept {
    detail::store_le<std::int32_t>(buf_.data() + pos, v);
}

}  // namespace moraine::protocol
