#include <moraine/net/ice_connection.hpp>

#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/net/connection_handshake.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/tls_context.hpp>
#include <moraine/transport/exact_size_handler.hpp>
#include <moraine/transport/layered_stream.hpp>
#include <moraine/transport/tls_engine.hpp>


#include <spdlog/spdlog.h>

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

namespace moraine::net {

namespace {
// Frames per writev: enough to amortise the syscall, well under IOV_MAX (1024), counting that a
// frame can take two iovecs.
constexpr std::size_t max_frames_per_write = 256;
namespace tp = moraine::transport;

/// Per shard thread: the wire bytes of one layered flush, written at once; only what the socket
/// does not take is copied to the connection.
protocol::byte_buffer& wire_scratch() {
    thread_local protocol::byte_buffer cipher;
    return cipher;
}

protocol::limits limits_of(const runtime_config& cfg) { return protocol::limits{cfg.message_size_max}; }

bool carries_requests(protocol::message_type t) noexcept {
    return t == protocol::message_type::request || t == protocol::message_type::batch_request;
}

}  // namespace

/// A layered connection's codec, its handshake while one runs, and its wire bytes in flight.
/// While `handshake` runs it holds the codec (`codec` is moved from, unused: writes are
/// disabled until the handshake hands it back). `pending` collects wire bytes the socket has not
/// taken yet (appended to at any time), `writing` is what an asynchronous write is sending now;
/// both are empty, with no capacity, once the peer took everything.
struct ice_connection::layers {
    layers(tp::tls_engine* engine, bool websocket, tp::ws_role role, std::uint64_t max_message_bytes)
        : codec(engine, websocket, role, max_message_bytes) {}
    tp::layered_stream codec;
    protocol::byte_buffer pending;
    protocol::byte_buffer writing;
    std::unique_ptr<connection_handshake> handshake;  // an accepted connection's, until it ends (last: the
                                                      // write path's members keep their offsets)
};

/// The connection as its layered_stream's sink once handshaken: the Ice stream to the framing,
/// answers to the socket (in order with what is pending). The upgrade is the handshake's.
struct ice_connection::layer_sink {
    ice_connection& c;
    bool stream(std::span<const std::byte> ice) { return c.on_bytes(ice) && !c.closed(); }
    bool send(protocol::byte_view wire) {
        if (c.closed()) return false;
        c.send_raw(wire);
        return !c.closed();
    }
    bool upgraded() { return !c.closed(); }  // never past the handshake
};

ice_connection::ice_connection(shard& home, transport t)
    : home_(home),
      transport_(std::move(t)),
      socket_(transport_.socket()),
      out_(home.cfg().connection_queue_high, home.cfg().connection_queue_low, home.cfg().connection_queue_max),
      last_activity_(std::chrono::steady_clock::now()) {
    ++home_.metrics().connections_open;
    out_.coalesce(!transport_.websocket());  // WebSocket writes one frame per Ice message
    if (!transport_.secure() && !transport_.websocket()) return;
    layers_ = std::make_unique<layers>(transport_.engine(), transport_.websocket(),
                                       transport_.server_side() ? tp::ws_role::server : tp::ws_role::client,
                                       home.cfg().message_size_max);
}

bool ice_connection::wire_backlog() const noexcept {
    return layers_ && (!layers_->pending.empty() || !layers_->writing.empty());
}

ice_connection::~ice_connection() {
    if (!closed()) --home_.metrics().connections_open;  // never opened for use (a failed set-up)
}

asio::steady_timer& ice_connection::lazy_timer(std::unique_ptr<asio::steady_timer>& t) {
    if (!t) t = std::make_unique<asio::steady_timer>(home_.executor(), std::chrono::steady_clock::time_point::max());
    return *t;
}

asio::steady_timer& ice_connection::pause_timer() {
    auto& t = lazy_timer(resume_);
    // Held by the memory budget, nothing will call resume_reads(): look again shortly.
    t.expires_at(budget_hold_.held() ? std::chrono::steady_clock::now() + budget_poll
                                     : std::chrono::steady_clock::time_point::max());
    return t;
}

bool ice_connection::reads_held() noexcept {
    const auto* budget = home_.budget();
    if (!budget || !holds_for_budget()) return false;
    if (budget_hold_.update(*budget)) ++home_.metrics().reads_held;
    return budget_hold_.held();
}

void ice_connection::relay_reply(std::int32_t, const protocol::reply_view&, std::uint8_t) {}

void ice_connection::start_loops() {
    startup_.start_loops();
    // Reads and writes never block the shard; a socket that cannot do that (only a broken
    // descriptor cannot) is closed rather than served some other way.
    boost::system::error_code ec;
    socket_.non_blocking(true, ec);
    if (ec) {
        close(close_reason::io_error, "cannot make the socket non-blocking: " + ec.message());
        return;
    }
    // No coroutines: the read and write coroutines' frames and pending operations cost ~2.5 KiB
    // per idle connection, a pending wait ~0.2 KiB (perf/README.md, "Idle RSS per session").
    arm_read();
    if (!out_.empty()) schedule_write();  // queued before the start (validate connection)
    if (layers_ && layers_->codec.has_early()) {
        auto early = layers_->codec.take_early();
        layer_sink sink{*this};
        if (!after_layers(layers_->codec.feed_plain(early, sink))) reader_.stop();
    }
}

void ice_connection::wake_writer() {
    if (layers_) write_layered_async();
    else write_async();
}

void ice_connection::schedule_write() {
    // Written at the end of the turn, once for everything the turn queued.
    if (writer_.in_flight() || !startup_.writes_enabled()) {
        wake_writer();
        return;
    }
    if (!writer_.mark()) return;
    home_.flusher().mark(shared_from_this());
}

void ice_connection::flush_turn() {
    writer_.unmark();
    if (closed() || writer_.in_flight() || !startup_.writes_enabled() || out_.empty()) return;
    if (layers_) return flush_layered();
    thread_local std::vector<asio::const_buffer> batch;  // one per shard thread, reused
    out_.gather(batch, max_frames_per_write);
    boost::system::error_code ec;
    const std::size_t n = socket_.write_some(batch, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
        wake_writer();  // the socket is full: write_async waits until it takes more
        return;
    }
    if (ec) {
        close(close_reason::io_error, ec.message());
        return;
    }
    const std::size_t before = out_.bytes(), footprint_before = out_.footprint();
    after_write(before, footprint_before, out_.consume(n));
    if (!out_.empty() && !closed()) wake_writer();  // a short write, or more than one writev holds
}

void ice_connection::prefetch_for_flush() const noexcept {
    __builtin_prefetch(&writer_);
    __builtin_prefetch(&close_);
    __builtin_prefetch(&out_);
    __builtin_prefetch(&socket_);
    __builtin_prefetch(&transport_);
}

void ice_connection::after_write(std::size_t bytes_before, std::size_t footprint_before, bool fell_below_low) {
    home_.metrics().queue_bytes -= bytes_before - out_.bytes();
    home_.metrics().queue_footprint -= footprint_before - out_.footprint();
    home_.note_queue_bytes();
    if (fell_below_low) on_drained();
    if (out_.empty() && close_.message_written()) --home_.metrics().close_messages_pending;
    if (out_.empty() && !closed() && !wire_backlog()) on_written();
}

void ice_connection::start_accepted() {
    ++home_.metrics().connections_accepted;
    accepted_ = true;
    home_.add_accepted(this);
    if (!admit(connection_origin::accepted)) return;
    if (layers_) return start_handshakes();
    enqueue(protocol::byte_buffer(protocol::validate_connection_message.begin(),
                                  protocol::validate_connection_message.end()));
    start_loops();
}

bool ice_connection::at_message_boundary() const noexcept { return in_.buffered() == 0 && movable_with_partial(); }

bool ice_connection::movable_with_partial() const noexcept {
    if (!startup_.loops_started()) return false;  // handshaking (the codec is the handshake's) or not started
    // WebSocket without TLS: upgraded, between two frames, no wire bytes waiting; a fresh decoder
    // in the new process then reads on. TLS state never moves.
    const bool layers_movable =
        !layers_ || (layers_->codec.movable() && layers_->pending.empty() && layers_->writing.empty());
    return layers_movable && close_.open() && out_.empty() && writer_.idle() && awaiting_backend_ == 0;
}

std::chrono::milliseconds ice_connection::idle_for() const noexcept {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - last_activity_);
}

