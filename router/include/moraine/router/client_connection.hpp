#pragma once
// A client's connection to Glacier2.Client.Endpoints and, once created, its session.
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/ice_connection.hpp>
#include <moraine/net/session_directory.hpp>
#include <moraine/net/takeover_message.hpp>
#include <moraine/net/tls_peer.hpp>
#include <moraine/net/unique_fd.hpp>
#include <moraine/router/buffered_request.hpp>
#include <moraine/router/forward_options.hpp>
#include <moraine/router/outstanding_calls.hpp>
#include <moraine/router/request_queue.hpp>
#include <moraine/router/session_shard.hpp>
#include <moraine/session/session.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace moraine::router {

/** A moved session's state from `m`, filters built from `cfg` then edited as SessionControl left
    them. @throws std::invalid_argument if `m` cannot be honoured (an undecodable proxy or identity). */
std::unique_ptr<session::session> moved_session(const net::takeover_session& m, const config& cfg);

/// One client TCP connection: router-object requests are served here, every other request is
/// routed through the session's routing table; callbacks for the session arrive via forward_callback.
class client_connection final : public net::ice_connection {
public:
    client_connection(session_shard& local, net::transport socket);
    ~client_connection() override;

    /// Sends validate connection and starts the loops; registers with the shard's idle sweep.
    void start();

    /// Relays a back end's reply to the client's request `client_request_id`.
    /// `compression` is the client request's compression byte: 1 or 2 allow a compressed reply.
    void relay_reply(std::int32_t client_request_id, const protocol::reply_view& r, std::uint8_t compression) override;

    /** Sends a callback request to the client, at once or through the session's buffered
        queue (Glacier2.Server.Buffered): `message` is a whole uncompressed request message with
        request id 0 at offset 14; `how` says how it leaves (server_connection applied `_fwd`); a
        twoway gets a fresh id when sent and its reply goes back along `route`. A non-empty
        `override_key` replaces a queued callback with the same key (`_ovrd`). */
    void forward_callback(protocol::byte_buffer message, const forward_options& how, std::string override_key,
                          net::callback_route route);

    /** Sends a topic event to this client (a subscriber servant of its session): `f.head` is the
        request up to the params (small params too), with request id 0 at offset 14; `f.tail` the
        shared params, if not in the head.
        A twoway event gets a fresh request id; its reply goes to `done` if set (nullptr if this
        connection closes first; posted, never run inside a close), else it is dropped.
        @return the queue's state; over_limit closes the connection and `done` is not kept. */
    net::enqueue_result deliver_event(net::outbound_frame f, bool twoway, net::session_directory::reply_done done);

    /// A back end this connection feeds is above its high watermark: stop reading until it drains.
    void pause_for_backend() noexcept { blocked_on_backend_ = true; }
    /// That back end drained (or closed).
    void on_backend_drained() override { blocked_on_backend_ = false; resume_reads(); }

    /// The session, once createSession has answered; nullptr before (and while it runs).
    session::session* current_session() noexcept { return creating_session ? nullptr : session_.get(); }
    /// The session state even while a SessionManager is still creating it: its SessionControl
    /// may edit the filters from inside SessionManager::create, as Glacier2 allows.
    session::session* session_state() noexcept { return session_.get(); }
    /// Names the session this connection holds now: changes when a session is set or destroyed,
    /// so a handle taken for one session never matches a later one (session_router's cache).
    std::uint64_t session_serial() const noexcept { return session_serial_; }
    /// Installs the session the router servant created; registers its category with the shard.
    void set_session(std::unique_ptr<session::session> s);
    /// Ends the session (destroySession, or the connection closing): unregisters it, destroys an
    /// external SessionManager's session, frees the routing table. The connection stays open.
    void destroy_session();
    /// True while an asynchronous createSession runs (a second one is refused).
    bool creating_session = false;

    /// Work a drain waits for: callbacks awaiting the client's reply, and buffered queues not yet sent.
    std::size_t in_flight() const noexcept;
    /// Sends what the buffered queues hold now, hold time or not (the end of a drain).
    void flush_queues() {
        flush_requests();
        flush_callbacks();
    }

    /// Glacier2::SSLInfo of this connection; nullopt unless it is TLS.
    std::optional<net::tls_peer> peer_ssl_info();
    /// The client's IP address as text ("(unknown)" once the socket is gone), for limits and logs.
    std::string peer_address() const;
    /** Glacier2.AddConnectionContext=1: the `_con.*` entries forwarded requests carry, describing
        this connection as glacier2router does (`_con.type` tcp/ssl/ws/wss, `_con.localAddress`,
        `_con.localPort`, `_con.remoteAddress`, `_con.remotePort`, and on ssl `_con.cipher` and
        `_con.peerCert`). Built once; also added to the verifier / session manager calls of
        createSession* when AddConnectionContext is 1 or 2. */
    const protocol::context& connection_context();
    /// The subject of the client's certificate (RFC 2253), empty without one or without TLS.
    std::string peer_subject();

