#pragma once
// The write side of an ice_connection: whether it waits for this turn's flush (turn_flusher),
// and whether an asynchronous write is in flight.
#include <cstdint>

#include <boost/assert.hpp>

namespace moraine::net {

/** When a connection's queued frames go out next, one byte: at the end of this loop turn (it is
    marked on the shard's turn_flusher), after the asynchronous write in flight, both, or neither.
    Legal transitions, and nothing else:

         idle ◄────────unmark────────── marked
          │ ▲ ──────────mark──────────►  │ ▲
  begin_write end_write         begin_write end_write
          ▼ │                            ▼ │
       in_flight ◄─────unmark───── marked_in_flight

    - mark: the first frame a turn queues while nothing is in flight (schedule_write); the
      flusher then calls flush_turn once, so a second mark in the turn is refused. Never while a
      write is in flight: that write takes the new frames next.
    - unmark: flush_turn, at the turn's end, for each mark. A flush without one changes nothing
      (turn_flusher::mark called for the connection directly, beside its own enqueue's mark).
    - begin_write / end_write: an asynchronous write (asio owns the buffers meanwhile) starts /
      completes or fails. One completing with more queued begins the next at once.
    - `marked_in_flight`: a layered connection marked this turn whose read then answered its
      peer (a WebSocket pong, TLS bytes) with more than the socket took: send_raw starts a write,
      and the turn's flush finds it in flight and leaves the frames to it.
    A close changes nothing here: the write in flight still completes (aborted), the flush still
    comes. The values are bits (marked = 1, in_flight = 2). Shard-local, like its connection. */
class write_schedule {
public:
    enum class value : std::uint8_t { idle = 0, marked = 1, in_flight = 2, marked_in_flight = 3 };

    value get() const noexcept { return v_; }
    /// Neither marked nor writing: nothing of this connection is on its way to the socket.
    bool idle() const noexcept { return v_ == value::idle; }
    /// On the shard's turn_flusher list: flush_turn comes at the end of this turn.
    bool marked() const noexcept { return (bits() & marked_bit) != 0; }
    /// An asynchronous write is under way.
    bool in_flight() const noexcept { return (bits() & in_flight_bit) != 0; }

    /// idle → marked. @return false, changing nothing, if marked already (the flusher holds it).
    bool mark() noexcept {
        BOOST_ASSERT(!in_flight());
        if (marked()) return false;
        v_ = value::marked;
        return true;
    }
    /// The turn's flush runs: marked → idle, marked_in_flight → in_flight; no change unmarked.
    void unmark() noexcept { v_ = static_cast<value>(bits() & ~marked_bit); }
    /// An asynchronous write starts: idle → in_flight, marked → marked_in_flight.
    void begin_write() noexcept {
        BOOST_ASSERT(!in_flight());
        v_ = static_cast<value>(bits() | in_flight_bit);
    }
    /// It completed (or failed, or was aborted by a close): in_flight → idle,
    /// marked_in_flight → marked.
    void end_write() noexcept {
        BOOST_ASSERT(in_flight());
        v_ = static_cast<value>(bits() & ~in_flight_bit);
    }

private:
    static constexpr std::uint8_t marked_bit = 1, in_flight_bit = 2;
    std::uint8_t bits() const noexcept { return static_cast<std::uint8_t>(v_); }
    value v_ = value::idle;
};

}  // namespace moraine::net
