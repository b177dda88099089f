#pragma once
// The TLS and WebSocket layers of one connection as one codec, sans-I/O: wire bytes in, Ice
// stream bytes out; Ice messages in, wire bytes out (docs/transports.md §1).
#include <moraine/protocol/bytes.hpp>
#include <moraine/transport/tls_engine.hpp>
#include <moraine/transport/ws_control_frame.hpp>
#include <moraine/transport/ws_error.hpp>
#include <moraine/transport/ws_frame_decoder.hpp>
#include <moraine/transport/ws_frame_header.hpp>
#include <moraine/transport/ws_frame_reader.hpp>
#include <moraine/transport/ws_server_upgrade.hpp>

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace moraine::transport {

/// Why layered_stream::feed or feed_plain returned. Every value but need_more and stopped ends
/// the connection: layered_stream::why() then says why, in the words the router logs.
enum class layered_end : std::uint8_t {
    need_more,    ///< every byte was used (a partial record, frame or head is kept): read more
    stopped,      ///< a sink callback returned false (reading stops, or the connection closed)
    tls_closed,   ///< the peer sent TLS close_notify
    tls_failed,   ///< a TLS error (a bad record, an alert); an alert to send went to the sink first
    ws_closed,    ///< the peer sent a WebSocket close frame; its answer went to the sink first
    ws_failed,    ///< a WebSocket protocol error; the close frame for it (if any) went to the sink first
    refused,      ///< the WebSocket upgrade was refused (its HTTP answer, if any, went to the sink first)
    seal_failed,  ///< an answer could not be sealed (TLS cannot send any more)
};

/// One Ice message to encode: its head and an optional tail (the shared body of an event),
/// sent as one message, both loans for the call.
struct message_pieces {
    protocol::byte_view head;
    protocol::byte_view tail;
};

/// What layered_stream::encode did.
struct layered_encoded {
    std::size_t bytes = 0;  ///< Ice bytes encoded: whole messages from the front of the batch
    bool ok = true;         ///< false on a TLS error (nothing usable in the wire bytes then)
};

/** The layers between a connection's socket and its Ice stream: TLS (a tls_engine the caller
    owns), WebSocket (a frame decoder, the server side's upgrade, framing and masking out), or
    both (wss). It never sees a socket: the caller reads wire bytes into any buffer and feeds them,
    and writes what it hands back. So it can be driven by tests byte by byte.

    Inbound, feed() passes the Ice stream to a Sink, a type with three members, called
    synchronously during the feed and never after it:
    - `bool stream(std::span<const std::byte> ice)`: Ice stream bytes (a loan for the call, not
      aligned with Ice messages); false stops the feed (reading stops or the connection closed);
    - `bool send(protocol::byte_view wire)`: wire bytes to write now, before anything encoded
      later (the upgrade's answer, a pong, a close frame, TLS alerts and key update answers;
      already sealed); false when the connection can send nothing more;
    - `bool upgraded()`: the WebSocket upgrade was accepted (the 101 already went to send);
      false stops the feed.
    The sink is a template argument: no virtual call on the way to the Ice framing.

    Outbound, encode() turns a batch of Ice messages into wire bytes: one binary frame per
    message over WebSocket (masked by a client), sealed over TLS with small pieces gathered into
    one record write of up to coalesce_bytes and a large piece sealed where it lies.

    State kept between calls: the WebSocket decoder's partial header (the TLS engine keeps its
    own partial record), the upgrade head until the decision, and `early` stream bytes a client's
    handshakes read ahead of the loops. Not thread-safe. */
class layered_stream {
public:
    /// Over TLS, pieces below this many bytes are gathered into one record write (bytes).
    static constexpr std::size_t coalesce_bytes = 64 * 1024;
    /// One encode() stops taking messages once it produced this many wire bytes: what one
    /// non-blocking write can usually hand the kernel.
    static constexpr std::size_t flush_max = 256 * 1024;

    /** Layers over `engine` (null: no TLS; the engine must outlive this object, and its
        handshake is the caller's) and, when `websocket`, WebSocket frames for the `role` end,
        messages over `max_message_bytes` refused (0: no limit). */
    layered_stream(tls_engine* engine, bool websocket, ws_role role, std::uint64_t max_message_bytes);
    ~layered_stream();
    layered_stream(layered_stream&&) noexcept;
    layered_stream& operator=(layered_stream&&) noexcept;
    layered_stream(const layered_stream&) = delete;
    layered_stream& operator=(const layered_stream&) = delete;

    /// True over TLS.
    bool secure() const noexcept { return engine_ != nullptr; }
    /// True over WebSocket.
    bool websocket() const noexcept { return ws_.has_value(); }

    /// Server side of a WebSocket: the first stream bytes are an HTTP upgrade request, to be
    /// answered and decided before any frame is read.
    void expect_upgrade();
    /// True from expect_upgrade() until the upgrade was accepted (still true once refused). A
    /// client's upgrade is client_handshake's: its stream never upgrades itself.
    bool upgrading() const noexcept { return upgrade_ != nullptr; }
    /// After layered_end::refused: the cause as a ws_errc (ws_upgrade_result::ec); else none.
    boost::system::error_code upgrade_error() const noexcept;

    /** Wire bytes just read: decrypted (TLS), then the upgrade, then WebSocket frames, the Ice
        stream to `sink`. `wire` is a mutable loan (decoded in place). Stops at the first end.
        @return need_more or stopped to go on (or stop reading), anything else to close. */
    template <class Sink>
    layered_end feed(std::span<std::byte> wire, Sink& sink);
    /// The same for stream bytes already under TLS (the `early` bytes).
    template <class Sink>
    layered_end feed_plain(std::span<std::byte> plain, Sink& sink);
    /// Why the last feed ended the connection, as the router logs it and passes to close (e.g.
    /// "peer closed the TLS connection", "TLS error: ...", the upgrade's refusal). Empty otherwise.
    std::string why() const;

    /// Keeps stream bytes (already decrypted) a client's handshake read beyond its last flight,
    /// for feed_plain once the connection reads.
    void hold_early(protocol::byte_view plain);
    /// True while early bytes are held.
    bool has_early() const noexcept { return early_ && !early_->empty(); }
    /// The early bytes, leaving none (and no capacity) behind.
    protocol::byte_buffer take_early() noexcept;

    /** Appends `plain` (stream bytes outside any frame: an upgrade request) to `wire`, sealed
        over TLS. @return false on a TLS error (the engine's error() says why). */
    bool seal(protocol::byte_view plain, protocol::byte_buffer& wire);

    /** Encodes messages `message_at(0)`, `message_at(1)`, ... up to `count` (each a
        message_pieces) and appends the wire bytes to `wire`; stops early once `wire` reaches
        flush_max bytes. Allocates nothing per message beyond the growth of `wire` (the staging
        and masking buffers are per thread). @return the Ice bytes taken and whether sealing
        worked; on a failure the engine's error() says why. */
    template <class MessageAt>
    layered_encoded encode(std::size_t count, MessageAt&& message_at, protocol::byte_buffer& wire);

    /** True when a fresh layered_stream in another process would read on from here exactly as
        this one: WebSocket without TLS (TLS state never moves), upgraded, between two frames,
        no early bytes held. */
    bool movable() const noexcept;

private:
    struct upgrade_state {
        ws_server_upgrade request;     // the client's request, read until the decision
        std::string why;               // the refusal, once refused
        boost::system::error_code ec;  // its cause
    };

    template <class Sink>
    bool plain_bytes(std::span<std::byte> data, Sink& sink);
    template <class Sink>
    bool upgrade_bytes(std::span<std::byte> data, Sink& sink);
    template <class Sink>
    bool ws_bytes(std::span<std::byte> data, Sink& sink);
    /// Seals `bytes` over TLS and hands them to the sink (seal_failed if sealing fails).
    template <class Sink>
    bool send_plain(protocol::byte_view bytes, Sink& sink);
    /// The upgrade's decision on `data`; on refused, remembers its reason.
    ws_upgrade_result put_upgrade(protocol::byte_view data);
    /// Ends the feed with `e` unless an earlier end came first (the first cause is the one
    /// the connection closes for). @return false (stop).
    bool stop_with(layered_end e) noexcept {
        if (end_ == layered_end::need_more) end_ = e;
        return false;
    }

    /// The staging buffer of this thread, emptied, for one encode().
    static protocol::byte_buffer& begin_encode() noexcept;
    /// Frames and seals one message into `staging` or `wire`. @return false on a TLS error.
    bool encode_message(const message_pieces& m, protocol::byte_buffer& staging, protocol::byte_buffer& wire);
    /// Seals what is left in `staging` into `wire`; gives a burst's staging capacity back.
    bool end_encode(protocol::byte_buffer& staging, protocol::byte_buffer& wire);

    tls_engine* engine_;
    std::optional<ws_frame_decoder> ws_;
    std::unique_ptr<upgrade_state> upgrade_;  // a ws/wss connection until upgraded
    // Stream bytes a client's handshakes read ahead of the loops; null nearly always (a pointer
    // rather than a buffer: 16 bytes less for every idle TLS or WebSocket connection).
    std::unique_ptr<protocol::byte_buffer> early_;
    ws_role role_;
    layered_end end_ = layered_end::need_more;  // of the feed under way, or of the last one
    ws_errc ws_error_{};                        // ws_failed: the decoder's error
};

template <class Sink>
layered_end layered_stream::feed(std::span<std::byte> wire, Sink& sink) {
    if (!engine_) return feed_plain(wire, sink);
    end_ = layered_end::need_more;
    protocol::byte_buffer reply;  // alerts, key update answers: rare, and no allocation when empty
    const tls_step step = engine_->read(wire, reply, thread_plain_buffer(),
                                        [&](std::span<std::byte> plain) { return plain_bytes(plain, sink); });
    // An end inside the stream closes the connection now: no TLS answer is worth sending then.
    if (end_ != layered_end::need_more) return end_;
    if (!reply.empty()) sink.send(reply);
    switch (step.status) {
    case tls_status::want_read:
        return layered_end::need_more;
    case tls_status::ok:
        return layered_end::stopped;  // the sink asked to stop
    case tls_status::closed:
        return end_ = layered_end::tls_closed;
    case tls_status::failed:
        break;
    }
    return end_ = layered_end::tls_failed;
}

template <class Sink>
layered_end layered_stream::feed_plain(std::span<std::byte> plain, Sink& sink) {
    end_ = layered_end::need_more;
    const bool more = plain_bytes(plain, sink);
    if (end_ != layered_end::need_more) return end_;
    return more ? layered_end::need_more : layered_end::stopped;
}

template <class Sink>
bool layered_stream::plain_bytes(std::span<std::byte> data, Sink& sink) {
    if (!ws_) return sink.stream(data);
    if (upgrade_) return upgrade_bytes(data, sink);
    return ws_bytes(data, sink);
}

template <class Sink>
bool layered_stream::upgrade_bytes(std::span<std::byte> data, Sink& sink) {
    const ws_upgrade_result r = put_upgrade(data);
    if (r.status == ws_upgrade_status::need_more) return true;
    if (!r.answer.empty() && !send_plain(protocol::as_bytes(r.answer), sink) && end_ != layered_end::need_more)
        return false;  // the answer could not be sealed
    if (r.status == ws_upgrade_status::refused) return stop_with(layered_end::refused);
    upgrade_.reset();
    // The client's first frames may come right behind its request, in the same read.
    return sink.upgraded() && ws_bytes(data.subspan(r.consumed), sink);
}

template <class Sink>
bool layered_stream::ws_bytes(std::span<std::byte> data, Sink& sink) {
    boost::system::error_code ec;
    const ws_read_end e = read_ws_frames(
        *ws_, data, ec, [&](std::span<const std::byte> payload) { return sink.stream(payload); },
        [&](const ws_control_frame& answer) { return send_plain(answer.view(), sink); });
    if (e == ws_read_end::need_more) return true;
    if (e == ws_read_end::closed) return stop_with(layered_end::ws_closed);
    if (e == ws_read_end::error) {
        if (const auto code = ws_close_code(ec)) send_plain(ws_close_frame(role_, code).view(), sink);
        ws_error_ = static_cast<ws_errc>(ec.value());  // the decoder's errors are all ws_errc
        return stop_with(layered_end::ws_failed);
    }
    return false;  // stopped
}

template <class Sink>
bool layered_stream::send_plain(protocol::byte_view bytes, Sink& sink) {
    if (!engine_) return sink.send(bytes);
    protocol::byte_buffer records;
    if (!engine_->write(bytes, records)) return stop_with(layered_end::seal_failed);
    return sink.send(records);
}

template <class MessageAt>
layered_encoded layered_stream::encode(std::size_t count, MessageAt&& message_at, protocol::byte_buffer& wire) {
    auto& staging = begin_encode();
    layered_encoded r;
    for (std::size_t i = 0; i < count && r.ok; ++i) {
        const message_pieces m = message_at(i);
        r.ok = encode_message(m, staging, wire);
        r.bytes += m.head.size() + m.tail.size();
        if (wire.size() + staging.size() >= flush_max) break;
    }
    if (!r.ok) staging.clear();  // the engine failed: nothing more is sealed
    r.ok = end_encode(staging, wire) && r.ok;
    return r;
}

}  // namespace moraine::transport
