#pragma once
// Where the reply to a callback (or a forwarded request) goes: a connection, possibly on another shard.
#include <moraine/protocol/bytes.hpp>

#include <cstdint>
#include <memory>

namespace moraine::net {

class ice_connection;

/// Where a reply goes: the connection the request came in on (a server-endpoint or topic
/// connection), the shard that owns it, and the request id it used. The weak_ptr is locked only
/// on `shard`; an expired one (the origin closed) drops the reply.
struct callback_route {
    unsigned shard = 0;
    std::weak_ptr<ice_connection> origin;
    std::int32_t request_id = 0;
};

/// Sends `reply` (a whole reply message already carrying route.request_id) back along `route`,
/// crossing to the origin's shard if needed. `from` is the caller's shard index.
class shard_set;
void send_callback_reply(shard_set& shards, unsigned from, const callback_route& route, protocol::byte_buffer reply);

}  // namespace moraine::net
