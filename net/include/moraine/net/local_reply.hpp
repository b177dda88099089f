#pragma once
// Replies to operations the router serves itself, in the encoding of the request.
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>

#include <span>

#include <cstdint>
#include <optional>
#include <string_view>

namespace moraine::net {

/// An OK reply whose encapsulation (encoding `enc`) holds what `write_results` writes.
template <class Fn>
protocol::byte_buffer reply_ok(std::int32_t request_id, protocol::encoding_version enc, Fn&& write_results) {
    protocol::output_stream os(enc);
    const auto start = os.start_encapsulation(enc);
    write_results(os);
    os.end_encapsulation(start);
    protocol::byte_buffer out;
    protocol::write_reply_ok(out, request_id, os.view());
    return out;
}

/// An OK reply with an empty encapsulation (void operations).
protocol::byte_buffer reply_void(std::int32_t request_id, protocol::encoding_version enc);

/// An UnknownLocalException reply (status 5) with Ice's text for the local failure, e.g.
/// e.g. a back end's connection refused: what Glacier2 sends when it cannot reach a back end.
protocol::byte_buffer reply_unknown_local(std::int32_t request_id, std::string_view text);

/** A UserException reply carrying exception `type_id` with one string member `reason` (or no
    member when `reason` is nullopt), in encoding `enc`; `sliced` for operations declared
    ["format:sliced"] (Glacier2's createSession: flags 0x30 and a slice size). */
protocol::byte_buffer reply_user_exception(std::int32_t request_id, protocol::encoding_version enc,
                                           std::string_view type_id, std::optional<std::string_view> reason,
                                           bool sliced);

/** Answers the Ice::Object operations ice_ping, ice_isA, ice_id and ice_ids for an object whose
    type ids are `ids` (sorted, as ice_ids returns them) and most derived type `most_derived`.
    @return the reply; nullopt if `r` is another operation or its parameters are malformed
    (`malformed` is then set). */
std::optional<protocol::byte_buffer> answer_object_op(const protocol::request_view& r,
                                                      std::span<const std::string_view> ids,
                                                      std::string_view most_derived, bool& malformed);

/// OperationNotExist / FacetNotExist / ObjectNotExist for `r`, with its identity, facet and operation.
protocol::byte_buffer reply_not_exist(const protocol::request_view& r, protocol::reply_status status);

}  // namespace moraine::net
