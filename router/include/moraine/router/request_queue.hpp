#pragma once
// A session's buffered requests in one direction (Glacier2 buffered mode, docs/glacier2.md §5).
#include <moraine/net/compact_fifo.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

namespace moraine::router {

/** FIFO of requests waiting for their flush, with request overriding: an entry carrying a
    non-empty `override_key` replaces, in place, the queued entry with the same key, so a slow
    peer receives only the latest of a stream of updates. The caller builds the key from the
    `_ovrd` value and the target, and only for non-twoway requests (a twoway expects its own reply).
    Shard-local, not thread-safe. `Entry` has `std::string override_key` and `size()` in bytes. */
template <class Entry>
class request_queue {
public:
    /// Queues `e`. @return true if it overrode (replaced) a queued entry, false if appended.
    bool add(Entry e) {
        if (!e.override_key.empty()) {
            auto it = by_key_.find(e.override_key);
            if (it != by_key_.end()) {
                Entry& old = entries_[static_cast<std::size_t>(it->second - first_seq_)];
                bytes_ = bytes_ - old.size() + e.size();
                old = std::move(e);
                return true;
            }
            by_key_.emplace(e.override_key, first_seq_ + entries_.size());
        }
        bytes_ += e.size();
        entries_.push_back(std::move(e));
        return false;
    }

    /// Removes and returns the oldest entry. Precondition: !empty().
    Entry pop() {
        Entry e = std::move(entries_.front());
        entries_.pop_front();
        if (!e.override_key.empty()) {
            auto it = by_key_.find(e.override_key);
            if (it != by_key_.end() && it->second == first_seq_) by_key_.erase(it);
        }
        ++first_seq_;
        bytes_ -= e.size();
        return e;
    }

    const Entry& front() const noexcept { return entries_.front(); }
    bool empty() const noexcept { return entries_.empty(); }
    std::size_t size() const noexcept { return entries_.size(); }
    /// Bytes of the queued messages.
    std::size_t bytes() const noexcept { return bytes_; }

private:
    net::compact_fifo<Entry> entries_;  // empty in unbuffered mode: no memory per session
    std::unordered_map<std::string, std::uint64_t> by_key_;  // override key -> sequence number
    std::uint64_t first_seq_ = 0;                              // sequence number of entries_.front()
    std::size_t bytes_ = 0;
};

}  // namespace moraine::router
