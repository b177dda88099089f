#pragma once
// What every Ice connection of the router shares: socket, framing, bounded write queue, lifetime.
#include <moraine/net/connection_origin.hpp>
#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/asio.hpp>
#include <moraine/net/budget_hold.hpp>
#include <moraine/net/close_reason.hpp>
#include <moraine/net/close_state.hpp>
#include <moraine/net/read_gate.hpp>
#include <moraine/net/startup_state.hpp>
#include <moraine/net/transport.hpp>
#include <moraine/net/unique_fd.hpp>
#include <moraine/net/write_queue.hpp>
#include <moraine/net/write_schedule.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::transport {
enum class layered_end : std::uint8_t;
}

namespace moraine::net {

class shard;
enum class handshake_state : std::uint8_t;
struct client_handshake_result;

/// Base of client, server-endpoint and back-end connections (docs/style.md §3-6). Owned by
/// shared_ptr: a pending read (or, while reads are paused, the resume wait) always holds one, as
/// does a write in flight; close() is the only exit.
/// Reads wait for readability, then read into the shard's scratch buffer and dispatch every
/// whole message before waiting again; only a partial message is kept per connection.
/// Writes: what a loop turn queues leaves at the turn's end in one writev (turn_flusher).
/// Every transport runs from completion handlers, with no coroutine per connection (an idle
/// one holds one pending wait, perf/README.md "Idle RSS per session"). TLS and WebSocket are
/// layers over the same reads and writes (the "layered" paths), their codec a
/// transport::layered_stream: the shard's scratch goes through it before on_bytes, and what a
/// turn queued is framed (one WebSocket frame per Ice message) and sealed (one SSL_write per
/// 64 KiB) by it into one buffer, sent with one write. This class keeps the socket I/O.
class ice_connection : public std::enable_shared_from_this<ice_connection> {
public:
    virtual ~ice_connection();
    ice_connection(const ice_connection&) = delete;
    ice_connection& operator=(const ice_connection&) = delete;

    /// Queues a whole message, written at the end of this loop turn with whatever else the turn
    /// queued here. Never blocks. Past the hard limit the connection is closed (slow consumer)
    /// and over_limit returned.
    enqueue_result enqueue(outbound_frame f);
    enqueue_result enqueue(protocol::byte_buffer bytes) { return enqueue(outbound_frame{std::move(bytes), {}}); }

    /// Forceful close: no close-connection message (Ice's answer to protocol errors and
    /// Glacier2's to policy violations). Idempotent; runs on_closed once. `reason` is counted in
    /// moraine_connections_closed_total; `why` goes to the log and to on_closed.
    void close(close_reason reason, std::string_view why);
    bool closed() const noexcept { return close_.closed(); }

    /** Graceful close, Ice's way: stops reading new messages, sends a close-connection message
        after whatever is queued, and sends nothing after it (frames enqueued later are dropped).
        The socket itself closes when the peer closes it or the shard stops. A peer's requests
        left unread were never dispatched, so an Ice client retries them safely. */
    void close_gracefully();

    /// A twoway request of this connection's peer was forwarded to a back end / was answered or
    /// failed there (backend_connection): while any is outstanding a drain closes forcefully,
    /// since Ice takes a close-connection message to mean "nothing outstanding was dispatched".
    void request_forwarded() noexcept { ++awaiting_backend_; }
    void request_settled() noexcept {
        if (awaiting_backend_ > 0) --awaiting_backend_;
    }

    /** Ice's heartbeat for ACM: queues a validate connection message unless something was
        queued since the previous call. Called every half heartbeat period, it keeps the gap
        between two writes under one period. Nothing before the loops run or once closing. */
    void heartbeat_if_idle();
    /// Queues a heartbeat (validate connection) now, busy or not (ACM HeartbeatAlways).
    /// Nothing before the loops run or once closing.
    void heartbeat();

