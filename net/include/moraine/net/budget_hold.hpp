#pragma once
// Whether a reader is held by the shards' memory budget: stop at the budget, read again below its
// low watermark (docs/architecture.md, "What is bounded": the memory budget).
#include <moraine/net/memory_budget.hpp>

#include <cstdint>

namespace moraine::net {

/** The hysteresis of one reader against a memory_budget, one byte: `free` → `held` once the
    budget is spent, `held` → `free` once what the shards hold is below the low watermark (3/4 of
    the budget); no other transition. Between the two it stays as it was, so a reader near the
    budget does not flap between reading and waiting on every look. Used by the connections that
    hold for the budget (ice_connection::reads_held) and by the udp Publish endpoint's receiver.
    Shard-local: owned by its reader; the budget it reads is shared (relaxed loads, no writes). */
class budget_hold {
public:
    /// Looks at `budget` and moves as above. O(shards): sums the budget's slots once.
    /// @return true if this look moved it from free to held (count it: moraine_reads_held_total).
    bool update(const memory_budget& budget) noexcept {
        const bool was = held();
        v_ = (was ? !budget.below_low() : budget.spent()) ? value::held : value::free;
        return held() && !was;
    }
    /// True from the look that found the budget spent until one that finds it below the low watermark.
    bool held() const noexcept { return v_ == value::held; }

private:
    enum class value : std::uint8_t { free, held };
    value v_ = value::free;
};

}  // namespace moraine::net
