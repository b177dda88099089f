#include <moraine/net/turn_flusher.hpp>

#include <moraine/net/ice_connection.hpp>

namespace moraine::net {

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
    for (auto& c : flushing_) c->flush_turn();
    flushing_.clear();
}

}  // namespace moraine::net
