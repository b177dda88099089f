#pragma once
// A connection's outbound queue, bounded in bytes with high/low watermarks (docs/style.md §6).
#include <moraine/protocol/bytes.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/compact_fifo.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace moraine::net {

/// One message to send: an owned `head` rewritten per hop (header, request id, ...) and an
/// optional immutable `tail` shared by many frames (one event body for every subscriber).
struct outbound_frame {
    protocol::byte_buffer head;
    std::shared_ptr<const protocol::byte_buffer> tail;
    std::size_t size() const noexcept { return head.size() + (tail ? tail->size() : 0); }
};

/// What enqueueing did.
enum class enqueue_result {
    queued,      ///< below the high watermark
    above_high,  ///< queued, and the queue is at or above its high watermark: pause the feeder
    over_limit,  ///< not queued: the queue would exceed its hard limit (slow consumer)
};

/// FIFO of frames with byte accounting. Shard-local, not thread-safe.
class write_queue {
public:
    /// @param high bytes at which enqueue reports above_high; @param low bytes below which
    /// consume reports it fell back; @param max hard bound in bytes (0 = none).
    write_queue(std::size_t high, std::size_t low, std::size_t max) noexcept
        : high_(high), low_(low), max_(max) {}

    /// Appends `f` unless that would pass the hard limit. With coalesce(true), a frame without a
    /// shared tail is appended to the bytes of the last queued frame when that one has no tail,
    /// is not part of a write in flight and stays within coalesce_max bytes: the messages a loop
    /// turn queues for one connection (a burst of events) then leave as a few large buffers in
    /// one writev, instead of one iovec (and one allocation kept alive) each.
    enqueue_result push(outbound_frame f);
    /// Turns coalescing on or off (off by default; a WebSocket connection, which writes one
    /// frame per Ice message, keeps it off).
    void coalesce(bool on) noexcept { coalesce_ = on; }
    /// The largest head coalescing makes (bytes).
    static constexpr std::size_t coalesce_max = 64 * 1024;

    /// Fills `out` with buffers for up to `max_frames` frames from the front (one writev) and
    /// remembers how many frames that was, for consume_gathered.
    void gather(std::vector<asio::const_buffer>& out, std::size_t max_frames);

    /// The number of frames last gathered, and the `i`-th of them (i < gathered()), for a
    /// transport that writes frame by frame (WebSocket: one Ice message per frame).
    std::size_t gathered() const noexcept { return gathered_; }
    const outbound_frame& gathered_frame(std::size_t i) const noexcept { return frames_[i]; }

    /// Drops the frames last gathered (they were written in full).
    /// @return true if the queue was above its high watermark and is now below the low one.
    bool consume_gathered();

    /// Drops the first `n` bytes of the queue after a short write of the gathered frames: whole
    /// frames are removed, a frame written in part keeps only its unwritten bytes (copied into
    /// its head; a shared tail is released). `n` must not exceed bytes().
    /// @return as consume_gathered.
    bool consume(std::size_t n);

    bool empty() const noexcept { return frames_.empty(); }
    /// Asks the CPU for the first queued frame and its head, ahead of gather(). A hint only.
    void prefetch() const noexcept {
        if (frames_.empty()) return;
        __builtin_prefetch(&frames_.front());
        __builtin_prefetch(frames_.front().head.data());
    }
    std::size_t bytes() const noexcept { return bytes_; }
    std::size_t frames() const noexcept { return frames_.size(); }
    /// What one queued frame costs beside its bytes: its slot in the queue (an outbound_frame,
    /// with the queue's growth) and the allocator's header and rounding for its head.
    static constexpr std::size_t frame_overhead = 96;
    /// The memory the queue takes for its frames (bytes): their bytes, the spare capacity that
    /// coalescing left in their heads, and frame_overhead per frame. What the memory budget counts.
    std::size_t footprint() const noexcept { return bytes_ + slack_ + frames_.size() * frame_overhead; }
    bool above_high() const noexcept { return above_high_; }
    void clear() noexcept;

private:
    compact_fifo<outbound_frame> frames_;  // owns no memory while empty (idle connections)
    std::size_t bytes_ = 0;
    std::size_t gathered_ = 0;
    bool above_high_ = false;
    bool coalesce_ = false;
    std::size_t slack_ = 0;  // spare capacity of coalesced heads (their capacity - size)
    std::size_t high_, low_, max_;
};

}  // namespace moraine::net
