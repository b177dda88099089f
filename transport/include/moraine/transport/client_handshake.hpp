#pragma once
// The connecting side of a layered (ssl, ws, wss) connection before its first Ice byte, sans-I/O:
// the client's TLS handshake, then its WebSocket upgrade (docs/transports.md §1.1, §1.2, §4.2).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/layered_stream.hpp>
#include <moraine/transport/tls_engine.hpp>
#include <moraine/transport/ws_client_upgrade.hpp>

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace moraine::transport {

/// Where a client_handshake stands after a call.
enum class handshake_status : std::uint8_t {
    want_read,  ///< write `out`, then read from the peer and call on_bytes
    done,       ///< write `out`; TLS established and the upgrade accepted; early bytes held
    failed,     ///< write `out` if any (an alert), then close: handshake_outcome::why says why
};

/// Why a client_handshake failed.
enum class handshake_failure : std::uint8_t {
    none,
    tls_failed,   ///< a TLS error: of the handshake (the engine is not established) or an alert after it
                  ///< (TLS 1.3: the server refused our certificate); `why` is OpenSSL's reason
    tls_closed,   ///< the server sent close_notify before the handshake was done
    seal_failed,  ///< the upgrade request could not be sealed; `why` is OpenSSL's reason
    refused,      ///< the server refused the upgrade: `ec` is the ws_errc, `why` its sentence
    peer_closed,  ///< the peer closed the connection (client_handshake::on_peer_closed); `in_tls` says in which step
};

/// What a client_handshake call ended on.
struct handshake_outcome {
    handshake_status status = handshake_status::want_read;  ///< what the caller does next
    handshake_failure failure = handshake_failure::none;   ///< failed: why
    bool in_tls = false;           ///< failed: before TLS was established
    std::string why;               ///< failed: the cause, for the caller's own sentence
    boost::system::error_code ec;  ///< refused: the cause as a ws_errc
};

/** Drives the handshakes a connecting side runs over one connection: TLS through `engine` (ssl,
    wss), then the WebSocket upgrade (ws, wss: `upgrade`'s request, sealed over TLS, and the
    server's answer). It never sees a socket: its caller connects, writes each flight, reads once
    and hands what it read to on_bytes, until done or failed. The runtime's back-end connections
    (net::connection_handshake::connect) and the client library's router_connection::open are
    both such callers.

    The bytes the server sends right behind the handshake (its validate connection with its last
    TLS flight or with the 101, docs/transports.md §1.2) are decrypted and held in `stream`
    (layered_stream::hold_early) for the Ice layer, still WebSocket-framed where the stream is:
    feed them with layered_stream::feed_plain once the connection reads. The stream itself is not
    asked to decide the upgrade (it must not expect_upgrade_answer). Anything TLS must send
    meanwhile (a key update answer) goes out with the next flight, before the upgrade request.
    Not thread-safe; `engine` and `stream` must outlive this object. */
class client_handshake {
public:
    /** A handshake over `engine` (null: no TLS; its settings, SNI and the expected host, made
        by the caller) and, with `upgrade`, the WebSocket upgrade after it, whose early bytes go
        to `stream` (a stream over the same engine). Starts nothing. */
    client_handshake(tls_engine* engine, std::optional<ws_client_upgrade> upgrade, layered_stream& stream);

    /** The first flight, appended to `out`: the ClientHello (TLS), else the upgrade request.
        @return want_read; failed (tls_failed, seal_failed) if none can be made; done
        with no layer at all. */
    handshake_outcome start(protocol::byte_buffer& out);

    /** Takes the bytes one read returned (`input`, a loan for the call) and appends what must
        be sent next to `out`: a TLS flight, TLS's answers, the upgrade request once TLS is
        established. Bytes past the handshake are held in the stream (see the class).
        @return want_read, done or failed; call no more after done or failed. */
    handshake_outcome on_bytes(protocol::byte_view input, protocol::byte_buffer& out);

    /// The peer closed the connection (a read found its end) before done. @return failed,
    /// handshake_failure::peer_closed, `in_tls` set while TLS was not yet established.
    handshake_outcome on_peer_closed() const;

    /// True while the TLS handshake is under way (an engine that is not established yet).
    bool in_tls() const noexcept { return engine_ && !engine_->established(); }
    /// True until the upgrade (if any) was accepted.
    bool upgrading() const noexcept { return upgrade_.has_value(); }

private:
    /// TLS just completed: the records behind its last flight, then the upgrade request.
    handshake_outcome established(protocol::byte_view rest, protocol::byte_buffer& out);
    /// Ciphertext after the TLS handshake: decrypted and passed on to take_plain.
    handshake_outcome records(protocol::byte_view input, protocol::byte_buffer& out);
    /// Stream bytes: the server's answer while upgrading, else the early bytes. @return false
    /// once the upgrade was refused (refusal_ is set).
    bool take_plain(protocol::byte_view plain);
    /// Appends the upgrade request, sealed over TLS, to `out`.
    handshake_outcome send_request(protocol::byte_buffer& out);
    /// want_read until TLS is established and the upgrade accepted, then done.
    handshake_outcome progress() const;
    /// failed with the server's refusal of the upgrade (refusal_).
    handshake_outcome fail_refused() const;
    handshake_outcome fail(handshake_failure f, std::string why, boost::system::error_code ec = {}) const;

    tls_engine* engine_;
    std::optional<ws_client_upgrade> upgrade_;  // until accepted
    layered_stream& stream_;
    bool request_sent_ = false;
    std::optional<ws_upgrade_result> refusal_;  // set by take_plain when the server refused
};

}  // namespace moraine::transport
