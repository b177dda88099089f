// Replies (docs/ice-wire.md §6).
#include <moraine/protocol/reply.hpp>

#include <moraine/protocol/error.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include "detail/append_bytes.hpp"
#include "detail/little_endian.hpp"

namespace moraine::protocol {
namespace {

constexpr std::uint8_t max_reply_status = static_cast<std::uint8_t>(reply_status::unknown_exception);

// Appends header + request id + status, then `payload_size` bytes written by `fill`.
template <class Fill>
std::size_t append_reply(byte_buffer& out, std::int32_t request_id, reply_status status, std::uint8_t compression,
                         std::size_t payload_size, Fill fill) {
    const std::size_t size = header_size + 5 + payload_size;
    const std::size_t at = out.size();
    out.reserve(at + size);
    out.resize(at + header_size + 5);
    write_header(out.data() + at, message_type::reply, static_cast<compression_status>(compression),
                 static_cast<std::int32_t>(size));
    detail::store_le<std::int32_t>(out.data() + at + header_size, request_id);
    out[at + header_size + 4] = static_cast<std::byte>(status);
    fill(out);
    return size;
}

}  // namespace

boost::system::result<reply_view> decode_reply(byte_view body) noexcept {
    input_stream in(body);
    reply_view r;
    r.request_id = in.read_int();
    const std::uint8_t status = in.read_byte();
    if (!in.ok()) return in.error();
    if (status > max_reply_status) return make_error_code(errc::bad_reply_status);
    r.status = static_cast<reply_status>(status);
    r.payload = in.rest();
    return r;
}

std::size_t write_reply_message(byte_buffer& out, std::int32_t request_id, const reply_view& r,
                                std::uint8_t compression) {
    return append_reply(out, request_id, r.status, compression, r.payload.size(),
                        [&](byte_buffer& b) { detail::append_bytes(b, r.payload); });
}

std::size_t write_reply_ok(byte_buffer& out, std::int32_t request_id, byte_view encaps) {
    return append_reply(out, request_id, reply_status::ok, 0, encaps.size(),
                        [&](byte_buffer& b) { detail::append_bytes(b, encaps); });
}

std::size_t write_reply_user_exception(byte_buffer& out, std::int32_t request_id, byte_view encaps) {
    return append_reply(out, request_id, reply_status::user_exception, 0, encaps.size(),
                        [&](byte_buffer& b) { detail::append_bytes(b, encaps); });
}

std::size_t write_reply_not_exist(byte_buffer& out, std::int32_t request_id, reply_status status,
                                  identity_view id, std::string_view facet, std::string_view operation) {
    output_stream payload;
    payload.write_identity(id);
    payload.write_facet(facet);
    payload.write_string(operation);
    return append_reply(out, request_id, status, 0, payload.size(),
                        [&](byte_buffer& b) { detail::append_bytes(b, payload.view()); });
}

std::size_t write_reply_unknown(byte_buffer& out, std::int32_t request_id, reply_status status,
                                std::string_view text) {
    output_stream payload;
    payload.write_string(text);
    return append_reply(out, request_id, status, 0, payload.size(),
                        [&](byte_buffer& b) { detail::append_bytes(b, payload.view()); });
}

boost::system::result<not_exist_info> decode_not_exist(byte_view payload) {
    input_stream in(payload);
    not_exist_info info;
    info.id = in.read_identity();
    info.facet = in.read_facet();
    info.operation = in.read_string();
    if (!in.ok()) return in.error();
    return info;
}

boost::system::result<std::string_view> decode_unknown_text(byte_view payload) noexcept {
    input_stream in(payload);
    const std::string_view text = in.read_string();
    if (!in.ok()) return in.error();
    return text;
}

}  // namespace moraine::protocol