    /** End of a loop turn (turn_flusher): writes what this turn queued with one non-blocking
        writev, up to 256 frames; a short write or more frames go on in write_async. Nothing
        while an asynchronous write is in flight: it takes the new frames next. */
    void flush_turn();
    /// Asks the CPU for the lines flush_turn reads first (flags, queue, socket), ahead of the
    /// call: turn_flusher walks thousands of connections after a fan-out. A hint only.
    void prefetch_for_flush() const noexcept;
    /// The same for the queued frames, once the connection's own lines are in (one step later).
    void prefetch_queue() const noexcept { out_.prefetch(); }

    /// True while queued frames wait for the peer to take them, not merely for this turn's
    /// flush: a write is in flight, or the connection writes only through its write loop.
    /// (A TLS connection's encrypted bytes not yet taken are always a write in flight.)
    bool write_backlogged() const noexcept { return writer_.in_flight() || (!out_.empty() && !writer_.marked()); }

    /// Wakes reading paused by reads_paused().
    void resume_reads() noexcept {
        if (resume_) resume_->cancel();
    }

    /** A back end answered a request this connection had forwarded (backend_connection::forward):
        relay `r` under this connection's own `request_id`. `compression` is the original
        request's compression byte. The default drops it (a connection that forwards nothing). */
    virtual void relay_reply(std::int32_t request_id, const protocol::reply_view& r, std::uint8_t compression);
    /// A back-end queue this connection fed, and paused reading for, drained or closed.
    virtual void on_backend_drained() { resume_reads(); }

    shard& home() noexcept { return home_; }
    std::chrono::steady_clock::time_point last_activity() const noexcept { return last_activity_; }
    /// Bytes waiting in the outbound queue.
    std::size_t queued_bytes() const noexcept { return out_.bytes(); }
    /// True over TLS (an ssl or wss endpoint).
    bool secure() const noexcept { return transport_.secure(); }
    /// True over WebSocket (a ws or wss endpoint).
    bool websocket() const noexcept { return transport_.websocket(); }

    /** Takeover: true when this connection stands at a message boundary and may leave for another
        process now: plain TCP or WebSocket without TLS (upgraded, between two frames), loops
        running, not closing, no partial message held, nothing queued or being written, no twoway
        request of its peer forwarded and unanswered. */
    bool at_message_boundary() const noexcept;
    /// As at_message_boundary, except that a partial Ice message may be held (partial_message()
    /// then travels with the connection): for a connection whose reading stopped mid-message.
    bool movable_with_partial() const noexcept;
    /// The bytes of a partial Ice message held between reads (empty between messages); a loan.
    protocol::byte_view partial_message() const noexcept { return in_.held(); }
    /** Takeover: a descriptor for the same TCP connection (close-on-exec), then this connection
        closes in this process without touching the TCP connection itself: no shutdown, no
        close-connection message; its socket leaves the shard's epoll set first (another
        process holds the connection: a plain close would leave the entry behind). Counted as
        close_reason::moved; on_closed(why) runs. @return an invalid descriptor (and the
        connection stays) if the descriptor cannot be duplicated. */
    unique_fd release_for_move(std::string_view why);
    /// Since the peer last sent a byte: the ACM timer's state a takeover carries.
    std::chrono::milliseconds idle_for() const noexcept;

protected:
    ice_connection(shard& home, transport t);

    /// Starts reading and writing (after the handshakes, if any).
    void start_loops();
    /** For a tcp or ws connection a takeover brought from another process (already upgraded): registers it as
        accepted and starts the loops with no validate connection message (the peer validated
        it already). `pending` (bytes the old process read but did not dispatch) is dispatched
        first; `idle` sets the time since the peer's last byte. @return false if it closed. */
    bool start_adopted(protocol::byte_view pending, std::chrono::milliseconds idle);
    /// For an accepted connection: completes the TLS handshake and the WebSocket upgrade if any
    /// (a connection_handshake: together bounded by the handshake timeout; a failure closes the
    /// connection without an Ice byte), then sends validate connection (the accepting side
    /// speaks first, docs/ice-wire.md §3) and starts the loops.
    void start_accepted();
    /** For an outgoing ssl, ws or wss connection, once connected to `ep`: TLS with `ep.host`
        checked as tls_config says, then the WebSocket upgrade (connection_handshake::connect).
        @return what failed and why, for the log (`why` empty once done; the caller closes on a
        failure, and checks closed() first). */
    asio::awaitable<client_handshake_result> client_handshakes(const protocol::endpoint& ep);

