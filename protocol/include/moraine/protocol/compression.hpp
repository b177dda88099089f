#pragma once
// bzip2 message compression (docs/ice-wire.md §11).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/frame_parser.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>
#include <optional>

namespace moraine::protocol {

/// Messages shorter than this are never compressed (Ice's rule).
inline constexpr std::size_t compression_threshold = 100;

/// Decompresses a status-2 message: checks the int32 uncompressed-size prefix (> 14 and
/// <= lim.max_message_bytes unless 0) and the bzip2 stream.
/// @return the whole uncompressed message: header with compression byte 1 and the true size, then the body.
/// Errors: errc::bad_compression, ::illegal_message_size, ::message_too_large.
boost::system::result<byte_buffer> decompress_message(const frame_view& frame, const limits& lim);

/** The message a compressed (status 2) frame carries: decompress_message into `storage`, which
    must then hold exactly one whole message. The returned header keeps compression status 2
    (its bytes say 1), so the receiver knows the peer compresses and may compress its reply.
    Clears `ec` on entry.
    @return a view borrowing `storage`; nullopt with `ec` set to decompress_message's error, or
            errc::bad_compression when the decompressed bytes are not one message. */
std::optional<frame_view> decompress_frame(const frame_view& frame, const limits& lim, byte_buffer& storage,
                                           boost::system::error_code& ec);

/// Compresses a whole uncompressed message (header + body) into status-2 form: header (status 2,
/// compressed total size), int32 uncompressed total size, bzip2 stream (block size 100k x1) of the body.
/// @return the compressed message, or errc::bad_compression if bzip2 fails.
boost::system::result<byte_buffer> compress_message(byte_view message);

/// Prepares the whole uncompressed `message` for a hop that compresses, as Ice does for a
/// compressing proxy: at least compression_threshold bytes, it is replaced by its compressed form
/// (status 2); a smaller one, or one bzip2 cannot compress, keeps its bytes with status 1
/// ("the reply may be compressed").
void compress_for_peer(byte_buffer& message);

}  // namespace moraine::protocol
