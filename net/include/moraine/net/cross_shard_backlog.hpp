#pragma once
// Back-pressure across shards: what one connection posted to other shards and they have not handled.
#include <atomic>
#include <cstddef>

namespace moraine::net {

/** Bytes a connection has posted to other shards (shard_set::invoke_on) that they have not
    handled yet. A shard that falls behind would otherwise let another shard's reader grow its
    queue without bound: the reader pauses above a high watermark, and the shard that brings the
    count below the low one wakes it. The one piece of state two shards share, two atomics; the
    wake-up itself is an ordinary message. */
class cross_shard_backlog {
public:
    /// On the reader's shard: `n` more bytes posted.
    void add(std::size_t n) noexcept { bytes_.fetch_add(n); }

    /// On the handling shard: `n` bytes handled. @return true if the reader paused and must now
    /// be woken (the count fell to `low` or below); exactly one caller gets true per pause.
    bool handled(std::size_t n, std::size_t low) noexcept {
        const std::size_t left = bytes_.fetch_sub(n) - n;
        return left <= low && paused_.exchange(false);
    }

    /// On the reader's shard, before each read: true to stop reading until woken.
    bool should_pause(std::size_t high) noexcept {
        if (bytes_.load() < high) return false;
        paused_.store(true);
        // Re-read after announcing the pause: a handler that emptied the backlog in between
        // saw no pause to end, so the reader must not sleep.
        if (bytes_.load() >= high) return true;
        paused_.store(false);
        return false;
    }

    std::size_t bytes() const noexcept { return bytes_.load(); }

private:
    std::atomic<std::size_t> bytes_{0};
    std::atomic<bool> paused_{false};
};

}  // namespace moraine::net
