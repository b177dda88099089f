#pragma once
// The read side of an ice_connection: its one pending wait, and whether reading stopped for good.
#include <cstdint>

#include <boost/assert.hpp>

namespace moraine::net {

/** Whether a connection's reader has a wait pending (readability, or the pause timer while its
    reads are paused, held by the memory budget or stopped), and whether reading stopped for
    good, one byte. Legal transitions, and nothing else:

        idle ──arm──► waiting ──woke──► idle
         │               │
        stop            stop
         ▼               ▼
        stopped ◄─woke── stopped_waiting
           └──────arm──────►┘

    - At most one wait is pending: arm() refuses a second, so a connection holds exactly one
      handler (and one `self`) while it waits, and a resume never doubles its reads.
    - `stopped`: on_frame (or the codec's end) returned false; every wait armed from then on is
      on the pause timer, until the connection closes. Nothing leaves it. (A readability wait
      armed before the stop still reads once: ice_connection asks stopped() when it arms.)
    Why reading pauses (a full queue, a back end's, the budget: ice_connection::reads_paused,
    budget_hold) is asked afresh before each wait and is not kept here. The values are bits
    (waiting = 1, stopped = 2). Shard-local, like its connection. */
class read_gate {
public:
    enum class value : std::uint8_t { idle = 0, waiting = 1, stopped = 2, stopped_waiting = 3 };

    value get() const noexcept { return v_; }
    /// A wait is pending (its handler will call woke()).
    bool waiting() const noexcept { return (bits() & waiting_bit) != 0; }
    /// Reading stopped for good: the reader waits only for the close.
    bool stopped() const noexcept { return (bits() & stopped_bit) != 0; }

    /// idle → waiting, stopped → stopped_waiting. @return false, changing nothing, if a wait is
    /// pending already (the caller must not start another).
    bool arm() noexcept {
        if (waiting()) return false;
        v_ = static_cast<value>(bits() | waiting_bit);
        return true;
    }
    /// The pending wait completed (or was cancelled): waiting → idle, stopped_waiting → stopped.
    void woke() noexcept {
        BOOST_ASSERT(waiting());
        v_ = static_cast<value>(bits() & ~waiting_bit);
    }
    /// Reading stops for good: idle → stopped, waiting → stopped_waiting (a wait already pending
    /// stays pending).
    void stop() noexcept { v_ = static_cast<value>(bits() | stopped_bit); }

private:
    static constexpr std::uint8_t waiting_bit = 1, stopped_bit = 2;
    std::uint8_t bits() const noexcept { return static_cast<std::uint8_t>(v_); }
    value v_ = value::idle;
};

}  // namespace moraine::net
