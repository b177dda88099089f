// The shards' memory budget (see memory_budget.hpp).
#include <moraine/net/memory_budget.hpp>

namespace moraine::net {

memory_budget::memory_budget(std::size_t shards, std::size_t budget_bytes)
    : shards_(shards), budget_(budget_bytes), slots_(std::make_unique<slot[]>(shards)) {}

std::size_t memory_budget::held() const noexcept {
    std::size_t queued = 0, sent = 0, received = 0;
    for (std::size_t i = 0; i < shards_; ++i) {
        queued += slots_[i].queued.load(std::memory_order_relaxed);
        sent += slots_[i].sent.load(std::memory_order_relaxed);
        received += slots_[i].received.load(std::memory_order_relaxed);
    }
    // A post can be seen received before its sender's count is: never report less than nothing.
    return queued + (sent > received ? sent - received : 0);
}

}  // namespace moraine::net