unique_fd ice_connection::release_for_move(std::string_view why) {
    if (closed() || !socket_.is_open()) return unique_fd();
    unique_fd copy(::fcntl(socket_.native_handle(), F_DUPFD_CLOEXEC, 0));
    if (!copy) return copy;
    const bool close_message_pending = close_.close() == close_state::value::close_queued;
    auto& m = home_.metrics();
    --m.connections_open;
    if (accepted_) home_.remove_accepted(this);
    if (counted_from_) home_.set().release_connection(*counted_from_);
    if (close_message_pending) --m.close_messages_pending;
    ++m.closed[static_cast<std::size_t>(close_reason::moved)];
    m.queue_bytes -= out_.bytes();
    m.queue_footprint -= out_.footprint();
    home_.note_queue_bytes();
    // release(): out of epoll (pending waits end with operation_aborted), then our descriptor
    // closes; `copy` keeps the connection open for the process it goes to.
    boost::system::error_code ec;
    const int fd = socket_.release(ec);
    if (ec) socket_.close(ec);
    else ::close(fd);
    if (resume_) resume_->cancel();
    on_closed(why);
    return copy;
}

bool ice_connection::start_adopted(protocol::byte_view pending, std::chrono::milliseconds idle) {
    ++home_.metrics().connections_accepted;
    accepted_ = true;
    home_.add_accepted(this);
    if (!admit(connection_origin::moved)) return false;  // the peer is gone
    last_activity_ = std::chrono::steady_clock::now() - idle;
    start_loops();
    if (closed()) return false;
    // Before anything the socket holds: the old process read these bytes first.
    if (!pending.empty() && !on_bytes(pending)) reader_.stop();
    return !closed();
}

