// Wildcard endpoints published as the machine's addresses (see published_endpoints.hpp).
#include <moraine/net/published_endpoints.hpp>

#include <boost/asio/ip/address.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>

namespace moraine::net {

namespace {

enum class family { v4, any };

/// The addresses a wildcard of `f` publishes: non-loopback ones (IPv6 link-local left out: they
/// need a scope a proxy cannot carry), or the loopback ones if that is all there is.
std::vector<std::string> wildcard_addresses(const std::vector<std::string>& all, family f) {
    std::vector<std::string> out, loopback;
    for (const auto& a : all) {
        boost::system::error_code ec;
        const auto ip = boost::asio::ip::make_address(a, ec);
        if (ec || (f == family::v4 && !ip.is_v4())) continue;
        if (ip.is_v6() && ip.to_v6().is_link_local()) continue;
        (ip.is_loopback() ? loopback : out).push_back(a);
    }
    return out.empty() ? loopback : out;
}

}  // namespace

bool is_wildcard_host(const std::string& host) noexcept {
    return host.empty() || host == "*" || host == "0.0.0.0" || host == "::";
}

std::vector<protocol::endpoint> published_endpoints(const std::vector<protocol::endpoint>& bound,
                                                    const std::vector<std::string>& addresses) {
    std::vector<protocol::endpoint> out;
    for (const auto& e : bound) {
        if (!is_wildcard_host(e.host)) {
            out.push_back(e);
            continue;
        }
        for (const auto& a : wildcard_addresses(addresses, e.host == "0.0.0.0" ? family::v4 : family::any)) {
            auto p = e;
            p.host = a;
            out.push_back(std::move(p));
        }
    }
    return out;
}

std::vector<protocol::endpoint> published_endpoints(const std::vector<protocol::endpoint>& bound) {
    const bool any_wildcard =
        std::any_of(bound.begin(), bound.end(), [](const auto& e) { return is_wildcard_host(e.host); });
    return any_wildcard ? published_endpoints(bound, local_addresses()) : bound;
}

std::vector<std::string> local_addresses() {
    std::vector<std::string> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (auto* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr) continue;
        char text[INET6_ADDRSTRLEN] = {};
        if (i->ifa_addr->sa_family == AF_INET)
            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
        else if (i->ifa_addr->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, text, sizeof text);
        else
            continue;
        if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
    }
    freeifaddrs(list);
    return out;
}

}  // namespace moraine::net
