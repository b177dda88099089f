#pragma once
// Replies (type 2, docs/ice-wire.md §6).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/identity.hpp>

#include <boost/system/result.hpp>
#include <cstdint>
#include <string_view>

namespace moraine::protocol {

/// The reply status byte.
enum class reply_status : std::uint8_t {
    ok = 0,
    user_exception = 1,
    object_not_exist = 2,
    facet_not_exist = 3,
    operation_not_exist = 4,
    unknown_local_exception = 5,
    unknown_user_exception = 6,
    unknown_exception = 7,
};

/// A decoded reply. A loan of the message body.
struct reply_view {
    std::int32_t request_id = 0;
    reply_status status = reply_status::ok;
    /// Everything after the status byte, copied verbatim when relaying.
    byte_view payload;
};

/// Decodes request id and status (status > 7 → errc::bad_reply_status). The payload is not parsed.
boost::system::result<reply_view> decode_reply(byte_view body) noexcept;

/// Appends a reply message carrying `r`'s status and payload under `request_id`.
/// `compression` goes into header byte 9 (none or accepted; never compressed here).
std::size_t write_reply_message(byte_buffer& out, std::int32_t request_id, const reply_view& r,
                                std::uint8_t compression = 0);

/// Appends an OK reply whose encapsulation is `encaps` (a whole encapsulation: size, version, payload).
std::size_t write_reply_ok(byte_buffer& out, std::int32_t request_id, byte_view encaps);

/// Appends a UserException reply (status 1) whose encapsulation is `encaps`.
std::size_t write_reply_user_exception(byte_buffer& out, std::int32_t request_id, byte_view encaps);

/// Appends a status 2/3/4 reply (ObjectNotExist, FacetNotExist, OperationNotExist): identity, facet, operation.
std::size_t write_reply_not_exist(byte_buffer& out, std::int32_t request_id, reply_status status,
                                  identity_view id, std::string_view facet, std::string_view operation);

/// Appends a status 5/6/7 reply (Unknown*Exception) with a human-readable text.
std::size_t write_reply_unknown(byte_buffer& out, std::int32_t request_id, reply_status status,
                                std::string_view text);

/// For a status 2/3/4 payload: identity, facet, operation (borrowed).
struct not_exist_info {
    identity_view id;
    std::string_view facet;
    std::string_view operation;
};
boost::system::result<not_exist_info> decode_not_exist(byte_view payload);

/// For a status 5/6/7 payload: the text (borrowed).
boost::system::result<std::string_view> decode_unknown_text(byte_view payload) noexcept;

}  // namespace moraine::protocol