bool ice_connection::admit(connection_origin origin) {
    if (home_.cfg().connections_per_address == 0) return true;
    boost::system::error_code ec;
    const auto peer = socket_.remote_endpoint(ec);
    if (ec) {
        close(close_reason::peer_closed, "peer gone before its connection was admitted");
        return false;
    }
    if (!home_.set().admit_connection(peer.address(), origin)) {
        // Before any byte: an Ice client sees the connection closed, as for a full backlog.
        spdlog::warn("connection from {} refused: {} connections from that address are open (connections_per_address)",
                     peer.address().to_string(), home_.cfg().connections_per_address);
        close(close_reason::policy, "too many connections from one address");
        return false;
    }
    counted_from_ = peer.address();
    return true;
}

bool ice_connection::reject(std::string_view what, const boost::system::error_code& ec) {
    ++home_.metrics().protocol_errors;
    close(close_reason::protocol_error, std::string(what) + ": " + ec.message());
    return false;
}

enqueue_result ice_connection::enqueue(outbound_frame f) {
    if (!close_.open()) {  // one test on the per-event path, then which of the two
        if (close_.closed()) return enqueue_result::over_limit;
        return enqueue_result::queued;  // closing: nothing may follow the close-connection message
    }
    queued_since_heartbeat_ = true;
    const std::size_t size = f.size(), footprint_before = out_.footprint();
    const auto r = out_.push(std::move(f));
    if (r == enqueue_result::over_limit) {
        ++home_.metrics().slow_consumers_closed;
        close(close_reason::slow_consumer, "slow consumer: outbound queue over its limit");
        return r;
    }
    home_.metrics().queue_bytes += size;
    home_.metrics().queue_footprint += out_.footprint() - footprint_before;
    home_.note_queue_bytes();
    schedule_write();
    return r;
}

