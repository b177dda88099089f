#pragma once
// One memory budget for the messages the shards hold on their way out (docs/architecture.md,
// "What is bounded"): readers of high-volume sources stop reading while it is spent.
#include <atomic>
#include <cstddef>
#include <memory>

namespace moraine::net {

/** The bytes every shard holds in its connections' outbound queues, plus the bytes of events in
    transit between shards, against one budget. Each shard writes only its own slots (no atomic
    read-modify-write, no cache line shared by two writers); a reader sums them. A connection
    whose peer can outrun the subscribers (a publisher's, IceStorm's connection to the server
    endpoint) stops reading when held() reaches the budget and reads again below the low
    watermark (3/4 of it), so the sender's TCP window closes instead of the router's memory
    growing (ice_connection::reads_held). Thread-safe as described. */
class memory_budget {
public:
    /// @param shards number of slots; @param budget_bytes the budget, 0 = none (never spent).
    memory_budget(std::size_t shards, std::size_t budget_bytes);

    std::size_t budget() const noexcept { return budget_; }
    std::size_t low_watermark() const noexcept { return budget_ - budget_ / 4; }

    /// Shard `shard` holds `bytes` in its outbound queues now. Call only on that shard's thread.
    void set_queued(unsigned shard, std::size_t bytes) noexcept { slots_[shard].queued.store(bytes, std::memory_order_relaxed); }
    /// Shard `shard` posted `bytes` of events to other shards. Only on that shard's thread.
    void sent(unsigned shard, std::size_t bytes) noexcept { bump(slots_[shard].sent, bytes); }
    /// Shard `shard` took `bytes` of posted events off its queue. Only on that shard's thread.
    void received(unsigned shard, std::size_t bytes) noexcept { bump(slots_[shard].received, bytes); }

    /// Bytes held now, summed over the shards (a moment's view: each slot is read once).
    std::size_t held() const noexcept;
    /// The budget is spent: held() >= budget() (never with budget 0).
    bool spent() const noexcept { return budget_ != 0 && held() >= budget_; }
    /// held() is below the low watermark (or there is no budget).
    bool below_low() const noexcept { return budget_ == 0 || held() < low_watermark(); }

private:
    /// One writer per counter: a relaxed load and store, no locked instruction.
    static void bump(std::atomic<std::size_t>& c, std::size_t n) noexcept {
        c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    struct alignas(64) slot {
        std::atomic<std::size_t> queued{0};
        std::atomic<std::size_t> sent{0};      // monotonic
        std::atomic<std::size_t> received{0};  // monotonic
    };
    std::size_t shards_;
    std::size_t budget_;
    std::unique_ptr<slot[]> slots_;
};

}  // namespace moraine::net
