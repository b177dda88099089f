#pragma once
// The running router's side of a takeover (docs/takeover.md): a Unix socket where a new
// moraine-router asks for the listening sockets; after it has adopted them, this process stops
// accepting and drains. Off unless configured (takeover_config::socket).
#include <moraine/net/inherited_listeners.hpp>
#include <moraine/net/unique_fd.hpp>

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace moraine::net {

/// What the server needs of the process it serves; called on the server's own thread.
struct takeover_hooks {
    std::function<std::vector<inherited_socket>()> share;  ///< duplicates of every listening socket (shard_set::share_listeners)
    std::function<std::size_t()> release;                   ///< stop accepting: close our copies (shard_set::release_listeners)
    std::function<std::uint32_t()> sessions;                ///< sessions open now, reported to the new process
    std::function<void()> handed_over;                      ///< once, after release: start draining

    // Phase 2a, moving sessions (docs/takeover.md "Moving sessions"); without take_movable none move.
    /// Up to `max` sessions that may move now, each taken off its shard with its connection's
    /// descriptor (session_router::take_movable); empty when none may move yet.
    std::function<std::vector<std::pair<takeover_session, unique_fd>>(std::size_t max)> take_movable;
    /// The new process took this session: it is no longer this process's.
    std::function<void(const takeover_session&)> moved;
    /// The new process refused it: serve it here again (session_router::adopt_session), never offered again.
    std::function<void(takeover_session, unique_fd)> keep;
    /// How long after the handover sessions are offered (the drain deadline, ms).
    std::chrono::milliseconds move_for{0};

    // Version 3, the embedded topic service (docs/takeover.md "The topic service moves"); without
    // topics_movable it stays here, and so do the sessions whose servants subscribed to it.
    /// Whether the topic service will move; if so, its subscribed sessions may move from now on
    /// (their events are relayed to the new process until the topic service follows them).
    std::function<bool()> topics_movable;
    /// Holds the topic service's intake and waits (bounded) for its deliveries to end.
    /// @return its catalog image in parts, each at most takeover_topics_part_max bytes.
    std::function<std::vector<std::vector<std::byte>>()> hold_topics;
    /// The catalog reached the new process (true), or the topic service stays here after all
    /// (false: its intake runs again, and its subscribed sessions no longer move).
    std::function<void(bool gone)> topics_gone;
    /// Sessions here whose servants subscribed to the topic service and that will move: the
    /// topic service follows once none is left (or 5 s after the handover).
    std::function<std::size_t()> subscribed_sessions;
    /// The topic service's connections that may move now, with their descriptors (with `last`,
    /// the others close gracefully; else `left` counts them): topic_service::take_connections.
    std::function<std::vector<std::pair<takeover_topic_connection, unique_fd>>(bool last, std::size_t& left)>
        take_topic_connections;
};

/** Serves takeover requests on a Unix SOCK_SEQPACKET socket, one at a time, on a thread of its
    own (a takeover blocks on the shards' answers, which must not wait on a shard). A request
    from another user (SO_PEERCRED), a malformed or other-version message, a peer that refuses or
    vanishes: each is logged and answered with a refusal where possible, and this process goes
    on serving as before; no descriptor is left open. After one takeover succeeds the server
    stops listening (the path then belongs to the new process). */
class takeover_server {
public:
    /** Creates the socket at `path` with mode 0600. A stale socket there (nobody listening) is
        replaced. @throws std::runtime_error if the path is too long, is not a socket, another
        process listens on it, or the socket cannot be made. */
    takeover_server(std::string path, std::string program, takeover_hooks hooks);
    /// Stops the thread; removes the path unless a takeover succeeded or another process has replaced it.
    ~takeover_server();
    takeover_server(const takeover_server&) = delete;
    takeover_server& operator=(const takeover_server&) = delete;

    /// Starts serving; call once the shards run.
    void start();
    /// Stops serving and listening: a takeover under way is abandoned (refused), a later one finds
    /// nobody there (takeover_unreachable). Idempotent; call before the shards stop.
    void stop();
    /// Whether a takeover succeeded: the listening sockets belong to another process.
    bool handed_over() const noexcept { return handed_over_.load(std::memory_order_acquire); }
    /// Whether the handover's moves are under way: sessions, then the topic service with its
    /// connections. True from before handed_over() is; the drain after a handover waits for it,
    /// or its closing would take the topic connections before they move.
    bool moving() const noexcept { return moving_.load(std::memory_order_acquire); }

    /// How long the new process has to adopt the sockets and confirm (its start-up).
    static constexpr std::chrono::seconds confirm_timeout{60};

private:
    void run();
    void serve(int conn);
    /// A session sent to the new process and not answered yet, with our copy of its descriptor.
    struct offered {
        takeover_session state;
        unique_fd fd;
        std::size_t bytes = 0;  ///< its message's size
    };
    /// What move_sessions has done so far.
    struct offers {
        std::deque<offered> in_flight;  ///< in the order sent
        std::uint32_t moved = 0;
        std::uint64_t bytes = 0;
        std::chrono::steady_clock::time_point last_move;
        bool channel_ok = true;
    };
    /// After the handover: offers every session that becomes movable, up to sessions_in_flight
    /// messages ahead of the answers, until none is left, move_for has passed or stop(); then
    /// waits for the answers, then sessions_done. Logs what moved.
    void move_sessions(int conn, std::uint32_t pid);
    /// Sends one session without waiting for its answer; false if the channel failed (the session
    /// then stays here, since it never left; those in flight are given up). A session the encoder
    /// refuses (too large) stays here, and the others go on moving.
    bool offer(int conn, takeover_session state, unique_fd fd, offers& o);
    /// Waits for one answer and acts on it; false if the channel failed or the answer did not come
    /// (every session in flight is then given up).
    bool await_answer(int conn, offers& o);
    /// Waits for the answers of every session in flight, while the channel holds (o.channel_ok).
    void await_all(int conn, offers& o);
    /// Gives up every session in flight: the new process may serve it already.
    void give_up(offers& o, const std::string& why);
    /// The topic service's move as move_sessions drives it.
    struct topic_move {
        bool pending = false;  ///< it will move and has not yet
        std::chrono::steady_clock::time_point since;
    };
    /// Whether the topic service will move; if not, tells the new process (topics_done, not moved).
    topic_move plan_topics(int conn, std::uint32_t pid, bool& channel_ok);
    /// Holds the topic service, sends its catalog, then its connections.
    void move_topics(int conn, std::uint32_t pid, topic_move& t, bool& channel_ok);
    /// Sends the topic service's connections as they become movable (at most
    /// topic_connections_wait), then topics_done.
    void move_topic_connections(int conn, std::uint32_t pid, std::chrono::steady_clock::time_point held_at,
                                std::size_t catalog_bytes, bool& channel_ok);

    std::string path_, program_;
    takeover_hooks hooks_;
    unique_fd listen_;
    unique_fd wake_read_, wake_write_;  // a pipe: stop() writes, the thread's polls see it
    dev_t dev_ = 0;                     // the path's inode as we made it: removed at exit only if unchanged
    ino_t ino_ = 0;
    std::atomic<bool> handed_over_{false};
    std::atomic<bool> moving_{false};  // moving()
    std::uint32_t serial_ = 0;  // the last session offered
    std::thread thread_;
};

}  // namespace moraine::net
