#include <moraine/net/callback_route.hpp>

#include <moraine/net/ice_connection.hpp>
#include <moraine/net/shard_set.hpp>

namespace moraine::net {

void send_callback_reply(shard_set& shards, unsigned from, const callback_route& route, protocol::byte_buffer reply) {
    if (route.shard == from) {
        if (auto origin = route.origin.lock()) origin->enqueue(std::move(reply));
        return;
    }
    shards.invoke_on(route.shard, [origin = route.origin, reply = std::move(reply)](shard&) mutable {
        if (auto o = origin.lock()) o->enqueue(std::move(reply));
    });
}

}  // namespace moraine::net
