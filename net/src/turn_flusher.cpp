#include <moraine/net/turn_flusher.hpp>

#include <moraine/net/ice_connection.hpp>

namespace moraine::net {

namespace {
/// Connections ahead of the one being flushed whose lines are asked for (see flush_all).
constexpr std::size_t prefetch_ahead = 4;
}  // namespace

void turn_flusher::mark(std::shared_ptr<ice_connection> c) {
    marked_.push_back(std::move(c));
    if (std::exchange(posted_, true)) return;
    asio::post(io_, [this] { flush_all(); });
}

void turn_flusher::flush_all() {
    posted_ = false;
    // A flush may queue more (a close after a write error runs hooks that write elsewhere):
    // those marks start the next turn's list.
    flushing_.swap(marked_);
    // After a fan-out, thousands of connections whose lines the fan-out itself pushed out of the
    // cache: each is asked for a few places ahead, its queued frame one place ahead.
    const std::size_t n = flushing_.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i + prefetch_ahead < n) flushing_[i + prefetch_ahead]->prefetch_for_flush();
        if (i + 1 < n) flushing_[i + 1]->prefetch_queue();
        flushing_[i]->flush_turn();
    }
    flushing_.clear();
}

}  // namespace moraine::net
