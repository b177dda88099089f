#pragma once
// The Glacier2 router as a service on the runtime's shards.
#include <moraine/net/session_directory.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/router/config.hpp>
#include <moraine/router/session_shard.hpp>
#include <moraine/session/admission.hpp>
#include <moraine/session/crypt_password_file.hpp>

#include <atomic>
#include <memory>
#include <string_view>
#include <vector>

namespace moraine::router {

/** Glacier2::Router on every shard: listens on the client and server endpoints, keeps each
    shard's sessions (session_shard), and offers them to services beside it as a
    net::session_directory. */
class session_router final : public net::session_directory {
public:
    /// @throws std::runtime_error if the crypt password file cannot be read.
    session_router(net::shard_set& shards, std::shared_ptr<const config> cfg);
    ~session_router() override;

    /// Binds the client and server endpoints on every shard (a udp server endpoint takes
    /// datagram callbacks: route_datagram_callback) and starts each shard's idle sweep.
    /// Call before shards.start(). @throws boost::system::system_error if an endpoint cannot be bound.
    void start();

    net::shard_set& shards() noexcept { return shards_; }
    /// The configuration the router started with (each shard's may since have been reloaded).
    const config& cfg() const noexcept { return *cfg_; }
    const std::shared_ptr<const config>& shared_cfg() const noexcept { return cfg_; }
    /// Shard `i`'s sessions: use only on that shard's thread.
    session_shard& local(unsigned i) noexcept { return *locals_[i]; }
    /// The crypt password file read at start, if auth_mode::crypt_file.
    const std::shared_ptr<const session::crypt_password_file>& passwords() const noexcept { return passwords_; }

    /** SIGHUP: takes the password file (re-read from `fresh.crypt_passwords`) and the filters of
        `fresh`; sessions created from now on use them, existing sessions keep theirs (as each
        Glacier2 session keeps the filters it began with). Other keys need a restart.
        Call from the main thread. @throws std::runtime_error if the password file cannot be
        read; the configuration in force then stays. */
    void reload(const config& fresh);

    /// Session set-up limits shared by every shard (thread-safe).
    session::admission& admission() noexcept { return admission_; }
    /// Sessions open router-wide, for the session limit (atomic: every shard counts its own).
    std::size_t sessions_open() const noexcept { return sessions_open_.load(std::memory_order_relaxed); }
    void session_opened() noexcept { sessions_open_.fetch_add(1, std::memory_order_relaxed); }
    void session_closed() noexcept { sessions_open_.fetch_sub(1, std::memory_order_relaxed); }
    /** Reserves room for one session under `max` (sessions open plus set-ups in progress), so
        concurrent createSession calls cannot pass the limit together. @return false when full;
        on true, end_setup() must follow once the set-up has ended (created or not). */
    bool begin_setup(std::size_t max) noexcept;
    void end_setup() noexcept { setups_.fetch_sub(1, std::memory_order_acq_rel); }
    /// The server endpoints as bound (real ports), or as published when configured.
    const std::vector<protocol::endpoint>& server_endpoints() const noexcept { return server_endpoints_; }
    /// The client endpoints as bound (ports resolved, wildcard hosts expanded), for getClientProxy.
    const std::vector<protocol::endpoint>& client_endpoints() const noexcept { return client_endpoints_; }

