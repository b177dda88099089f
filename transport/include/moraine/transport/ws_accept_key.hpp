#pragma once
// The Sec-WebSocket-Accept computation of the opening handshake (RFC 6455 §4.2.2, §1.3).
#include <string>
#include <string_view>

namespace moraine::transport {

/// The WebSocket subprotocol Ice uses (docs/transports.md §1.1).
inline constexpr std::string_view ice_ws_protocol = "ice.zeroc.com";

/** base64(SHA-1(`key` + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")), with OpenSSL: the value a
    server answers to Sec-WebSocket-Key `key` (taken as the characters sent, not decoded).
    Always 28 characters. E.g. "dGhlIHNhbXBsZSBub25jZQ==" -> "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=". */
std::string ws_accept_key(std::string_view key);

/// A fresh Sec-WebSocket-Key: 16 random bytes (OpenSSL RAND_bytes), base64 (24 characters).
std::string ws_random_key();

}  // namespace moraine::transport
