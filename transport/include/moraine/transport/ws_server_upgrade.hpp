#pragma once
// The server side of the WebSocket opening handshake, sans-I/O, as IceWS 3.7 answers it
// (docs/transports.md §1.1-1.3; RFC 6455 §4.2).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/http_head.hpp>
#include <moraine/transport/ws_upgrade_result.hpp>

namespace moraine::transport {

/** Reads a client's HTTP upgrade request, fed in pieces, and decides: the 101 answer, or a
    refusal. The head may be at most 8 KiB; it is kept only until the decision (then freed).

    Accepted: a GET-or-anything request (method and path are not checked) of HTTP/1.1 with a
    Host, `Connection` holding the token `upgrade` and `Upgrade` holding `websocket` (both
    case-insensitive, as header names are), a `Sec-WebSocket-Key` of at most 24 characters,
    `Sec-WebSocket-Version: 13`, and either no `Sec-WebSocket-Protocol` or exactly
    `ice.zeroc.com` (not read as a list). The answer is docs/transports.md §1.2's bytes: status
    line, `Upgrade: websocket`, `Connection: Upgrade`, the protocol line only when the request
    had one, `Sec-WebSocket-Accept`; no other header, and never `Sec-WebSocket-Extensions`
    (permessage-deflate is not accepted, so RSV1 stays 0).

    Refused (status refused, `why` for the log, `ec` a ws_errc):
    - not HTTP, or no blank line within 8 KiB: ws_errc::bad_http, no answer (close at once);
    - another subprotocol: ws_errc::unsupported_protocol, no answer, as glacier2router;
    - anything else above: ws_errc::bad_upgrade, answered `400 Bad Request` (a wrong version:
      `426 Upgrade Required` with `Sec-WebSocket-Version: 13`, RFC 6455 §4.4).
    Parsing: Boost.Beast's http::request_parser, over bytes (no I/O). Not thread-safe. */
class ws_server_upgrade {
public:
    /** Takes the next bytes read from the client. After accepted or refused, do not call again.
        @return need_more (all of `data` kept), or the decision; `consumed` bytes of `data`
                were the head's, the rest are the client's first frames. */
    ws_upgrade_result put(protocol::byte_view data);

private:
    http_head head_;  // the request head so far (at most 8 KiB), until the decision
};

}  // namespace moraine::transport
