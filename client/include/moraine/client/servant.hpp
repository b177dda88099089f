#pragma once
// Callback servants hosted by a client: what they receive and what they answer (docs/glacier2.md §6).
#include <moraine/client/error.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/reply.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace moraine::client {

/// A request the router delivered on the session's connection. A loan of the connection's
/// read buffer: valid only during the servant call; copy what must outlive it.
struct incoming_request {
    protocol::identity_view id;   ///< `<session category>/<servant name>`
    std::string_view facet;       ///< empty = default facet
    std::string_view operation;
    std::uint8_t mode = 0;        ///< protocol::operation_mode as sent
    protocol::encapsulation_view params;
    bool oneway = false;          ///< true: the answer is discarded, nothing is sent back
};

/// What a servant answers; the client turns it into a reply (docs/ice-wire.md §6).
struct dispatch_result {
    protocol::reply_status status = protocol::reply_status::ok;
    /// ok / user_exception: a whole encapsulation (see params.hpp). Empty for ok = void result.
    protocol::byte_buffer encaps;
    /// unknown_*: the text sent to the caller.
    std::string text;

    /// OK with results `encaps` (empty = void, sent as an empty 1.1 encapsulation).
    static dispatch_result ok(protocol::byte_buffer encaps = {});
    /// A user exception `type_id` (e.g. "::Demo::Boom") with already-encoded members, in the
    /// 1.1 compact format (as an Ice servant without `format:sliced` sends it).
    static dispatch_result user_exception(std::string_view type_id, protocol::byte_view members);
    /// ObjectNotExist / FacetNotExist / OperationNotExist: the reply carries the request's
    /// identity, facet and operation.
    static dispatch_result not_exist(protocol::reply_status status);
    /// Unknown{Local,User,}Exception (status 5/6/7) with a text.
    static dispatch_result unknown(protocol::reply_status status, std::string text);
};

/// A servant: called on the session's executor for each request to its identity, must not
/// block. An exception it throws becomes UnknownException with the exception's what().
using servant = std::function<dispatch_result(const incoming_request&)>;

/// Appends the reply message for `r` answering request `request_id` (`req` supplies the
/// identity, facet and operation of a not-exist reply).
void write_dispatch_reply(protocol::byte_buffer& out, std::int32_t request_id, const incoming_request& req,
                          const dispatch_result& r);

}  // namespace moraine::client
