// One subscriber's delivery state machine (see delivery.hpp; docs/icestorm.md §3).
#include <moraine/icestorm_bridge/delivery.hpp>

#include <algorithm>

namespace moraine::icestorm_bridge {

namespace {

/// IceStorm's windows: one unanswered event for an ordered subscriber, five for another twoway.
constexpr std::size_t ordered_window = 1;
constexpr std::size_t twoway_window = 5;

std::size_t params_size(const event& ev) noexcept { return ev.params ? ev.params->size() : 0; }

}  // namespace

delivery_state::delivery_state(const qos& q, bool twoway) noexcept
    : retry_count_(q.retry_count), max_outstanding_(!twoway ? 0 : q.ordered ? ordered_window : twoway_window) {}

std::size_t delivery_state::max_outstanding() const noexcept { return max_outstanding_; }

delivery_state::offer_result delivery_state::offer(event_ptr ev, clock::time_point now, const delivery_limits& lim) {
    expire(now, lim);
    if (state_ == state::dead) return offer_result::dead;
    if (!resume_if_due(now)) return offer_result::discarded;
    offer_result result = offer_result::queued;
    if (lim.queue_size_max >= 0 && queue_.size() >= static_cast<std::size_t>(lim.queue_size_max)) {
        if (lim.policy == queue_policy::remove_subscriber) {
            fail(delivery_outcome::hard, now, lim);  // IceStorm: a hard error, removed on this publish
            return offer_result::dead;
        }
        if (!queue_.empty()) {
            queue_bytes_ -= params_size(*queue_.front());
            queue_.pop_front();
        }
        result = offer_result::dropped;
    }
    // Moraine's byte bound: the new event is the one dropped, so what is queued stays in order.
    // An empty queue always takes the event, however large.
    if (!queue_.empty() && queue_bytes_ + params_size(*ev) > lim.queue_bytes) return offer_result::dropped;
    queue_bytes_ += params_size(*ev);
    queue_.push_back(std::move(ev));
    return result;
}

std::optional<delivery_state::send> delivery_state::next(clock::time_point now) {
    if (state_ != state::online || queue_.empty()) return std::nullopt;
    if (max_outstanding_ != 0 && outstanding_.size() >= max_outstanding_) return std::nullopt;
    send s{std::move(queue_.front()), 0};
    queue_.pop_front();
    queue_bytes_ -= params_size(*s.ev);
    s.token = take_slot(now);
    return s;
}

std::optional<std::uint64_t> delivery_state::offer_now(clock::time_point now, const delivery_limits& lim) {
    expire(now, lim);
    if (!queue_.empty() || !resume_if_due(now)) return std::nullopt;
    // A count limit of 0 makes every event overflow the queue: offer() applies the policy.
    if (lim.queue_size_max == 0) return std::nullopt;
    if (max_outstanding_ != 0 && outstanding_.size() >= max_outstanding_) return std::nullopt;
    return take_slot(now);
}

bool delivery_state::resume_if_due(clock::time_point now) noexcept {
    if (state_ == state::offline && now >= retry_at_) state_ = state::online;  // the discard interval is over
    return state_ == state::online;
}

std::uint64_t delivery_state::take_slot(clock::time_point now) {
    if (max_outstanding_ == 0) return 0;
    const std::uint64_t token = next_token_++;
    outstanding_.push_back({token, now});
    return token;
}

void delivery_state::completed(std::uint64_t token, delivery_outcome o, clock::time_point now,
                               const delivery_limits& lim) {
    if (token != 0) {
        auto it = std::find_if(outstanding_.begin(), outstanding_.end(), [&](const in_flight& f) { return f.token == token; });
        if (it == outstanding_.end()) return;  // expired already: its failure was counted then
        outstanding_.erase(it);
    }
    if (o == delivery_outcome::ok)
        current_retry_ = 0;  // an answer ends the retrying (the subscriber stays offline until its interval ends)
    else
        fail(o, now, lim);
}

void delivery_state::release(std::uint64_t token) noexcept {
    std::erase_if(outstanding_, [&](const in_flight& f) { return f.token == token; });
}

void delivery_state::expire(clock::time_point now, const delivery_limits& lim) {
    if (lim.send_timeout_ms < 0) return;
    const auto timeout = std::chrono::milliseconds(lim.send_timeout_ms);
    while (!outstanding_.empty() && outstanding_.front().sent + timeout <= now) {
        outstanding_.erase(outstanding_.begin());
        fail(delivery_outcome::transient, now, lim);
    }
}

void delivery_state::fail(delivery_outcome o, clock::time_point now, const delivery_limits& lim) {
    if (state_ == state::dead) return;
    // Several twoway events may fail together: while offline, later failures change nothing.
    if (o != delivery_outcome::hard && state_ == state::offline && now < retry_at_) return;
    if (o != delivery_outcome::hard && (retry_count_ == -1 || current_retry_ < retry_count_)) {
        ++current_retry_;
        retry_at_ = now + std::chrono::seconds(lim.discard_interval_s);
        state_ = state::offline;
    } else {
        state_ = state::dead;
    }
    clear_queue();
}

void delivery_state::clear_queue() noexcept {
    queue_.clear();
    queue_bytes_ = 0;
}

}  // namespace moraine::icestorm_bridge