void ice_connection::heartbeat_if_idle() {
    if (std::exchange(queued_since_heartbeat_, false)) return;
    heartbeat();
}

void ice_connection::heartbeat() {
    if (!close_.open() || !startup_.loops_started()) return;
    ++home_.metrics().heartbeats_sent;
    enqueue(protocol::byte_buffer(protocol::validate_connection_message.begin(),
                                  protocol::validate_connection_message.end()));
}

void ice_connection::close_gracefully() {
    if (!close_.open()) return;
    if (!startup_.loops_started()) {  // still in its TLS handshake or WebSocket upgrade: no Ice byte sent yet
        close(close_reason::shutdown, "router shutting down");
        return;
    }
    if (awaiting_backend_ > 0) {  // the drain deadline passed: the peer must not retry those requests
        close(close_reason::shutdown, "router shutting down with requests still in flight");
        return;
    }
    enqueue(protocol::byte_buffer(protocol::close_connection_message.begin(), protocol::close_connection_message.end()));
    if (closed()) return;
    // Set only now: the enqueue itself may have written it (a layered write path encodes at once).
    if (close_.queue_close_message(!out_.empty())) ++home_.metrics().close_messages_pending;
}

void ice_connection::close(close_reason reason, std::string_view why) {
    const auto before = close_.close();
    if (before == close_state::value::closed) return;
    auto& m = home_.metrics();
    --m.connections_open;
    if (accepted_) home_.remove_accepted(this);
    if (counted_from_) home_.set().release_connection(*counted_from_);
    if (before == close_state::value::close_queued) --m.close_messages_pending;  // or abandoned: no longer pending
    ++m.closed[static_cast<std::size_t>(reason)];
    m.queue_bytes -= out_.bytes();  // the frames stay until the connection is freed, but no longer wait
    m.queue_footprint -= out_.footprint();
    home_.note_queue_bytes();
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);  // both loops wake with operation_aborted and return
    if (resume_) resume_->cancel();
    on_closed(why);  // queued frames are freed with the connection: a pending writev may still point at them
}

void ice_connection::arm_read() {
    if (closed() || !reader_.arm()) return;  // at most one wait pending
    // Closing (our close connection message queued or sent) still reads: the peer's close ends
    // the connection, its replies still count, and its requests are dropped (dispatch_frame).
    if (reader_.stopped() || reads_paused() || reads_held()) {
        // As the TLS and WebSocket read loops do: the pending wait on resume_ holds the
        // connection until resume_reads() (or close()) cancels it, or the budget poll expires.
        pause_timer().async_wait([self = shared_from_this()](const boost::system::error_code&) {
            self->reader_.woke();
            self->arm_read();
        });
        return;
    }
    // Allocated at its own size: an idle connection keeps this wait pending (exact_size_handler.hpp).
    socket_.async_wait(tcp::socket::wait_read,
                       tp::exact_size([self = shared_from_this()](const boost::system::error_code& ec) {
                           self->on_readable(ec);
                       }));
}

void ice_connection::on_readable(const boost::system::error_code& wait_error) {
    reader_.woke();
    if (closed()) return;
    if (wait_error) {
        close(close_reason::io_error, wait_error.message());
        return;
    }
    // Paused while this wait was pending (a takeover holding the topic service): nothing more is
    // read, so the pause takes effect at once rather than one read later.
    if (reads_paused()) return arm_read();
    // Nothing is awaited between this read and the end of dispatch: the shared scratch is ours.
    auto& scratch = home_.scratch();
    boost::system::error_code ec;
    const std::size_t n = socket_.read_some(asio::buffer(scratch), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
        arm_read();
        return;
    }
    if (ec) return close_on_read_error(ec);
    last_activity_ = std::chrono::steady_clock::now();
    bool more = false;
    try {
        const std::span<std::byte> data(scratch.data(), n);
        more = layers_ ? on_wire_bytes(data) : on_bytes(data);
    } catch (...) {
        // As co_spawn does for the TLS and WebSocket read loops: counted and logged, reading
        // stops, the shard runs on.
        report_bug(std::current_exception());
    }
    if (!more) reader_.stop();
    arm_read();
}

