#pragma once
// A minimal blocking Ice connection for the clock publisher: one peer, direct (no router).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/reply.hpp>

#include <boost/asio.hpp>
#include <cstdint>
#include <string_view>

namespace moraine::demo {

/// A tcp connection to one Ice object adapter, used from one thread with blocking calls (a
/// command-line tool's control path; the router itself never blocks).
class ice_call {
public:
    /// Connects to `ep` and reads the peer's validate connection.
    /// @throws std::runtime_error (connection refused, not an Ice peer).
    ice_call(boost::asio::io_context& io, const protocol::endpoint& ep);

    /// A reply's status and a copy of what follows the status byte.
    struct reply {
        protocol::reply_status status = protocol::reply_status::ok;
        protocol::byte_buffer payload;
    };

    /// Twoway request to `id`, with `params` (a whole encapsulation). Blocks for the reply.
    /// @throws std::runtime_error if the connection fails.
    reply invoke(const protocol::identity& id, std::string_view operation, std::uint8_t mode,
                 const protocol::byte_buffer& params);

    /// Oneway request (request id 0). @throws std::runtime_error if the write fails.
    void send_oneway(const protocol::identity& id, std::string_view operation, const protocol::byte_buffer& params);

private:
    protocol::byte_buffer request(std::int32_t id, const protocol::identity& target, std::string_view operation,
                                  std::uint8_t mode, const protocol::byte_buffer& params) const;
    protocol::byte_buffer read_message();

    boost::asio::ip::tcp::socket socket_;
    std::int32_t next_id_ = 1;
};

}  // namespace moraine::demo
