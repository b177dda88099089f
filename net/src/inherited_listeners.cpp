#include <moraine/net/inherited_listeners.hpp>

#include <moraine/protocol/endpoint.hpp>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

namespace moraine::net {

std::vector<inherited_socket> inherited_listeners::take(const listener_id& id) {
    std::vector<inherited_socket> out;
    auto keep = std::stable_partition(sockets_.begin(), sockets_.end(),
                                      [&](const inherited_socket& s) { return !(s.record.id == id); });
    std::move(keep, sockets_.end(), std::back_inserter(out));
    sockets_.erase(keep, sockets_.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const inherited_socket& a, const inherited_socket& b) { return a.record.shard < b.record.shard; });
    return out;
}

std::vector<listener_record> inherited_listeners::left() const {
    std::vector<listener_record> out;
    for (const auto& s : sockets_) out.push_back(s.record);
    return out;
}

std::string describe(const listener_id& id) {
    return id.adapter + " '" + id.endpoint + "'" + (id.ordinal ? " #" + std::to_string(id.ordinal + 1) : "");
}

void check_same_listeners(const std::vector<listener_record>& offered, const std::vector<listener_id>& expected) {
    std::set<listener_id> theirs, ours(expected.begin(), expected.end());
    for (const auto& r : offered) theirs.insert(r.id);
    for (const auto& id : ours)
        if (!theirs.count(id))
            throw channel_error("this configuration listens on " + describe(id) + ", which the running router does not");
    for (const auto& id : theirs)
        if (!ours.count(id))
            throw channel_error("the running router listens on " + describe(id) + ", which this configuration does not");
}

namespace {

/// The port a socket is bound to, or -1 if it is not an IPv4/IPv6 socket.
int bound_port(int fd) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return -1;
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
    return -1;
}

int int_option(int fd, int name) {
    int v = -1;
    socklen_t len = sizeof v;
    if (::getsockopt(fd, SOL_SOCKET, name, &v, &len) != 0) return -1;
    return v;
}

}  // namespace

void check_descriptors(const std::vector<inherited_socket>& sockets) {
    for (const auto& s : sockets) {
        const auto& r = s.record;
        const std::string what = describe(r.id) + " (shard " + std::to_string(r.shard) + ")";
        const bool stream = r.kind == socket_kind::stream;
        if (int_option(s.fd.get(), SO_TYPE) != (stream ? SOCK_STREAM : SOCK_DGRAM))
            throw channel_error(what + ": the descriptor received is not a " + (stream ? "stream" : "datagram") + " socket");
        if (stream && int_option(s.fd.get(), SO_ACCEPTCONN) != 1)
            throw channel_error(what + ": the descriptor received is not listening");
        const auto ep = protocol::endpoint_from_string(r.bound);
        const int port = bound_port(s.fd.get());
        if (!ep || port < 0 || port != static_cast<int>(ep->port))
            throw channel_error(what + ": the descriptor received is bound to port " + std::to_string(port) +
                                ", not to " + r.bound);
    }
}

}  // namespace moraine::net
