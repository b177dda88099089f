#pragma once
// A connection accepted on a TopicManager or Publish endpoint.
#include <moraine/net/ice_connection.hpp>
#include <moraine/net/takeover_message.hpp>

#include <chrono>
#include <optional>
#include <utility>

namespace moraine::icestorm_bridge {

class topic_service;

/// A peer (publisher, subscriber's manager calls, linked IceStorm, or the router's own back-end
/// connection carrying a session's requests) talking to the topic service.
class topic_connection final : public net::ice_connection {
public:
    topic_connection(net::shard& home, net::transport socket, topic_service& svc, bool publish_side);
    ~topic_connection() override;

    /// Sends validate connection and starts the loops.
    void start();
    /** Takeover, new side: serves a connection the old process handed over (validated there):
        `pending`, a partial message it had read, goes first; `idle` is the time since the peer's
        last byte. @return false if it closed at once. */
    bool adopt(protocol::byte_view pending, std::chrono::milliseconds idle);
    /** Takeover, old side: if this connection may leave now (movable_with_partial), its state
        and a descriptor for it; it is then closed here without a byte. nullopt otherwise. */
    std::optional<std::pair<net::takeover_topic_connection, net::unique_fd>> hand_over();

private:
    bool on_frame(const protocol::frame_view& frame) override;
    void on_closed(std::string_view why) override;
    /// A publisher can outrun the subscribers: its connection stops reading while the memory
    /// budget is spent (topics.memory_budget_bytes), so its sends block instead of the router growing.
    bool holds_for_budget() const noexcept override { return publish_side_; }
    /// Also held while a takeover moves the topic service (topic_service::hold_intake).
    bool reads_paused() const noexcept override;

    topic_service& svc_;
    bool publish_side_;
};

}  // namespace moraine::icestorm_bridge
