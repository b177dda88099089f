#pragma once
// Where an ice_connection stands in its close: open, Ice's close-connection message on its way,
// or closed (docs/architecture.md, "A connection's life" 6 and "Drain" 3).
#include <cstdint>

#include <boost/assert.hpp>

namespace moraine::net {

/** The close lifecycle of one connection, one byte. Legal transitions, and nothing else:

        open ──queue_close_message──► close_queued ──message_written──► close_written
          │                                │                                │
          └──────────────── close ─────────┴───────── close ────────────────┴──► closed

    - `open`: frames are queued and written; reads go on.
    - `close_queued`: close_gracefully queued Ice's close-connection message (docs/ice-wire.md
      §3.3, graceful close) behind what was queued; nothing may be queued after it, and the
      shard counts it in close_messages_pending until it leaves the queue.
    - `close_written`: that message left the queue (for a layered connection: encoded into the
      wire bytes); the socket stays open until the peer closes it or the shard stops.
    - `closed`: terminal. close() or a takeover's release ran; no byte goes in or out.
    queue_close_message goes straight to close_written when the message left the queue at once.
    Shard-local, like its connection. */
class close_state {
public:
    enum class value : std::uint8_t { open, close_queued, close_written, closed };

    value get() const noexcept { return v_; }
    /// Neither closing nor closed: frames may be queued, the connection may start closing.
    bool open() const noexcept { return v_ == value::open; }
    /// The close-connection message is queued or written, the socket not yet closed.
    bool closing() const noexcept { return v_ == value::close_queued || v_ == value::close_written; }
    bool closed() const noexcept { return v_ == value::closed; }
    /// The close-connection message waits in the queue (counted in close_messages_pending).
    bool message_pending() const noexcept { return v_ == value::close_queued; }

    /** open → close_queued, or → close_written if `still_queued` is false (the enqueue already
        took it out of the queue). @return true if it is now pending (the caller counts it). */
    bool queue_close_message(bool still_queued) noexcept {
        BOOST_ASSERT(v_ == value::open);
        v_ = still_queued ? value::close_queued : value::close_written;
        return still_queued;
    }
    /// close_queued → close_written; no change in any other state. @return true if it moved
    /// (the caller uncounts the pending message).
    bool message_written() noexcept {
        if (v_ != value::close_queued) return false;
        v_ = value::close_written;
        return true;
    }
    /// Any state → closed. @return the state before, so the caller knows whether it already was
    /// closed (close is idempotent) and whether a close message was still pending (uncount it).
    value close() noexcept {
        const value before = v_;
        v_ = value::closed;
        return before;
    }

private:
    value v_ = value::open;
};

}  // namespace moraine::net