void ice_connection::write_async() {
    if (closed() || writer_.in_flight() || !startup_.writes_enabled() || out_.empty()) return;
    out_.gather(async_batch_, max_frames_per_write);
    writer_.begin_write();
    asio::async_write(socket_, async_batch_,
                      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                          self->on_async_written(ec);
                      });
}

void ice_connection::on_async_written(const boost::system::error_code& ec) {
    writer_.end_write();
    if (closed()) return;
    if (ec) {
        close(close_reason::io_error, ec.message());
        return;
    }
    try {
        const std::size_t before = out_.bytes(), footprint_before = out_.footprint();
        after_write(before, footprint_before, out_.consume_gathered());
        if (out_.empty()) std::vector<asio::const_buffer>().swap(async_batch_);  // a drained connection keeps no batch
        else write_async();
    } catch (...) {
        report_bug(std::current_exception());  // as co_spawn does for the write loop; the shard runs on
    }
}

bool ice_connection::on_bytes(protocol::byte_view data) {
    boost::system::error_code ec;
    const bool more = in_.feed(data, limits_of(home_.cfg()), ec,
                               [this](const protocol::frame_view& frame) { return dispatch_frame(frame); });
    if (ec) return reject("protocol error", ec);
    return more;
}

bool ice_connection::dispatch_frame(const protocol::frame_view& frame) {
    if (closed()) return false;  // an earlier message of the same read closed the connection
    if (!close_.open() && carries_requests(frame.header.type)) {
        // Our close connection message is queued or sent: the peer, told the close is graceful,
        // sends this request again on another connection (docs/ice-wire.md §3, "Graceful
        // close"). Dispatching it here too would run it twice.
        spdlog::debug("request received after close connection was sent: not dispatched (the peer retries it)");
        return true;
    }
    if (frame.header.compression != protocol::compression_status::compressed) return on_frame(frame) && !closed();
    protocol::byte_buffer plain;
    boost::system::error_code ec;
    const auto inner = protocol::decompress_frame(frame, limits_of(home_.cfg()), plain, ec);
    if (!inner) return reject("bad compressed message", ec);
    return on_frame(*inner) && !closed();
}

void ice_connection::close_on_read_error(const boost::system::error_code& ec) {
    // A TLS peer that closes without close_notify reads as EOF here: still the peer's close.
    if (ec == asio::error::eof)
        close(close_reason::peer_closed, "peer closed the connection");
    else
        close(close_reason::io_error, ec.message());
}

// ---- TLS and WebSocket: the plain-TCP paths with layers ---------------------------------------

std::string ice_connection::peer_text() const {
    boost::system::error_code ec;
    const auto peer = socket_.remote_endpoint(ec);
    if (ec) return "?";
    return peer.address().to_string() + ":" + std::to_string(peer.port());
}

void ice_connection::start_handshakes() {
    boost::system::error_code ec;
    socket_.non_blocking(true, ec);
    if (ec) {
        close(close_reason::io_error, "cannot make the socket non-blocking: " + ec.message());
        return;
    }
    startup_.hold_writes();  // the codec is the handshake's; validate connection comes after it
    layers_->handshake =
        std::make_unique<connection_handshake>(socket_, transport_.engine(), std::move(layers_->codec));
    layers_->handshake->start_accepted(
        [this](protocol::byte_view wire) {
            send_raw(wire);
            return !closed();
        },
        std::chrono::milliseconds(home_.cfg().tls.handshake_timeout_ms),
        [weak = weak_from_this()](const char* what) {
            if (auto c = weak.lock(); c && !c->startup_.loops_started()) c->close(close_reason::handshake, what);
        });
    arm_handshake_read();
}

