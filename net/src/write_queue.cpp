#include <moraine/net/write_queue.hpp>

#include <algorithm>

namespace moraine::net {

namespace {
/// Spare capacity of a frame's head: coalescing grows heads geometrically, and the budget must
/// count what they take, not only what they hold.
std::size_t spare(const outbound_frame& f) noexcept { return f.head.capacity() - f.head.size(); }
}  // namespace

enqueue_result write_queue::push(outbound_frame f) {
    const std::size_t n = f.size();
    if (max_ != 0 && bytes_ + n > max_) return enqueue_result::over_limit;
    bytes_ += n;
    // The last frame may grow only if no write in flight points at it (gathered frames are the
    // first gathered_ ones) and neither side has a shared tail to keep in place.
    auto* last = coalesce_ && !f.tail && frames_.size() > gathered_ ? &frames_[frames_.size() - 1] : nullptr;
    if (last && !last->tail && last->head.size() + f.head.size() <= coalesce_max) {
        slack_ -= spare(*last);
        last->head.insert(last->head.end(), f.head.begin(), f.head.end());
        slack_ += spare(*last);
    } else {
        slack_ += spare(f);
        frames_.push_back(std::move(f));
    }
    if (bytes_ >= high_) above_high_ = true;
    return above_high_ ? enqueue_result::above_high : enqueue_result::queued;
}

void write_queue::gather(std::vector<asio::const_buffer>& out, std::size_t max_frames) {
    out.clear();
    gathered_ = 0;
    for (const auto& f : frames_) {
        if (gathered_ == max_frames) break;
        out.emplace_back(f.head.data(), f.head.size());
        if (f.tail && !f.tail->empty()) out.emplace_back(f.tail->data(), f.tail->size());
        ++gathered_;
    }
}

bool write_queue::consume_gathered() {
    for (; gathered_ > 0; --gathered_) {
        bytes_ -= frames_.front().size();
        slack_ -= spare(frames_.front());
        frames_.pop_front();
    }
    if (above_high_ && bytes_ < low_) {
        above_high_ = false;
        return true;
    }
    return false;
}

bool write_queue::consume(std::size_t n) {
    gathered_ = 0;
    while (n > 0 && !frames_.empty() && frames_.front().size() <= n) {
        n -= frames_.front().size();
        bytes_ -= frames_.front().size();
        slack_ -= spare(frames_.front());
        frames_.pop_front();
    }
    if (n > 0 && !frames_.empty()) {
        // A frame written in part: keep its rest as one owned head (rare: the socket was full).
        auto& f = frames_.front();
        protocol::byte_buffer rest;
        rest.reserve(f.size() - n);
        const std::size_t from_head = std::min(n, f.head.size());
        rest.insert(rest.end(), f.head.begin() + static_cast<std::ptrdiff_t>(from_head), f.head.end());
        if (f.tail) rest.insert(rest.end(), f.tail->begin() + static_cast<std::ptrdiff_t>(n - from_head), f.tail->end());
        slack_ -= spare(f);
        f = outbound_frame{std::move(rest), {}};
        slack_ += spare(f);
        bytes_ -= n;
    }
    if (above_high_ && bytes_ < low_) {
        above_high_ = false;
        return true;
    }
    return false;
}

void write_queue::clear() noexcept {
    frames_.clear();
    bytes_ = 0;
    slack_ = 0;
    gathered_ = 0;
    above_high_ = false;
}

}  // namespace moraine::net
