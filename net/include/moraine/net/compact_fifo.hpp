#pragma once
// A FIFO that holds no memory while empty: the per-connection and per-subscriber queues of many
// idle sessions (perf/README.md, "Idle RSS per session").
#include <cstddef>
#include <utility>
#include <vector>

namespace moraine::net {

/** First-in first-out sequence of T stored in one vector with a moving front index.
    Unlike std::deque (libstdc++ allocates a 64-byte map and a 512-byte block even for an empty
    one), an empty compact_fifo owns nothing once it was emptied with more than `keep_capacity`
    slots, and a default-constructed one never allocated. Popping the front is O(1) (the slot is
    reset to T{} so a popped shared_ptr or buffer is released at once); pushing is amortised O(1):
    the live items are moved down only when at least half the vector is popped slots.
    T must be default-constructible and movable. Not thread-safe. */
template <class T>
class compact_fifo {
public:
    using iterator = typename std::vector<T>::iterator;
    using const_iterator = typename std::vector<T>::const_iterator;

    /// Slots an emptied queue may keep for its next use (a connection that gets one or a few
    /// messages per loop turn reuses them instead of allocating each time).
    static constexpr std::size_t keep_capacity = 4;

    bool empty() const noexcept { return head_ == items_.size(); }
    std::size_t size() const noexcept { return items_.size() - head_; }
    /// Slots allocated (live, popped and free), for tests and trimming.
    std::size_t capacity() const noexcept { return items_.capacity(); }

    T& front() noexcept { return items_[head_]; }
    const T& front() const noexcept { return items_[head_]; }
    /// The `i`-th item from the front (i < size()).
    T& operator[](std::size_t i) noexcept { return items_[head_ + i]; }
    const T& operator[](std::size_t i) const noexcept { return items_[head_ + i]; }

    iterator begin() noexcept { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
    iterator end() noexcept { return items_.end(); }
    const_iterator begin() const noexcept { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
    const_iterator end() const noexcept { return items_.end(); }

    void push_back(T v) {
        // Full vector with popped slots in front: reuse them when they are at least half of it,
        // else grow (moving the live items down each time would make pushes O(n)).
        if (items_.size() == items_.capacity() && head_ > 0 && head_ * 2 >= items_.size()) compact();
        items_.push_back(std::move(v));
    }

    void pop_front() {
        items_[head_] = T{};  // release what the item holds now, not when the slot is reused
        if (++head_ == items_.size()) reset();
    }

    /// Removes every item; frees the storage if it has more than keep_capacity slots.
    void clear() noexcept {
        items_.clear();
        reset();
    }

private:
    void reset() noexcept {
        items_.clear();
        head_ = 0;
        if (items_.capacity() > keep_capacity) std::vector<T>().swap(items_);
    }
    void compact() {
        std::move(items_.begin() + static_cast<std::ptrdiff_t>(head_), items_.end(), items_.begin());
        items_.erase(items_.end() - static_cast<std::ptrdiff_t>(head_), items_.end());
        head_ = 0;
    }

    std::vector<T> items_;
    std::size_t head_ = 0;  // items_[0, head_) are popped slots
};

}  // namespace moraine::net
