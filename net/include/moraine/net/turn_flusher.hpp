#pragma once
// Writes collected during one loop turn of a shard, flushed once at the turn's end.
#include <moraine/net/asio.hpp>

#include <memory>
#include <vector>

namespace moraine::net {

class ice_connection;

/** The connections of one shard that queued frames during this loop turn. The first mark of a
    turn posts one handler to the shard's io_context (concurrency hint 1: it joins the queue
    behind every completion already ready, the rest of this epoll batch), so what a turn
    produces for one connection (the events of a fan-out, replies, requests to one back end)
    leaves in one writev instead of one write per message. Shard-local, not thread-safe. */
class turn_flusher {
public:
    explicit turn_flusher(asio::io_context& io) noexcept : io_(io) {}

    /// Calls `c->flush_turn()` at the end of this turn. The caller marks a connection at most
    /// once per turn (write_schedule::mark refuses a second).
    void mark(std::shared_ptr<ice_connection> c);

private:
    void flush_all();

    asio::io_context& io_;
    std::vector<std::shared_ptr<ice_connection>> marked_;
    std::vector<std::shared_ptr<ice_connection>> flushing_;  // kept for its capacity
    bool posted_ = false;
};

}  // namespace moraine::net
