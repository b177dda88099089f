#pragma once
// One connection of a session to a router's client endpoint (private to the library).
#include "connection_layers.hpp"

#include <moraine/transport/client_handshake.hpp>

#include <moraine/client/asio.hpp>
#include <moraine/client/error.hpp>
#include <moraine/client/router_address.hpp>
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/protocol/frame_parser.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace moraine::client {

class tls_context;

/// What a router_connection reports to the session above it, on the connection's executor.
class connection_events {
public:
    /// The router's validate connection arrived: the connection carries messages from now on.
    virtual void on_validated() = 0;
    /** One whole Ice message from the router after validation (a reply, request, batch or
        heartbeat; compressed ones as they came), a loan for the call. May close the connection. */
    virtual void on_message(const protocol::frame_view& message) = 0;
    /** The connection ended by itself: `why` is empty after close_after_flush(), else the cause
        (errc::connection_lost, ::protocol_error, ::tls_handshake_failed before validation). Not
        called for close(). */
    virtual void on_end(const error_info& why) = 0;

protected:
    ~connection_events() = default;
};

/** One TCP connection to a router with the layers its address asks for: none (tcp), TLS (ssl),
    WebSocket (ws) or WebSocket over TLS (wss), carrying whole Ice messages both ways. It owns
    the socket, the connection's layers (connection_layers: transport::layered_stream and the TLS
    engine under it), the read loop and the write steps, the queue of messages to send and the
    framing of what is read; it knows nothing of Glacier2 or of calls. Its owner (a session)
    learns of messages and of the end through connection_events, which it keeps alive for as
    long as it lives (its pending read and write end soon after close()), so an owner that closes
    the connection from inside on_message is still there when the call returns.

    Reads go through a per-thread 64 KiB scratch buffer (TLS decrypts into a per-thread
    plaintext buffer), so an idle connection keeps no read buffer, only a message that straddles
    two reads. Writes: tcp gathers up to 64 queued messages in one writev; with layers, the
    control bytes the read side made (a pong, a close answer, a TLS key update answer) go first,
    then the batch encoded by the layered_stream (small messages share TLS records), one write.
    After the set-up, reads and writes run from completion handlers, not coroutines: an idle
    connection keeps one readability wait and no write operation, coroutine or buffer.

    Owned by shared_ptr: open() runs in the owner's coroutine, which holds one; the pending read
    holds one, and a write step one until it completes. Single-threaded: call everything on the executor given to create(). */
class router_connection : public std::enable_shared_from_this<router_connection> {
    struct make_tag {};  // private: only create() can construct

public:
    /// Bounds taken from session_options (bytes; 0 = none).
    struct limits {
        std::size_t max_message_bytes = 0;  ///< largest message accepted from the router
        std::size_t write_queue_limit = 0;  ///< bytes queued for the router at most
    };

    /// A connection not yet open, on `ex`, reporting to `events` (kept until the connection ends).
    static std::shared_ptr<router_connection> create(const asio::any_io_executor& ex, limits lim,
                                                     std::shared_ptr<connection_events> events);
    /// For create() only, which alone can name make_tag (make_shared: one allocation).
    router_connection(make_tag, const asio::any_io_executor& ex, limits lim, std::shared_ptr<connection_events> events);
    router_connection(const router_connection&) = delete;
    router_connection& operator=(const router_connection&) = delete;

    /** Connects to `a` (resolving a host name), then the TLS handshake (ssl, wss; with `tls`,
        which must be set for such an address), then the WebSocket upgrade (ws, wss), then starts
        the loops. Messages read with the handshakes (the router's validate connection often
        comes with the last TLS flight or the 101) are reported as they come (on_validated).
        @return empty on success; the socket's error (e.g. connection_refused);
        errc::tls_handshake_failed "<host>:<port>: <OpenSSL's reason>" for a failed handshake,
        "the router refused the connection: ..." when the router refused us after it (TLS 1.3:
        our certificate); the upgrade's refusal (its ws_errc and sentence) or "WebSocket
        upgrade failed: <socket error>"; errc::connection_lost if the router closed. A failure
        is returned, never reported by on_end; the caller closes the connection. */
    asio::awaitable<error_info> open(const router_address& a, const tls_context* tls);

    /** Queues one whole Ice message and starts a write step unless one is under way. @return errc::queue_full (nothing
        queued) when it would pass limits::write_queue_limit; errc::connection_lost once closed. */
    error_info send(protocol::byte_buffer message);
    /// Ends the connection once everything queued has been written (after a close connection
    /// message): on_end with no error then.
    void close_after_flush();
    /// Forceful close: the socket closes, the loops end, the queue and buffers go; no on_end.
    /// Idempotent. The owner stays referenced until the loops let this object go.
    void close();

    /// Sets TCP_USER_TIMEOUT (best effort): unacknowledged data fails the connection after `t`.
    void set_user_timeout(std::chrono::milliseconds t);
    /// True once the router's validate connection arrived.
    bool validated() const noexcept { return validated_; }
    /// True after close() or the end.
    bool closed() const noexcept { return closed_; }

private:
    /// The layered_stream's sink: the Ice stream to the framing, the answers to the writes.
    struct stream_sink;

    // Set-up (router_connection_open.cpp).
    asio::awaitable<error_info> connect(const router_address& a);
    /// The TLS handshake and the WebSocket upgrade `a` asks for: the socket loop over
    /// transport::client_handshake (each flight written, one read fed). @return open()'s error.
    asio::awaitable<error_info> handshake(const router_address& a);
    /// What a failed client_handshake means to open()'s caller (see open()).
    error_info handshake_error(const router_address& a, const transport::handshake_outcome& o) const;
    /// A flight's write failed: the socket's error; after TLS the refusal waiting behind it
    /// (refusal_behind); without TLS "WebSocket upgrade failed: ..."; none once closed.
    error_info write_failed(const router_address& a, const boost::system::error_code& ec,
                            transport::client_handshake& hs);
    /// A read in the handshakes failed (not eof): the socket's error, or the upgrade's.
    error_info read_failed(const boost::system::error_code& ec, const transport::client_handshake& hs) const;
    /// Waits until readable, then read_ready(on_data). @return the read's error
    /// (operation_aborted once closed).
    template <class OnData>
    asio::awaitable<boost::system::error_code> read_once(OnData on_data);
    /// Reads what the socket has into the thread's scratch and hands the bytes to
    /// `on_data(std::span<std::byte>)` before anything else runs on the thread. @return the
    /// read's error: would_block or try_again when nothing was there (wait_again).
    template <class OnData>
    boost::system::error_code read_ready(OnData on_data);
    /// True for a read that found nothing to read: wait for readability again.
    static bool wait_again(const boost::system::error_code& ec) noexcept {
        return ec == asio::error::would_block || ec == asio::error::try_again;
    }
    /// After a failed write once TLS is established: the router's refusal (errc::
    /// tls_handshake_failed) if its alert waits unread (it refused us and reset the
    /// connection), else `write_error`.
    error_info refusal_behind(const router_address& a, const boost::system::error_code& write_error,
                              transport::client_handshake& hs);
    /// errc::tls_handshake_failed "the router refused the connection: " + the engine's reason.
    error_info refused() const;

    // The read loop and the writes (router_connection.cpp).
    /// After the set-up: starts the read loop, and lets writes start.
    void start_loops();
    /// The read loop, as completion handlers (no coroutine: an idle connection keeps only its
    /// readability wait, allocated at its own size): waits until the socket is readable...
    void arm_read();
    /// ...then reads what is there through the layers to the framing, and waits again.
    void on_readable(const boost::system::error_code& wait_error);
    /// Something was queued (messages, control bytes) or close_after_flush() asked: posts a
    /// write step unless one is posted or under way (or before start_loops).
    void wake_writer();
    /// One write of what is queued; with nothing queued, the writes stop until wake_writer()
    /// (ending the connection first when close_after_flush() was asked).
    void write_next();
    /// A write of `n` messages completed: the next one, or the end.
    void on_write_done(const boost::system::error_code& ec, std::size_t n);
    /// One read's wire bytes through the layers, if any, to the framing. @return false to stop.
    bool on_wire(std::span<std::byte> data);
    /// The stream bytes the handshakes read behind them (layered_stream::take_early) through
    /// the layers to the framing, before any later read. @return false to stop.
    bool on_early();
    /// What a feed of the layers ended on. @return false to stop reading.
    bool after_feed(transport::layered_end end);
    /// Ice stream bytes to the framing; each whole message to on_frame. @return false to stop.
    bool on_stream(protocol::byte_view data);
    void on_frame(const protocol::frame_view& frame);
    /// Control bytes the read side made, sent before the next messages.
    void queue_control(protocol::byte_view wire);
    /// The first `n` queued messages as the buffers of one writev, into batch_ (tcp).
    void gather(std::size_t n);
    /// Encodes control bytes and up to `n` queued messages into layers_->wire. @return the
    /// messages taken, or nullopt on a TLS error (the connection has ended).
    std::optional<std::size_t> encode(std::size_t n);
    /// After a write of `n` messages: drops them; frees the buffers once nothing is queued.
    bool on_written(const boost::system::error_code& ec, std::size_t n);
    /// Closes, then reports `why` to the owner (once); during open(), hands it to open() instead.
    void end(error_info why);
    /// The error a failed read means: eof is "the router closed the connection".
    static error_info read_error(const boost::system::error_code& ec);

    tcp::socket socket_;
    limits limits_;
    std::shared_ptr<connection_events> events_;  // never null; released with this object
    error_info* open_error_ = nullptr;           // during open(): where end() puts its cause
    std::unique_ptr<connection_layers> layers_;  // null for tcp: it pays nothing for TLS or WebSocket
    std::vector<protocol::byte_buffer> out_;     // whole messages, oldest first
    std::size_t out_bytes_ = 0;
    std::vector<asio::const_buffer> batch_;  // tcp: the buffers of the write under way; none while idle
    protocol::frame_assembler in_;  // holds a message only while it straddles reads
    bool validated_ = false;
    bool close_after_flush_ = false;
    bool closed_ = false;
    bool writing_ = true;  // a write step is posted or under way; true until start_loops
};

/// The per-thread read buffer every connection on the thread reads into (64 KiB): an idle
/// connection holds none. A loan until the next co_await or the handler's return.
std::span<std::byte> read_scratch() noexcept;

template <class OnData>
asio::awaitable<boost::system::error_code> router_connection::read_once(OnData on_data) {
    for (;;) {
        auto [ec] = co_await socket_.async_wait(tcp::socket::wait_read, nothrow_awaitable);
        if (closed_) co_return asio::error::operation_aborted;
        if (ec) co_return ec;
        ec = read_ready(on_data);
        if (!wait_again(ec)) co_return ec;
    }
}

template <class OnData>
boost::system::error_code router_connection::read_ready(OnData on_data) {
    boost::system::error_code ec;
    // Nothing waits between this read and the end of on_data: the scratch is shared.
    const std::span<std::byte> buf = read_scratch();
    const std::size_t n = socket_.read_some(asio::buffer(buf.data(), buf.size()), ec);
    if (!ec) on_data(buf.first(n));
    return ec;
}

}  // namespace moraine::client
