#include <moraine/net/adopted_connection.hpp>

#include <moraine/net/listener.hpp>

#include <sys/socket.h>

#include <stdexcept>

namespace moraine::net {

tcp::socket adopt_connected_socket(asio::io_context& io, unique_fd fd) {
    int type = 0;
    socklen_t len = sizeof type;
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
        ::getpeername(fd.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0)
        throw std::invalid_argument("the descriptor is no connected TCP socket");
    bool v4 = false;
    try {
        v4 = adopted_is_ipv4(fd, "a moved connection's socket");
    } catch (const boost::system::system_error& e) {
        throw std::invalid_argument(e.what());
    }
    tcp::socket s(io);
    boost::system::error_code ec;
    s.assign(v4 ? tcp::v4() : tcp::v6(), fd.get(), ec);
    if (ec) throw std::invalid_argument("cannot adopt the descriptor: " + ec.message());
    fd.release();  // the socket owns it now
    return s;
}

}  // namespace moraine::net
