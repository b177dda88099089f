#pragma once
// The listening sockets a takeover handed to this process (docs/takeover.md): held here from
// the moment they arrive until each service, instead of binding, takes those of its endpoints.
#include <moraine/net/takeover_message.hpp>
#include <moraine/net/unique_fd.hpp>

#include <vector>

namespace moraine::net {

/// A listening socket received from the running process: what it serves, and the descriptor.
struct inherited_socket {
    listener_record record;
    unique_fd fd;
};

/// The sockets received in a takeover, until shard_set::listen (or the metrics server) takes them.
class inherited_listeners {
public:
    explicit inherited_listeners(std::vector<inherited_socket> sockets) : sockets_(std::move(sockets)) {}

    /// Every socket of `id` (one per shard of the old process, in shard order), removed from here;
    /// empty if there is none.
    std::vector<inherited_socket> take(const listener_id& id);

    /// The records of the sockets no service took (a configuration that changed under us).
    std::vector<listener_record> left() const;

    /// The number of sockets held.
    std::size_t size() const noexcept { return sockets_.size(); }

private:
    std::vector<inherited_socket> sockets_;
};

/** Compares what the running process listens on with what this configuration will: both must
    name the same endpoints (adapter, endpoint as configured, ordinal), no more and no fewer.
    @throws channel_error naming the first endpoint one has and the other has not. */
void check_same_listeners(const std::vector<listener_record>& offered, const std::vector<listener_id>& expected);

/** Checks that each descriptor is what its record says: a socket of the record's kind, listening
    if a stream socket, bound to the port of `record.bound`.
    @throws channel_error naming the first one that is not. */
void check_descriptors(const std::vector<inherited_socket>& sockets);

/// "Glacier2.Client 'tcp -h * -p 4063'" (+ " #2" for an ordinal), for messages.
std::string describe(const listener_id& id);

}  // namespace moraine::net
