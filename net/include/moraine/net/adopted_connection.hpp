#pragma once
// Takeover, new side: a connected socket another process handed over (SCM_RIGHTS), as asio's.
#include <moraine/net/asio.hpp>
#include <moraine/net/unique_fd.hpp>

namespace moraine::net {

/** The TCP socket of `fd` on `io`, of the family its local address says (adopted_is_ipv4, the
    check the adopted listeners use); the socket owns the descriptor from then on.
    @throws std::invalid_argument if `fd` is no connected IPv4 or IPv6 TCP stream socket (the
    descriptor is then closed). */
tcp::socket adopt_connected_socket(asio::io_context& io, unique_fd fd);

}  // namespace moraine::net