    /** Decodes the request, or each request of the batch, in `frame` and calls `fn(request)`
        (batched requests have request id 0, docs/ice-wire.md §5). Malformed input closes the
        connection. @return false if the connection closed or `fn` returned false. */
    template <class Fn>
    bool for_each_request(const protocol::frame_view& frame, Fn&& fn) {
        if (frame.header.type == protocol::message_type::request) {
            auto r = protocol::decode_request(frame.body());
            if (!r) return reject("malformed request", r.error());
            return fn(*r) && !closed();
        }
        protocol::batch_reader batch(frame.body());
        while (!batch.done()) {
            auto r = batch.next();
            if (!r) break;
            if (!fn(*r) || closed()) return false;
        }
        return !batch.error() || reject("malformed batch request", batch.error());
    }
    /// Handles one whole message (a loan valid during the call). @return false to stop reading.
    virtual bool on_frame(const protocol::frame_view& frame) = 0;
    /// Runs once, from close().
    virtual void on_closed(std::string_view why) = 0;
    /// Polled before each read: true stops reading until resume_reads().
    virtual bool reads_paused() const noexcept { return out_.above_high(); }
    /// True for a connection whose peer can send faster than the router's peers take it (a
    /// publisher, IceStorm delivering to the server endpoint): it stops reading while the
    /// shards' memory budget is spent (memory_budget), so TCP pushes back on the sender.
    virtual bool holds_for_budget() const noexcept { return false; }
    /// The queue fell below its low watermark after having been above the high one.
    virtual void on_drained() { resume_reads(); }
    /// Everything queued was written: the peer has taken all bytes so far.
    virtual void on_written() {}
    /// Decompresses (status 2) and dispatches; closes on a protocol error. @return false if closed.
    bool dispatch_frame(const protocol::frame_view& frame);
    /// Closes for bad input from the peer, counted as a protocol error. @return false.
    bool reject(std::string_view what, const boost::system::error_code& ec);

