// bzip2 message compression (docs/ice-wire.md §11).
#include <moraine/protocol/compression.hpp>

#include <moraine/protocol/error.hpp>

#include "detail/little_endian.hpp"

#include <bzlib.h>

#include <limits>
#include <utility>

namespace moraine::protocol {
namespace {

constexpr std::size_t size_prefix_bytes = 4;
// Ice compresses with the smallest bzip2 block (100k): the stream starts "BZh1".
constexpr int block_size_100k = 1;

char* as_bz(std::byte* p) noexcept { return reinterpret_cast<char*>(p); }
char* as_bz(const std::byte* p) noexcept { return const_cast<char*>(reinterpret_cast<const char*>(p)); }

}  // namespace

boost::system::result<byte_buffer> decompress_message(const frame_view& frame, const limits& lim) {
    if (frame.header.compression != compression_status::compressed) return make_error_code(errc::bad_compression);
    const byte_view body = frame.body();
    if (body.size() < size_prefix_bytes) return make_error_code(errc::bad_compression);
    const auto total = detail::load_le<std::int32_t>(body.data());
    // Checked before allocating: the prefix comes from the peer.
    if (total <= static_cast<std::int32_t>(header_size)) return make_error_code(errc::illegal_message_size);
    if (lim.max_message_bytes != 0 && static_cast<std::size_t>(total) > lim.max_message_bytes)
        return make_error_code(errc::message_too_large);
    const byte_view stream = body.subspan(size_prefix_bytes);
    if (stream.size() > std::numeric_limits<unsigned>::max()) return make_error_code(errc::bad_compression);

    byte_buffer out(static_cast<std::size_t>(total));
    write_header(out.data(), frame.header.type, compression_status::accepted, total);
    auto out_len = static_cast<unsigned>(out.size() - header_size);
    const int rc = BZ2_bzBuffToBuffDecompress(as_bz(out.data() + header_size), &out_len, as_bz(stream.data()),
                                              static_cast<unsigned>(stream.size()), 0, 0);
    // The stream must decode to exactly the announced size: a shorter result is a lie too.
    if (rc != BZ_OK || out_len != out.size() - header_size) return make_error_code(errc::bad_compression);
    return out;
}

std::optional<frame_view> decompress_frame(const frame_view& frame, const limits& lim, byte_buffer& storage,
                                           boost::system::error_code& ec) {
    ec.clear();
    auto plain = decompress_message(frame, lim);
    if (!plain) {
        ec = plain.error();
        return std::nullopt;
    }
    storage = std::move(*plain);
    // decompress_message wrote this header and checked the size against `lim` already.
    auto inner = parse_frame(storage, limits{0}, ec);
    if (!inner || inner->size() != storage.size()) {
        if (!ec) ec = errc::bad_compression;
        return std::nullopt;
    }
    inner->header.compression = compression_status::compressed;
    return inner;
}

boost::system::result<byte_buffer> compress_message(byte_view message) {
    if (message.size() < header_size || message.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        return make_error_code(errc::bad_compression);
    const byte_view body = message.subspan(header_size);
    // bzip2's documented worst case: 1% larger plus 600 bytes.
    const std::size_t bound = body.size() + body.size() / 100 + 600;
    byte_buffer out(header_size + size_prefix_bytes + bound);
    auto out_len = static_cast<unsigned>(bound);
    const int rc = BZ2_bzBuffToBuffCompress(as_bz(out.data() + header_size + size_prefix_bytes), &out_len,
                                            as_bz(body.data()), static_cast<unsigned>(body.size()), block_size_100k,
                                            0, 0);
    if (rc != BZ_OK) return make_error_code(errc::bad_compression);
    out.resize(header_size + size_prefix_bytes + out_len);
    const auto type = static_cast<message_type>(message[8]);
    write_header(out.data(), type, compression_status::compressed, static_cast<std::int32_t>(out.size()));
    detail::store_le<std::int32_t>(out.data() + header_size, static_cast<std::int32_t>(message.size()));
    return out;
}

void compress_for_peer(byte_buffer& message) {
    if (message.size() >= compression_threshold) {
        if (auto packed = compress_message(message)) {
            message = std::move(*packed);
            return;
        }
    }
    message[9] = std::byte{1};  // the header's compression status
}

}  // namespace moraine::protocol
