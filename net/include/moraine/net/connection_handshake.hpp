#pragma once
// The handshake phase of a layered (ssl, ws, wss) connection: TLS, then the WebSocket upgrade.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/close_reason.hpp>
#include <moraine/transport/layered_stream.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace moraine::net {

class handshake_pool;
struct tls_config;

/// Where a step of a connection_handshake's accepting side left it.
enum class handshake_state : std::uint8_t {
    want_read,  ///< wait until the socket is readable, then call on_readable
    stepping,   ///< a TLS step runs on the handshake pool; `resume` then runs on the shard
    done,       ///< established and upgraded: take_stream(), take_early(), end()
    failed,     ///< close: for end() (the stream's why()) unless it is need_more, else failure()
};

/// How the connecting side's handshakes ended (connection_handshake::connect).
struct client_handshake_result {
    bool tls_failed = false;  ///< TLS failed (else the upgrade did, if `why` is set)
    std::string why;          ///< empty once established and upgraded; else the cause, for the log
};

/** What a layered connection does before its first Ice byte: the TLS handshake (ssl, wss) and
    the WebSocket upgrade (ws, wss), docs/architecture.md "A connection's life" and
    docs/transports.md §1. It owns the connection's transport::layered_stream for that time, the
    TLS step under way (which may run on the handshake pool), the Ice bytes read behind the
    handshake and, on the accepting side, the deadline; it hands the stream back, ready, with
    those bytes, or says why the connection must close. The connection keeps the socket: it
    waits for readability and calls on_readable (accepting side), and it writes what the
    handshake sends (in order with anything it writes later). The connecting side is a coroutine
    (connect) over the same socket, writing and reading for transport::client_handshake, which
    the client library drives too. Shard-local, except a pool step; not movable
    (a pool step refers to it). */
class connection_handshake {
public:
    /// Writes wire bytes (a loan for the call) as the connection writes them: now as far as the
    /// socket takes them, the rest later in order. @return false if the connection closed.
    using send_fn = std::function<bool(protocol::byte_view)>;

    using state = handshake_state;

    /// Why the handshake itself failed (a read error, a TLS handshake error, the peer's close).
    struct failure_text {
        close_reason reason = close_reason::handshake;
        std::string why;
    };

    /** The handshake over `socket` of a connection whose layers are `stream` (over `engine`,
        null without TLS: the engine must outlive this object). Starts nothing. */
    connection_handshake(tcp::socket& socket, moraine::transport::tls_engine* engine,
                         moraine::transport::layered_stream stream);
    connection_handshake(const connection_handshake&) = delete;
    connection_handshake& operator=(const connection_handshake&) = delete;
    ~connection_handshake();

    // ---- accepting side -------------------------------------------------------------------

    /** Starts the accepting side: a WebSocket stream expects the client's upgrade request;
        `send` writes the flights and answers. One deadline (`timeout`,
        Moraine.TLS.HandshakeTimeout) bounds TLS and the upgrade together: at it `on_timeout`
        runs on the socket's executor with the log text ("TLS handshake timed out", ...),
        unless this object is gone. Then wait for readability. */
    void start_accepted(send_fn send, std::chrono::milliseconds timeout, std::function<void(const char*)> on_timeout);

    /** The socket is readable (`wait_error` set if the wait failed): one non-blocking read into
        `scratch` (a loan for the call), then the TLS step (on `pool` when given, else here) or
        the upgrade. `resume` runs on the socket's executor once a pool step is back; it must
        keep this object alive (hold its connection) and then call after_pool_step().
        If `send` reported the connection closed, the state says failed with no failure. */
    state on_readable(const boost::system::error_code& wait_error, std::span<std::byte> scratch, handshake_pool* pool,
                      std::function<void()> resume);
    /// Goes on from a TLS step the handshake pool made (see on_readable).
    state after_pool_step();

    /// failed: why, when end() is need_more.
    const failure_text& failure() const noexcept { return failure_; }
    /// How the stream's last feed ended: need_more, or an end that closes the connection once
    /// it has its stream (a refused upgrade, a TLS error, a close frame behind the upgrade).
    moraine::transport::layered_end end() const noexcept { return end_; }
    /// Ice stream bytes read behind the handshake, to dispatch before anything read later;
    /// leaves none.
    protocol::byte_buffer take_early() noexcept { return std::move(early_); }

    // ---- connecting side ------------------------------------------------------------------

    /** Once connected to `ep`, under the caller's deadline: the client's TLS handshake (ssl,
        wss; `ep.host` checked as `cfg` says, prepare_client; `cfg` may be null without TLS),
        then the WebSocket upgrade to `ep`'s host, port and resource (ws, wss): the socket loop
        over transport::client_handshake, which holds the bytes the server sent behind them (its
        validate connection) in the stream (hold_early).
        @return what failed and why; `why` is empty once done. */
    asio::awaitable<client_handshake_result> connect(const tls_config* cfg, const protocol::endpoint& ep);

    // ---- either side ----------------------------------------------------------------------

    /// The stream, handed back (ready once done, or to name the end() a connection closes for).
    moraine::transport::layered_stream take_stream() noexcept { return std::move(stream_); }

private:
    struct early_sink;
    /// After a TLS step: sends its flight, then waits, fails, or feeds the rest of `input`.
    state after_tls_step(const moraine::transport::tls_step& step, protocol::byte_view flight,
                         std::span<std::byte> input);
    /// Bytes after the TLS handshake (records, the upgrade, frames) through the stream.
    state feed(std::span<std::byte> data);
    state fail(close_reason reason, std::string why);
    /// True once TLS is established (if any) and the upgrade accepted (if any).
    bool ready() const noexcept;
    /// The log text of a missed deadline.
    const char* timeout_text() const noexcept;

    tcp::socket& socket_;
    moraine::transport::tls_engine* engine_;
    moraine::transport::layered_stream stream_;
    send_fn send_;
    std::optional<asio::steady_timer> deadline_;  // accepting side only
    // A TLS step on the handshake pool: its input, its flight and its outcome, written there and
    // read here after the post back.
    protocol::byte_buffer step_input_;
    protocol::byte_buffer step_flight_;
    moraine::transport::tls_step step_;
    protocol::byte_buffer early_;
    failure_text failure_;
    moraine::transport::layered_end end_ = moraine::transport::layered_end::need_more;
};

}  // namespace moraine::net