    shard& home_;
    transport transport_;
    tcp::socket& socket_;  // transport_'s TCP socket
    write_queue out_;
    startup_state startup_;  // handshakes, a back end's validate connection, then the loops
    /// Writes what is queued now with an asynchronous write. Nothing while a write is in flight
    /// (it takes the new frames next).
    void wake_writer();

private:
    /// Waits for readability (or, while paused or closing, for resume_reads()), holding the
    /// connection. At most one wait is pending.
    void arm_read();
    /// One read into the shard's scratch, its whole messages dispatched, then arm_read.
    void on_readable(const boost::system::error_code& wait_error);
    /// A failed read (plain TCP or TLS): the peer's close (eof, a TLS stream truncated) is
    /// peer_closed, anything else io_error.
    void close_on_read_error(const boost::system::error_code& ec);
    /// Plain TCP: writes the queue's front (up to 256 frames) with asio::async_write, then the
    /// rest, one batch at a time, until the queue is empty (a socket that was full).
    void write_async();
    void on_async_written(const boost::system::error_code& ec);
    /// TLS and/or WebSocket of an accepted connection: starts its connection_handshake, which
    /// holds the stream until it is done.
    void start_handshakes();
    /// Waits for readability, holding the connection, then steps the handshake.
    void arm_handshake_read();
    /// Acts on where a handshake step left it: wait, or take its end.
    void on_handshake(handshake_state s);
    /// The handshake ended (`done`, else failed): the stream back; then validate connection,
    /// the loops and the bytes read behind it, or the close it calls for.
    void end_handshake(bool done);
    /// Layered: wire bytes just read (a mutable loan: the shard's scratch, decoded in place)
    /// through the codec to on_bytes; its answers go out by send_raw. @return false to stop reading.
    bool on_wire_bytes(std::span<std::byte> data);
    /// Acts on how the codec's feed ended: closes (with its reason, counted and logged as each
    /// end requires) unless it only wants more bytes. @return false to stop reading.
    bool after_layers(moraine::transport::layered_end end);
    /// Sends bytes as they go on the wire (TLS records, or WebSocket bytes without TLS) now, as
    /// far as the socket takes them without blocking; the rest after what is pending, in order.
    void send_raw(protocol::byte_view bytes);
    /// Encodes (the codec frames and seals) up to 256 queued frames or 256 KiB into `wire` and
    /// takes them out of the queue. @return false if the connection closed (an engine failure).
    bool encode_queued(protocol::byte_buffer& wire, bool& fell_below_low, std::size_t& bytes_before,
                       std::size_t& footprint_before);
    /// Layered end of turn: encodes, writes once without blocking, keeps what the socket did not take.
    void flush_layered();
    /// Layered: writes pending wire bytes (then newly encoded frames) asynchronously.
    void write_layered_async();
    /// "address:port" of the peer, for log lines ("?" once the socket no longer knows it).
    std::string peer_text() const;
    /// Dispatches every message `data` completes (a loan for the call). @return false to stop reading.
    bool on_bytes(protocol::byte_view data);
    /// Counts this connection against connections_per_address (shard_set::admit_connection).
    /// @return false after closing it (over the limit, or the peer already gone).
    bool admit(connection_origin origin);
    /// After enqueue: marks the connection for the end-of-turn flush (plain TCP, no write in
    /// flight) or wakes the writer (wake_writer).
    void schedule_write();
    /// Bookkeeping after bytes left the queue: metrics, on_drained, a pending close message,
    /// on_written. `bytes_before` is the queue's size before the consume.
    void after_write(std::size_t bytes_before, std::size_t footprint_before, bool fell_below_low);

    protocol::frame_assembler in_;  // holds a message only while it straddles reads
    std::vector<asio::const_buffer> async_batch_;  // plain TCP: the batch of a write in flight, freed after
    struct layers;
    struct layer_sink;
    std::unique_ptr<layers> layers_;  // TLS and/or WebSocket codec, handshake, wire bytes; null for plain TCP
    /// True while encoded bytes wait for the socket (never for plain TCP).
    bool wire_backlog() const noexcept;
    // Made on first use (an idle plain TCP connection has none: 120 bytes); it never expires
    // by itself, only cancel() wakes its waiter.
    std::unique_ptr<asio::steady_timer> resume_;  // reading waits on it while paused; resume_reads() cancels it
    /// `t`, made now if it was not yet.
    asio::steady_timer& lazy_timer(std::unique_ptr<asio::steady_timer>& t);
    /// How often a reader held by the memory budget looks again.
    static constexpr std::chrono::milliseconds budget_poll{1};
    /// holds_for_budget() and the budget is spent (or, once held, not yet below its low watermark).
    bool reads_held() noexcept;
    budget_hold budget_hold_;  // reads_held's hysteresis
    /// The timer reading waits on while paused: no expiry (resume_reads() cancels it), or
    /// budget_poll from now while held by the budget.
    asio::steady_timer& pause_timer();
    std::chrono::steady_clock::time_point last_activity_;

    std::uint32_t awaiting_backend_ = 0;  // forwarded twoways not yet answered
    // The bools left are single facts, each owned by one agent, with every combination legal.
    bool queued_since_heartbeat_ = true;  // enqueue() sets it, heartbeat_if_idle() clears it
    bool accepted_ = false;       // registered with the shard as an accepted connection (its role)
    std::optional<asio::ip::address> counted_from_;  // counted against connections_per_address
    close_state close_;      // open, close message queued / written, closed
    write_schedule writer_;  // marked for this turn's flush (turn_flusher); a write in flight
    read_gate reader_;       // one pending read wait; stopped for good by on_frame
};

}  // namespace moraine::net