    /// The router's state on this connection's shard.
    session_shard& local() noexcept { return local_; }

    // Takeover (session_move.cpp, docs/takeover.md "Moving sessions").
    /// Nothing that lasts keeps this session here: set up, not TLS, not refused before, not held
    /// by the topic service (the other conditions of move_state pass within moments).
    bool may_move() const noexcept;
    /** The session's state for a new process, if this connection may move now: a session set
        up, tcp or ws at a message boundary (ice_connection::at_message_boundary), buffered
        queues empty, no callback or topic event awaiting the client's reply, no locator lookup under
        way, no servant subscribed to (or ever delivered to by) the embedded topic service, not
        kept here by an earlier refusal. */
    std::optional<net::takeover_session> move_state();
    /// This session could move but for what its buffered queues hold.
    bool held_by_queues() const noexcept;
    /** A takeover cuts buffered mode's hold short, as a drain does: if held_by_queues(), sends
        what the queues hold now (flush_queues), so that the session moves empty (the queues are
        not carried: docs/takeover.md "Buffered mode"). May close the connection (a client
        over its queue limit). */
    void flush_for_move();
    /** Hands the connection over: @return its descriptor; the connection closes here without
        ending the session (no SessionManager destroy, no trace, not counted as destroyed) and
        its category is remembered as moved. Invalid descriptor: nothing happened. */
    net::unique_fd hand_over();
    /** Installs session `s` (moved_session) on this fresh connection with the rest of `m`
        (connection context, pending bytes, idle time), registers it and starts the loops with no
        validate connection (the client validated it with the old process). `count_session`
        false: a session coming back after a refusal, still counted in sessions_open(). */
    void adopt(std::unique_ptr<session::session> s, const net::takeover_session& m, bool count_session);
    /// Never offered to a takeover again (the new process refused it).
    void keep_here() noexcept { stays_ = true; }
    /// The topic service holds a subscription of this session's servants or delivered to it:
    /// the session moves only with the topic service (session_router::topics_leave).
    void note_topic_state() noexcept { topic_state_ = true; }
    /// Whether note_topic_state() was called.
    bool topic_state() const noexcept { return topic_state_; }

