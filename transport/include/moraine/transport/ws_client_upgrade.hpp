#pragma once
// The client side of the WebSocket opening handshake, sans-I/O, as Ice 3.7 clients send it
// (docs/transports.md §1.1; RFC 6455 §4.1).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/http_head.hpp>
#include <moraine/transport/ws_upgrade_result.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace moraine::transport {

/** The upgrade request for one connection, and the check of the server's answer. Not
    thread-safe; the answer's head is kept only until the decision. */
class ws_client_upgrade {
public:
    /** A request to `host`:`port` for `resource` ("/" when empty) with a fresh random key: the
        7 lines Ice 3.7 sends, in its order (docs/transports.md §1.1), asking for ice.zeroc.com.
        An IPv6 address is bracketed in the Host field. */
    ws_client_upgrade(std::string_view host, std::uint16_t port, std::string_view resource);

    /// The request's bytes, to send before anything else.
    const std::string& request() const noexcept { return request_; }

    /** Takes the next bytes read from the server. After accepted or refused, do not call again.
        Accepted: `HTTP/1.1 101` with `Upgrade` holding `websocket` and `Connection` holding
        `upgrade` (case-insensitive), the right `Sec-WebSocket-Accept` (ws_accept_key), no
        `Sec-WebSocket-Extensions` (none was offered), and `Sec-WebSocket-Protocol` absent or
        `ice.zeroc.com`. Refused (`why` names the cause; `ec`): not HTTP or no blank line within
        8 KiB (ws_errc::bad_http), another status or missing field (::upgrade_refused), a wrong
        accept value (::bad_accept_key), another protocol (::unsupported_protocol).
        @return need_more (all of `data` kept), or the decision; `consumed` bytes of `data` were
                the head's, the rest are the server's first frames (glacier2router sends its
                validate connection frame with the 101, docs/transports.md §1.2). */
    ws_upgrade_result put(protocol::byte_view data);

private:
    std::string key_;      // Sec-WebSocket-Key sent
    std::string request_;  // the request's bytes
    http_head head_;       // the answer's head so far
};

}  // namespace moraine::transport
