#pragma once
// The Glacier2 router's state on one shard: its client connections and their sessions.
#include <moraine/net/asio.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/takeover_message.hpp>
#include <moraine/net/unique_fd.hpp>
#include <moraine/router/config.hpp>
#include <moraine/router/moved_sessions.hpp>
#include <moraine/session/crypt_password_file.hpp>

#include <boost/static_string/static_string.hpp>
#include <boost/unordered/unordered_flat_map.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace moraine::router {

/// Which subscribed sessions a takeover counts (session_router::subscribed_sessions).
enum class subscribed_kind {
    all,       ///< every session here whose servants subscribed to the embedded topic service
    movable,   ///< those that will move (client_connection::may_move)
};

class client_connection;
class session_router;

/// A session's category as the session table keeps it: inline in the table's slot, so a lookup
/// (one per callback from a back end) reads no separate string. Moraine's categories are 20
/// characters (session_shard::new_category).
using category_key = boost::static_string<24>;

/// Hash and equality over categories that also take a string_view, so a lookup allocates nothing.
inline std::string_view category_view(const category_key& k) noexcept { return {k.data(), k.size()}; }
struct category_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    std::size_t operator()(const category_key& k) const noexcept { return (*this)(category_view(k)); }
};
struct category_equal {
    using is_transparent = void;
    bool operator()(const category_key& a, const category_key& b) const noexcept {
        return category_view(a) == category_view(b);
    }
    bool operator()(std::string_view a, const category_key& b) const noexcept { return a == category_view(b); }
};

/// Router counters kept per shard, touched only on the shard's thread (also by /metrics).
struct router_metrics {
    unsigned long sessions_created = 0;
    unsigned long sessions_destroyed = 0;
    unsigned long requests_forwarded = 0;
    unsigned long replies_forwarded = 0;
    unsigned long callbacks_forwarded = 0;
    unsigned long requests_overridden = 0;   ///< buffered client requests replaced by a newer one (`_ovrd`)
    unsigned long callbacks_overridden = 0;  ///< buffered callbacks replaced likewise
    unsigned long datagram_requests_lost = 0;  ///< `_fwd=d`/`D` requests with no udp endpoint or too large
    unsigned long datagram_callbacks = 0;      ///< callbacks received as datagrams on a udp server endpoint
    unsigned long auth_failures = 0;         ///< createSession* refused by authentication (PermissionDenied)
    unsigned long sessions_refused = 0;      ///< createSession* refused otherwise (CannotCreateSession, limits)
    unsigned long callbacks_relayed = 0;     ///< takeover, old side: back-end requests sent on to the new process
    unsigned long callbacks_parked = 0;      ///< takeover, old side: back-end requests held for a session in transit
};

/// The sessions and client connections one shard owns; touched only on that shard's thread.
class session_shard {
public:
    session_shard(session_router& router, net::shard& io);
    session_shard(const session_shard&) = delete;
    session_shard& operator=(const session_shard&) = delete;

    net::shard& io() noexcept { return io_; }
    session_router& router() noexcept { return router_; }
    /// The router configuration as this shard sees it: a reload (SIGHUP) replaces it between two
    /// handlers, so read it afresh rather than keeping a reference across a co_await.
    const config& cfg() const noexcept { return *cfg_; }
    /// The crypt password file in force (auth_mode::crypt_file), or null; replaced by a reload.
    const std::shared_ptr<const session::crypt_password_file>& passwords() const noexcept { return passwords_; }
    /// Installs a reloaded configuration and password file (session_router::reload).
    void reconfigure(std::shared_ptr<const config> cfg, std::shared_ptr<const session::crypt_password_file> passwords);
    router_metrics& metrics() noexcept { return metrics_; }

    /// A new session category: 20 random printable characters (33..126) whose first character
    /// names this shard, so a callback landing on another shard finds its owner without a shared table.
    /// @throws std::runtime_error if the random generator fails.
    std::string new_category();

    /// Sessions on this shard by category. The connection erases itself when it closes.
    /// @throws std::length_error if `category` is longer than a category_key holds.
    void add_session(const std::string& category, client_connection* c);
    void remove_session(const std::string& category) noexcept;
    client_connection* find_session(std::string_view category) const noexcept;
    std::size_t session_count() const noexcept { return sessions_.size(); }

    /// Takeover: the sessions of this shard that may move now, at most `max`, each handed over
    /// (client_connection::hand_over) with its state; the caller owns the descriptors.
    std::vector<std::pair<net::takeover_session, net::unique_fd>> take_movable(std::size_t max);
    /// Takeover: this shard's sessions whose servants subscribed to the embedded topic service,
    /// as `which` says.
    std::size_t subscribed_sessions(subscribed_kind which) const noexcept;
    /// Takeover, old side: the sessions that left this shard for a new process, and the
    /// callbacks parked for those in transit.
    moved_sessions& moved() noexcept { return moved_; }

    /// True once the router drains (SIGTERM): client requests are no longer dispatched.
    bool draining() const noexcept { return draining_; }

    /// Every open client connection, for the idle sweep (ACM close on idle, docs/glacier2.md §4).
    void add_client(client_connection* c) { clients_.insert(c); }
    void remove_client(client_connection* c) noexcept { clients_.erase(c); }

    /// Starts the idle sweep, registers the metrics collector and closes the clients when the
    /// shard stops. Call before the shard runs.
    void start();

private:
    void collect(net::metric_sink& s) const;
    net::asio::awaitable<void> idle_sweep();
    /// Heartbeats to client connections the router wrote nothing to (config::heartbeat_interval).
    net::asio::awaitable<void> heartbeat_sweep();
    void close_clients(std::string_view why);

    session_router& router_;
    net::shard& io_;
    // Open addressing: a lookup reads the group's metadata and one slot, where a node-based map
    // reads a bucket, the node before and the node (perf/RESULTS.md).
    boost::unordered_flat_map<category_key, client_connection*, category_hash, category_equal> sessions_;
    std::unordered_set<client_connection*> clients_;
    moved_sessions moved_;
    router_metrics metrics_;
    bool draining_ = false;
    std::shared_ptr<const config> cfg_;
    std::shared_ptr<const session::crypt_password_file> passwords_;
};

}  // namespace moraine::router