void ice_connection::arm_handshake_read() {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
        if (self->closed()) return;
        // The shard's scratch is the handshake's until this handler returns, as in on_readable.
        self->on_handshake(self->layers_->handshake->on_readable(ec, self->home_.scratch(), self->home_.handshakes(),
                                                                 [self] {
                                                                     if (self->closed()) return;
                                                                     self->on_handshake(
                                                                         self->layers_->handshake->after_pool_step());
                                                                 }));
    });
}

void ice_connection::on_handshake(handshake_state s) {
    if (closed()) return;  // by the handshake's own send, or its deadline
    switch (s) {
    case handshake_state::want_read:
        return arm_handshake_read();
    case handshake_state::stepping:
        return;  // the pool step's `resume` holds the connection and comes back here
    case handshake_state::done:
        return end_handshake(true);
    case handshake_state::failed:
        return end_handshake(false);
    }
}

void ice_connection::end_handshake(bool done) {
    const auto handshake = std::move(layers_->handshake);  // its deadline goes with it
    layers_->codec = handshake->take_stream();
    const auto end = handshake->end();
    if (!done) {
        // Closes for a refused upgrade or a TLS error as after the handshake, else for the
        // handshake's own failure.
        if (end != tp::layered_end::need_more) after_layers(end);
        else close(handshake->failure().reason, handshake->failure().why);
        return;
    }
    startup_.release_writes();
    enqueue(protocol::byte_buffer(protocol::validate_connection_message.begin(),
                                  protocol::validate_connection_message.end()));
    start_loops();
    // What came right behind the handshake, in this read: dispatched now, then the end that
    // came with it (a close frame, a TLS close), as a read would.
    const auto early = handshake->take_early();
    const bool more = closed() || early.empty() || on_bytes(early);
    if (closed()) return;
    if (!more || (end != tp::layered_end::need_more && !after_layers(end))) reader_.stop();
}

asio::awaitable<client_handshake_result> ice_connection::client_handshakes(const protocol::endpoint& ep) {
    // One agent: the coroutine frame owns the handshake (docs/style.md §3), and with it the
    // codec, handed back whatever the outcome (writes wait for the back end's validate
    // connection, so nothing encodes meanwhile).
    connection_handshake handshake(socket_, transport_.engine(), std::move(layers_->codec));
    const auto* contexts = transport_.contexts().get();
    auto result = co_await handshake.connect(contexts ? &contexts->config() : nullptr, ep);
    layers_->codec = handshake.take_stream();
    co_return result;
}

bool ice_connection::on_wire_bytes(std::span<std::byte> data) {
    layer_sink sink{*this};
    return after_layers(layers_->codec.feed(data, sink));
}

bool ice_connection::after_layers(tp::layered_end end) {
    switch (end) {
    case tp::layered_end::need_more:
        return !closed();
    case tp::layered_end::stopped:
        return false;
    case tp::layered_end::tls_closed:
    case tp::layered_end::ws_closed:
        close(close_reason::peer_closed, layers_->codec.why());
        return false;
    case tp::layered_end::tls_failed:
        ++home_.metrics().protocol_errors;
        close(close_reason::protocol_error, layers_->codec.why());
        return false;
    case tp::layered_end::ws_failed: {
        const std::string what = layers_->codec.why();
        spdlog::info("WebSocket connection from {} closed: {}", peer_text(), what);
        ++home_.metrics().protocol_errors;
        close(close_reason::protocol_error, what);
        return false;
    }
    case tp::layered_end::refused: {
        // Worth a line: a browser or proxy misconfigured in front of the router shows here.
        const std::string why = layers_->codec.why();
        spdlog::info("WebSocket connection from {} refused: {}", peer_text(), why);
        close(close_reason::handshake, why);
        return false;
    }
    case tp::layered_end::seal_failed:
        close(close_reason::io_error, layers_->codec.why());
        return false;
    }
    return false;
}

