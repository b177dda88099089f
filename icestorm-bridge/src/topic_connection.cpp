#include <moraine/icestorm_bridge/topic_connection.hpp>

#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/protocol/request.hpp>

#include <spdlog/spdlog.h>

namespace moraine::icestorm_bridge {

topic_connection::topic_connection(net::shard& home, net::transport socket, topic_service& svc,
                                   bool publish_side)
    : ice_connection(home, std::move(socket)), svc_(svc), publish_side_(publish_side) {}

topic_connection::~topic_connection() = default;

void topic_connection::start() { start_accepted(); }

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

void topic_connection::on_closed(std::string_view why) { spdlog::debug("topic connection closed: {}", why); }

}  // namespace moraine::icestorm_bridge