    std::shared_ptr<client_connection> shared() {
        return std::static_pointer_cast<client_connection>(shared_from_this());
    }

private:
    /// Buffered mode's queues hold a request or a callback.
    bool queues_hold() const noexcept {
        return buffered_ && (!buffered_->requests.empty() || !buffered_->callbacks.empty());
    }
    std::optional<protocol::context> connection_context_;  // connection_context(), once built
    bool on_frame(const protocol::frame_view& frame) override;
    void on_closed(std::string_view why) override;
    bool reads_paused() const noexcept override;
    bool dispatch_request(const protocol::request_view& r, std::uint8_t compression);
    // Forwarding (client_forwarding.cpp): at once, or through the session's buffered queues.
    void forward(const protocol::request_view& r, std::uint8_t compression);
    /// The request as it leaves for the back end: request id 0, context as configured.
    protocol::byte_buffer forwarded_message(const protocol::request_view& r);
    /// Sends `q` (its back end chosen), or queues it in buffered mode.
    void send_or_queue(queued_request q);
    void send_request(queued_request q);
    // Indirect proxies (client_indirect.cpp): resolved through the shard's locator first.
    void forward_indirect(const protocol::request_view& r, const protocol::proxy& target, const forward_options& how,
                          std::uint8_t compression);
    /// Asks the locator for q.indirect's endpoints, then forward_resolved, or unresolved on failure.
    void resolve_and_forward(queued_request q);
    /// `q` cannot leave: a twoway gets UnknownLocalException with `failure`, a oneway is dropped (logged).
    void unresolved(const queued_request& q, std::string_view failure);
    /// `q` (q.indirect set) once its proxy resolved to `endpoints`: picks the back-end connection.
    void forward_resolved(queued_request q, const std::vector<protocol::endpoint>& endpoints);
    /// Sends twoway `q` on a back-end connection not yet validated, keeping a copy: if the
    /// connection fails, the locator is asked again and the request sent once more.
    void send_retriable(queued_request q);
    /// For a request without a reply to wait for (a oneway) on a back-end connection not yet
    /// validated: keeps a copy, sent once more after a new resolution if that connection fails.
    void resend_if_connect_fails(const queued_request& q);
    void flush_requests();
    // Datagrams (client_datagrams.cpp): `_fwd=d` / `_fwd=D` requests to a back end's udp endpoint.
    /** Forwards `r` to the first udp endpoint of `target` as one datagram (request id 0): at
        once, or through the buffered queue (batched for `_fwd=D`), and answers a twoway `r` as
        glacier2router does: unbuffered, OK once sent or UnknownLocalException with the failure
        (NoEndpointException without a udp endpoint, an indirect proxy included;
        DatagramLimitException above 65,507 bytes); buffered, OK at once. A request that cannot
        leave is lost: counted, logged once (datagram_lost). */
    void forward_datagram(const protocol::request_view& r, const protocol::proxy& target, const forward_options& how);
    /** Hands one whole message (a request or a batch) to the shard's udp senders, bzip2-compressed
        first when `compress` (`_fwd=z`, from 100 bytes). @return empty, or Ice's exception text
        when `target` has no udp endpoint or the message is larger than a datagram. */
    std::string send_datagram(const protocol::proxy& target, protocol::byte_buffer message, bool compress);
    /// A datagram request that cannot leave (`why`: Ice's exception text): counted in
    /// moraine_datagram_requests_lost_total, logged once per connection.
    void datagram_lost(const protocol::proxy& target, std::string_view why);
    void send_callback(queued_callback q);
    void flush_callbacks();
    void fail_queued_callbacks() noexcept;
    /// Posts `flush` to the end of this loop turn unless one is posted or the hold runs.
    void schedule_flush(flush_timing& timing, void (client_connection::*flush)());
    /// After a flush that sent something: hold the queue for timing.hold, then flush what came.
    void start_hold(flush_timing& timing, void (client_connection::*flush)());
    void on_written() override;
    void on_callback_reply(const protocol::reply_view& r);
    /// Answers a callback's back end with ConnectionLostException (the client is gone).
    void fail_callback(const net::callback_route& route) noexcept;
    void fail_callbacks() noexcept;
    /// Tells every twoway topic event still awaiting its reply that the connection is gone.
    void fail_event_replies() noexcept;

    std::unique_ptr<session::session> session_;
    std::uint64_t session_serial_ = 0;
    bool moving_ = false;     // hand_over() runs: on_closed keeps the session alive elsewhere
    bool stays_ = false;      // keep_here(): a takeover refused it
    bool topic_state_ = false;  // note_topic_state()
    session_shard& local_;
    outstanding_calls calls_;  // callbacks and twoway topic events awaiting the client's reply
    bool blocked_on_backend_ = false;
    bool warned_fwd_ = false;       // an unknown `_fwd` letter was logged once
    bool warned_datagram_ = false;  // a lost datagram request was logged once
    std::string traced_address_;  // the client's address, kept for Glacier2.Trace.Session only
    std::size_t resolving_ = 0;  // requests waiting for the locator
    /// The connection each indirect target (by identity) was last sent on: used again while it
    /// is open, without asking the locator or its cache, as an Ice proxy keeps its connection
    /// (so Ice.Default.LocatorCacheTimeout matters when a connection is made, as in glacier2router).
    struct pinned_connection {
        std::shared_ptr<const protocol::proxy> target;  // the indirect proxy, shared by its queued requests
        std::weak_ptr<net::backend_connection> connection;
    };
    using pinned_table =
        std::unordered_map<protocol::identity, pinned_connection, protocol::identity_hash, protocol::identity_equal>;
    /// Made by the first indirect request (a session without any holds none of its bytes), then kept.
    pinned_table& pinned();
    std::unique_ptr<pinned_table> pinned_;
    /// Glacier2 buffered mode's queues and their flush timing (Glacier2.Client/Server.Buffered).
    struct buffered_queues {
        buffered_queues(int request_hold_ms, int callback_hold_ms)
            : request_timing(request_hold_ms), callback_timing(callback_hold_ms) {}
        request_queue<queued_request> requests;    // client -> back ends
        request_queue<queued_callback> callbacks;  // back ends -> client
        flush_timing request_timing;
        flush_timing callback_timing;
    };
    /// The queues, made by the first buffered request or callback: an unbuffered session (the
    /// default) holds none of their ~260 bytes. Never freed before the connection.
    buffered_queues& buffered();
    std::unique_ptr<buffered_queues> buffered_;
    int request_hold_ms_;   // Glacier2.Client.SleepTime when the connection was accepted
    int callback_hold_ms_;  // Glacier2.Server.SleepTime likewise
};

}  // namespace moraine::router