void ice_connection::send_raw(protocol::byte_view bytes) {
    std::size_t n = 0;
    if (!wire_backlog()) {  // nothing ahead of it: straight to the socket
        boost::system::error_code ec;
        n = socket_.write_some(asio::buffer(bytes.data(), bytes.size()), ec);
        if (ec == asio::error::would_block || ec == asio::error::try_again) n = 0;
        else if (ec) return close(close_reason::io_error, ec.message());
    }
    if (n == bytes.size()) return;
    layers_->pending.insert(layers_->pending.end(), bytes.begin() + static_cast<std::ptrdiff_t>(n), bytes.end());
    write_layered_async();
}

bool ice_connection::encode_queued(protocol::byte_buffer& wire, bool& fell_below_low, std::size_t& bytes_before,
                                   std::size_t& footprint_before) {
    thread_local std::vector<asio::const_buffer> batch;
    out_.gather(batch, max_frames_per_write);
    const auto encoded = layers_->codec.encode(
        out_.gathered(),
        [this](std::size_t i) {
            const auto& f = out_.gathered_frame(i);
            return tp::message_pieces{protocol::byte_view(f.head), f.tail ? protocol::byte_view(*f.tail) : protocol::byte_view()};
        },
        wire);
    if (!encoded.ok) {
        close(close_reason::io_error, "TLS error: " + transport_.engine()->error());
        return false;
    }
    bytes_before = out_.bytes();
    footprint_before = out_.footprint();
    fell_below_low = out_.consume(encoded.bytes);  // encoded: the wire bytes carry them now
    return true;
}

void ice_connection::flush_layered() {
    if (wire_backlog()) return write_layered_async();  // bytes before these must leave first
    auto& wire = wire_scratch();
    wire.clear();
    bool fell = false;
    std::size_t before = 0, footprint_before = 0;
    if (!encode_queued(wire, fell, before, footprint_before)) return;
    boost::system::error_code ec;
    std::size_t n = socket_.write_some(asio::buffer(wire), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) n = 0;
    else if (ec) return close(close_reason::io_error, ec.message());
    if (n < wire.size()) layers_->pending.assign(wire.begin() + static_cast<std::ptrdiff_t>(n), wire.end());
    if (wire.capacity() > 2 * tp::layered_stream::flush_max) protocol::byte_buffer().swap(wire);  // give a burst back
    after_write(before, footprint_before, fell);
    if ((wire_backlog() || !out_.empty()) && !closed()) write_layered_async();
}

void ice_connection::write_layered_async() {
    if (closed() || writer_.in_flight()) return;
    if (layers_->pending.empty()) {
        if (!startup_.writes_enabled() || out_.empty()) return;
        bool fell = false;
        std::size_t before = 0, footprint_before = 0;
        if (!encode_queued(layers_->pending, fell, before, footprint_before)) return;
        after_write(before, footprint_before, fell);
        if (closed() || layers_->pending.empty()) return;
    }
    std::swap(layers_->pending, layers_->writing);  // appends go to `pending` while this write runs
    writer_.begin_write();
    asio::async_write(socket_, asio::buffer(layers_->writing),
                      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                          self->writer_.end_write();
                          if (self->closed()) return;
                          if (ec) return self->close(close_reason::io_error, ec.message());
                          protocol::byte_buffer().swap(self->layers_->writing);  // a drained connection keeps nothing
                          try {
                              if (!self->layers_->pending.empty() || !self->out_.empty()) self->write_layered_async();
                              else self->on_written();
                          } catch (...) {
                              report_bug(std::current_exception());
                          }
                      });
}

}  // namespace moraine::net
