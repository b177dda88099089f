#include <moraine/icestorm_bridge/topic_connection.hpp>

#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/protocol/request.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>

namespace moraine::icestorm_bridge {

topic_connection::topic_connection(net::shard& home, net::transport socket, topic_service& svc,
                                   bool publish_side)
    : ice_connection(home, std::move(socket)), svc_(svc), publish_side_(publish_side) {}

topic_connection::~topic_connection() = default;

void topic_connection::start() {
    svc_.local(home().index()).attach(this);
    start_accepted();
}

bool topic_connection::adopt(protocol::byte_view pending, std::chrono::milliseconds idle) {
    svc_.local(home().index()).attach(this);
    return start_adopted(pending, idle);
}

std::optional<std::pair<net::takeover_topic_connection, net::unique_fd>> topic_connection::hand_over() {
    // A partial message larger than a catalog part may not fit the channel's packets: such a
    // connection stays, and is closed gracefully with the rest.
    if (!movable_with_partial() || partial_message().size() > net::takeover_topics_part_max) return std::nullopt;
    net::takeover_topic_connection m;
    m.publish_side = publish_side_;
    m.transport = websocket() ? net::session_transport::ws : net::session_transport::tcp;
    m.idle_ms = static_cast<std::uint32_t>(std::min<std::int64_t>(idle_for().count(), UINT32_MAX));
    const auto partial = partial_message();
    m.pending.assign(partial.begin(), partial.end());
    auto fd = release_for_move("handed over to a new process (takeover)");
    if (!fd) return std::nullopt;
    return std::make_pair(std::move(m), std::move(fd));
}

bool topic_connection::reads_paused() const noexcept { return svc_.intake_held() || ice_connection::reads_paused(); }

bool topic_connection::on_frame(const protocol::frame_view& frame) {
    using protocol::message_type;
    switch (frame.header.type) {
    case message_type::request:
    case message_type::batch_request:
        return for_each_request(frame, [&](const protocol::request_view& r) {
            svc_.dispatch(*this, r, publish_side_);
            return true;
        });
    case message_type::close_connection:
        close(net::close_reason::peer_closed, "peer closed the connection");
        return false;
    case message_type::reply:
    case message_type::validate_connection:
        return true;
    }
    return true;
}

void topic_connection::on_closed(std::string_view why) {
    svc_.local(home().index()).detach(this);
    spdlog::debug("topic connection closed: {}", why);
}

}  // namespace moraine::icestorm_bridge
