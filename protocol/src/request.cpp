// Requests and batch requests (docs/ice-wire.md §4, §5).
#include <moraine/protocol/request.hpp>

#include <moraine/protocol/error.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include "detail/append_bytes.hpp"
#include "detail/little_endian.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace moraine::protocol {
namespace {

// Reads everything after the request id: identity .. params. Shared by requests and batches.
void read_request_fields(input_stream& in, request_view& r) {
    const byte_view all = in.rest();
    const std::size_t target_start = in.position();
    r.id = in.read_identity();
    r.facet = in.read_facet();
    r.operation = in.read_string();
    r.mode = in.read_byte();
    if (!in.ok()) return;
    r.target = all.first(in.position() - target_start);
    r.context = in.read_context();
    r.params = in.read_encapsulation();
}

}  // namespace

boost::system::result<request_view> decode_request(byte_view body) {
    input_stream in(body);
    request_view r;
    r.request_id = in.read_int();
    read_request_fields(in, r);
    if (!in.ok()) return in.error();
    if (in.remaining() != 0) return make_error_code(errc::bad_encapsulation);
    return r;
}

std::size_t write_request_message(byte_buffer& out, std::int32_t request_id, const request_view& r,
                                  bool keep_context) {
    static constexpr std::byte empty_context[1] = {std::byte{0}};
    // A default-constructed view has no raw bytes: write it as the empty context it is.
    const byte_view ctx = keep_context && !r.context.raw.empty() ? r.context.raw : byte_view(empty_context);
    const std::size_t size = header_size + 4 + r.target.size() + ctx.size() + r.params.bytes.size();
    const std::size_t at = out.size();
    out.reserve(at + size);  // one allocation at most
    out.resize(at + header_size + 4);
    write_header(out.data() + at, message_type::request, compression_status::none, static_cast<std::int32_t>(size));
    detail::store_le<std::int32_t>(out.data() + at + header_size, request_id);
    detail::append_bytes(out, r.target);
    detail::append_bytes(out, ctx);
    detail::append_bytes(out, r.params.bytes);
    return size;
}

std::size_t write_request_message(byte_buffer& out, std::int32_t request_id, const request_view& r,
                                  bool keep_context, const context& extra) {
    if (extra.empty()) return write_request_message(out, request_id, r, keep_context);
    // The client's entries whose keys `extra` also sets are left out: no duplicate key reaches
    // the receiver, whichever of two values its map would keep (Ice's keeps the first).
    auto in_extra = [&](std::string_view key) {
        return std::any_of(extra.begin(), extra.end(), [&](const auto& e) { return e.first == key; });
    };
    std::vector<std::pair<std::string_view, std::string_view>> own;
    if (keep_context)
        for (const auto& e : r.context.entries)
            if (!in_extra(e.first)) own.push_back(e);
    output_stream ctx;
    ctx.write_size(static_cast<std::int32_t>(extra.size() + own.size()));
    for (const auto& [k, v] : extra) {
        ctx.write_string(k);
        ctx.write_string(v);
    }
    for (const auto& [k, v] : own) {
        ctx.write_string(k);
        ctx.write_string(v);
    }
    const byte_view c = ctx.view();
    const std::size_t size = header_size + 4 + r.target.size() + c.size() + r.params.bytes.size();
    const std::size_t at = out.size();
    out.reserve(at + size);
    out.resize(at + header_size + 4);
    write_header(out.data() + at, message_type::request, compression_status::none, static_cast<std::int32_t>(size));
    detail::store_le<std::int32_t>(out.data() + at + header_size, request_id);
    detail::append_bytes(out, r.target);
    detail::append_bytes(out, c);
    detail::append_bytes(out, r.params.bytes);
    return size;
}

void batch_builder::add(byte_view request_message) {
    if (out_.empty()) out_.resize(header_size + 4);  // header and count, filled in by finish()
    detail::append_bytes(out_, request_message.subspan(header_size + 4));
    ++count_;
}

byte_buffer batch_builder::finish() {
    if (out_.empty()) out_.resize(header_size + 4);
    write_header(out_.data(), message_type::batch_request, compression_status::none,
                 static_cast<std::int32_t>(out_.size()));
    detail::store_le<std::int32_t>(out_.data() + header_size, count_);
    count_ = 0;
    return std::exchange(out_, {});
}

batch_reader::batch_reader(byte_view body) noexcept {
    input_stream in(body);
    count_ = in.read_int();
    if (!in.ok()) {
        ec_ = in.error();
        count_ = 0;
    } else if (count_ < 0) {
        ec_ = errc::negative_size;
        count_ = 0;
    }
    rest_ = in.rest();
}

boost::system::result<request_view> batch_reader::next() {
    if (ec_) return ec_;
    if (read_ >= count_) return make_error_code(errc::out_of_bounds);
    input_stream in(rest_);
    request_view r;  // request_id stays 0: batched requests are oneway
    read_request_fields(in, r);
    if (!in.ok()) {
        ec_ = in.error();
        return ec_;
    }
    rest_ = in.rest();
    ++read_;
    return r;
}

}  // namespace moraine::protocol
