#pragma once
// How far an ice_connection is in its start-up: handshakes, the back end's validate connection,
// then reading and writing (docs/architecture.md, "A connection's life" 1; docs/ice-wire.md §3.1).
#include <cstdint>

#include <boost/assert.hpp>

namespace moraine::net {

/** A connection's start-up, one byte: whether its read and write loops run, and whether queued
    frames may be written. Legal transitions, and nothing else:

        starting ──hold_writes──► handshaking ──release_writes──► starting
           │                          │
      start_loops                start_loops
           ▼                          ▼
        running ◄──release_writes── validating

    - `starting` (the initial state): no loops yet; frames queued now are written at the turn's
      end (an accepted connection's validate connection, queued just before start_loops).
    - `handshaking`: no loops, writes held: an accepted connection's TLS handshake or WebSocket
      upgrade owns the codec, or an outgoing connection connects and handshakes.
    - `validating`: loops run, writes held: a back end's first message must be its validate
      connection; Ice's connecting side writes nothing before it (docs/ice-wire.md §3.1).
    - `running`: loops run and frames go out; it stays so (closing is close_state's business).
    The values are bits (loops = 1, writes = 2), so each question below is one test of one byte on
    the per-event path (schedule_write, flush_turn). Shard-local, like its connection. */
class startup_state {
public:
    enum class value : std::uint8_t { handshaking = 0, validating = 1, starting = 2, running = 3 };

    value get() const noexcept { return v_; }
    /// The read loop runs (and the write path with it): handshakes are over.
    bool loops_started() const noexcept { return (bits() & loops_bit) != 0; }
    /// Queued frames may go to the socket (not while a handshake owns the codec, nor before a
    /// back end's validate connection).
    bool writes_enabled() const noexcept { return (bits() & writes_bit) != 0; }

    /// starting → handshaking: hold queued frames until release_writes.
    void hold_writes() noexcept {
        BOOST_ASSERT(v_ == value::starting);
        v_ = value::handshaking;
    }
    /// handshaking → starting (an accepted connection's handshake ended), validating → running
    /// (the back end's validate connection arrived).
    void release_writes() noexcept {
        BOOST_ASSERT(v_ == value::handshaking || v_ == value::validating);
        v_ = static_cast<value>(bits() | writes_bit);
    }
    /// starting → running, handshaking → validating: the loops start, writes stay as they were.
    void start_loops() noexcept {
        BOOST_ASSERT(!loops_started());
        v_ = static_cast<value>(bits() | loops_bit);
    }

private:
    static constexpr std::uint8_t loops_bit = 1, writes_bit = 2;
    std::uint8_t bits() const noexcept { return static_cast<std::uint8_t>(v_); }
    value v_ = value::starting;
};

}  // namespace moraine::net