    /** Takeover, old side, from a thread that is no shard's: up to `max` sessions that may move
        now (session_shard::take_movable), taken off their shards; blocks until every shard
        answered. Each stays counted in sessions_open() until moved_away(). */
    std::vector<std::pair<net::takeover_session, net::unique_fd>> take_movable(std::size_t max);
    /** Takeover, old side, from a thread that is no shard's: the new process took session
        `category` (or may serve it: given up), which is no longer counted here; on its shard,
        the callbacks parked for it are relayed to the new process (moved_sessions). */
    void moved_away(const std::string& category);
    /** Takeover, old side: where callbacks for sessions that moved are relayed, this process's
        own server endpoints (relay_endpoints), which the new process accepts on since the
        handover: as configured, then as bound once start() ran. No identity (only the endpoints
        are used). */
    const protocol::proxy& relay_target() const noexcept { return relay_target_; }
    /// Takeover, old side, from a thread that is no shard's: back-end requests relayed so far
    /// (router_metrics::callbacks_relayed over every shard); blocks until every shard answered.
    std::size_t callbacks_relayed();
    /** Takeover, old side: the embedded topic service will follow its subscribed sessions to the
        new process, so a session whose servants subscribed may move like any other, its events
        relayed until the service follows (false: the service stays here after all, and so do
        they). docs/takeover.md "The topic service moves". Any thread. */
    void topics_leave(bool leaving) noexcept { topics_leaving_.store(leaving, std::memory_order_relaxed); }
    bool topics_leaving() const noexcept { return topics_leaving_.load(std::memory_order_relaxed); }
    using subscribed = subscribed_kind;
    /// Takeover, old side, from a thread that is no shard's: sessions here whose servants
    /// subscribed to the embedded topic service, as `which` says.
    std::size_t subscribed_sessions(subscribed which = subscribed::all);
    /** Takeover, old side, from a thread that is no shard's, once the listening sockets went to
        the new process: a loopback tcp endpoint (port chosen by the kernel) on shard 0, served as
        the server endpoints are, so that a request to a servant of a session that stays here
        reaches its client. The topic service, moved to the new process, delivers there to the
        subscribers whose sessions stay (docs/takeover.md "Sessions that stay"). Closed with the
        shards. @throws boost::system::system_error if it cannot be bound. */
    protocol::endpoint open_stay_endpoint();
    /** Takeover, either side, from a thread that is no shard's: installs session `s` on the
        client connection `fd` (a connected TCP socket, under WebSocket framing for a ws session,
        already upgraded), on the shard that owns its category;
        blocks until done. `count_session` false for a session coming back after a refusal
        (still counted, never offered again). @return empty, or why it cannot be honoured (the descriptor is then
        closed here; the sender keeps its own). */
    std::string adopt_session(const net::takeover_session& s, net::unique_fd fd, bool count_session);
    /** adopt_session for many sessions at once: one handler per shard for all of its sessions (not
        one per session), in the order given; the descriptors are consumed. Blocks until done.
        @return one entry per session: empty, or why it cannot be honoured. */
    std::vector<std::string> adopt_sessions(std::vector<std::pair<net::takeover_session, net::unique_fd>>& batch,
                                            bool count_session);

    /// The shard that owns the session with this category (see session_shard::new_category).
    unsigned owner_of(std::string_view category) const noexcept override;
    bool hosts(const protocol::proxy& p) const override;
    bool forwards_context() const noexcept override { return cfg_->server_forward_context; }
    void note_subscription(net::shard& sh, std::string_view category) override;
    bool session_here(net::shard& sh, std::string_view category) const override;
    delivery deliver(net::shard& sh, std::string_view category, session_cache& cache, std::size_t queue_limit,
                     frame_source frame, bool twoway, reply_done done) override;

private:
    /// What a server endpoint (and the stay endpoint) does with a back end's connection: a
    /// server_connection on the accepting shard.
    net::accept_handler serve_back_ends();
    /// deliver() for a session that is not here: one that left for a new process gets the event
    /// there (route_to_moved), any other is no_session.
    delivery deliver_to_moved(net::shard& sh, std::string_view category, frame_source frame, bool twoway,
                              reply_done done);
    /// The client connection holding session `category` on `sh`, from `cache` when still valid.
    client_connection* session_connection(net::shard& sh, std::string_view category, session_cache& cache) noexcept;

    net::shard_set& shards_;
    std::shared_ptr<const config> cfg_;
    std::vector<std::unique_ptr<session_shard>> locals_;
    std::shared_ptr<const session::crypt_password_file> passwords_;
    std::vector<protocol::endpoint> server_endpoints_;
    std::vector<protocol::endpoint> client_endpoints_;
    protocol::proxy relay_target_;
    session::admission admission_;
    std::atomic<std::size_t> sessions_open_{0};
    std::atomic<std::size_t> setups_{0};
    std::atomic<bool> topics_leaving_{false};  // topics_leave
};

}  // namespace moraine::router
