#include <moraine/net/takeover_server.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace moraine::net {

namespace {

constexpr std::chrono::seconds hello_timeout{5};
constexpr std::chrono::seconds session_answer_timeout{10};  // the new process adopts one session
constexpr std::chrono::milliseconds movable_poll{10};       // between looks for sessions at a message boundary
constexpr std::size_t sessions_per_round = 256;              // taken off each shard at once
constexpr std::size_t sessions_in_flight = 64;               // sent and not answered yet, at most
constexpr int send_timeout_s = 5;
// How long the topic service stays here for its subscribed sessions to move (their events are
// relayed meanwhile) before it moves anyway, and how long its connections, held, get to reach a
// message boundary.
constexpr std::chrono::seconds subscribed_sessions_wait{5};
constexpr std::chrono::seconds topic_connections_wait{1};

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

sockaddr_un unix_address(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof a.sun_path)
        throw std::runtime_error("takeover socket '" + path + "': a path of 1 to " +
                                 std::to_string(sizeof a.sun_path - 1) + " bytes is needed");
    std::memcpy(a.sun_path, path.data(), path.size());
    return a;
}

/// Whether a process accepts connections on the Unix socket at `a` (a stale file says no).
bool someone_listens(const sockaddr_un& a) {
    unique_fd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    return probe && ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
}

/// Removes a stale socket at `path`; refuses a live one or a file of another kind.
void clear_path(const std::string& path, const sockaddr_un& a) {
    struct stat st{};
    if (::lstat(path.c_str(), &st) != 0) return;  // nothing there
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error("takeover socket '" + path + "': exists and is not a socket");
    if (someone_listens(a))
        throw std::runtime_error("takeover socket '" + path + "': another process listens there (a router running?)");
    ::unlink(path.c_str());
}

/// Tells the peer no, if it still listens; the reason goes to its log.
void send_refusal(int sock, const std::string& reason) noexcept {
    try {
        send_takeover(sock, takeover_refuse{reason});
    } catch (const std::exception&) {
        // The peer is gone or stuck: it learns from the closed channel.
    }
}

/// Refuses a peer running as another user: it could then accept this router's connections.
void check_peer(int sock) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) throw channel_error(errno_text("SO_PEERCRED"));
    if (cred.uid != ::geteuid())
        throw channel_error("peer pid " + std::to_string(cred.pid) + " runs as uid " + std::to_string(cred.uid) +
                            ", not as this router's uid " + std::to_string(::geteuid()));
}

std::string listing(const std::vector<inherited_socket>& sockets) {
    std::string s;
    for (const auto& k : sockets)
        s += "\n  " + describe(k.record.id) + " bound " + k.record.bound + " (shard " + std::to_string(k.record.shard) + ")";
    return s;
}

}  // namespace

takeover_server::takeover_server(std::string path, std::string program, takeover_hooks hooks)
    : path_(std::move(path)), program_(std::move(program)), hooks_(std::move(hooks)) {
    const auto address = unix_address(path_);
    clear_path(path_, address);
    listen_.reset(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!listen_) throw std::runtime_error(errno_text("takeover socket: socket"));
    // Owner only from the first instant: the mode comes from the umask at bind time.
    const mode_t old_mask = ::umask(0177);
    const int bound = ::bind(listen_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
    const int bind_errno = errno;
    ::umask(old_mask);
    if (bound != 0) {
        errno = bind_errno;
        throw std::runtime_error(errno_text("takeover socket '" + path_ + "': bind"));
    }
    struct stat st{};
    if (::chmod(path_.c_str(), 0600) != 0 || ::stat(path_.c_str(), &st) != 0)
        throw std::runtime_error(errno_text("takeover socket '" + path_ + "': chmod"));
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    if (::listen(listen_.get(), 4) != 0) throw std::runtime_error(errno_text("takeover socket '" + path_ + "': listen"));
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("takeover socket: pipe"));
    wake_read_.reset(pipe_fds[0]);
    wake_write_.reset(pipe_fds[1]);
}

takeover_server::~takeover_server() {
    stop();
    struct stat st{};
    // The new process binds the same path: never remove its socket.
    if (!handed_over() && ::stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_)
        ::unlink(path_.c_str());
}

void takeover_server::start() {
    spdlog::info("takeover socket {} (mode 0600): a new moraine-router started with --takeover {} takes over "
                 "the listening sockets",
                 path_, path_);
    thread_ = std::thread([this] { run(); });
}

void takeover_server::stop() {
    if (thread_.joinable()) {
        const char byte = 1;
        [[maybe_unused]] auto n = ::write(wake_write_.get(), &byte, 1);
        thread_.join();
    }
    // A new router asking from now on is refused a connection (nobody serves here any more)
    // rather than left waiting for an answer that never comes.
    listen_.reset();
}

void takeover_server::run() {
    while (!handed_over()) {
        pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            spdlog::error("takeover socket {}: {}", path_, std::strerror(errno));
            return;
        }
        if (fds[1].revents) return;
        unique_fd conn(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!conn) continue;  // the peer went away before we took it
        try {
            serve(conn.get());
        } catch (const std::exception& e) {
            spdlog::error("takeover refused, this router goes on serving: {}", e.what());
            send_refusal(conn.get(), e.what());
        }
    }
}

void takeover_server::serve(int conn) {
    check_peer(conn);
    const timeval send_limit{send_timeout_s, 0};
    ::setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
    // No descriptor is expected from the new process: any it attaches is closed on arrival.
    const auto first = decode_takeover(receive_packet(conn, takeover_message_max, 0, hello_timeout, wake_read_.get()).bytes);
    const auto* hello = std::get_if<takeover_hello>(&first);
    if (!hello) throw channel_error(std::string("expected a hello message, got ") + takeover_name(first));
    spdlog::info("takeover: {} (pid {}) asks for the listening sockets", hello->program, hello->pid);

    auto sockets = hooks_.share();
    takeover_listeners offer{program_, static_cast<std::uint32_t>(::getpid()), {}};
    std::vector<int> fds;
    for (const auto& s : sockets) {
        offer.sockets.push_back(s.record);
        fds.push_back(s.fd.get());
    }
    send_takeover(conn, offer);
    for (std::size_t at = 0; at < fds.size(); at += max_fds_per_packet) {
        const auto n = std::min(max_fds_per_packet, fds.size() - at);
        send_takeover(conn, takeover_descriptors{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(n)},
                     std::span<const int>(fds).subspan(at, n));
    }
    const auto described = listing(sockets);
    fds.clear();
    sockets.clear();  // our duplicates: the new process holds its own now

    const auto answer = decode_takeover(receive_packet(conn, takeover_message_max, 0, confirm_timeout, wake_read_.get()).bytes);
    if (const auto* no = std::get_if<takeover_refuse>(&answer))
        throw channel_error("pid " + std::to_string(hello->pid) + " refused the listening sockets: " + no->reason);
    if (!std::holds_alternative<takeover_accept>(answer))
        throw channel_error(std::string("expected accept or refuse, got ") + takeover_name(answer));

    const auto closed = hooks_.release();
    const auto sessions = hooks_.sessions();
    moving_.store(true, std::memory_order_release);  // before handed_over: the drain then waits for it
    struct moves_end {  // however serve() ends from here
        std::atomic<bool>& moving;
        ~moves_end() { moving.store(false, std::memory_order_release); }
    } end{moving_};
    handed_over_.store(true, std::memory_order_release);
    listen_.reset();  // before the confirmation: the new process then finds the path free to bind
    try {
        send_takeover(conn, takeover_released{static_cast<std::uint32_t>(closed), sessions});
    } catch (const std::exception& e) {
        spdlog::warn("takeover: could not confirm the release to pid {}: {}", hello->pid, e.what());
    }
    spdlog::info("takeover: handed {} listening socket(s) over to {} (pid {}); this router accepts no more "
                 "connections and drains its {} session(s):{}",
                 closed, hello->program, hello->pid, sessions, described);
    hooks_.handed_over();
    move_sessions(conn, hello->pid);
}

void takeover_server::move_sessions(int conn, std::uint32_t pid) {
    using clock = std::chrono::steady_clock;
    offers o;
    const auto start = clock::now();
    o.last_move = start;
    auto topics = plan_topics(conn, pid, o.channel_ok);
    while (hooks_.take_movable && o.channel_ok && clock::now() - start < hooks_.move_for) {
        auto batch = hooks_.take_movable(sessions_per_round);
        if (batch.empty()) {
            // The sessions in flight still count as open: their answers come first.
            await_all(conn, o);
            // The topic service follows its subscribed sessions (or a bounded wait for them).
            if (topics.pending && o.channel_ok &&
                (hooks_.subscribed_sessions() == 0 || clock::now() - topics.since >= subscribed_sessions_wait))
                move_topics(conn, pid, topics, o.channel_ok);
            if (!o.channel_ok || hooks_.sessions() == 0) break;
            pollfd wake{wake_read_.get(), POLLIN, 0};
            if (::poll(&wake, 1, static_cast<int>(movable_poll.count())) > 0) break;  // stop()
            continue;
        }
        for (auto& [state, fd] : batch) {
            if (o.channel_ok && o.in_flight.size() >= sessions_in_flight) o.channel_ok = await_answer(conn, o);
            if (!o.channel_ok) {  // never sent: it goes on here
                hooks_.keep(std::move(state), std::move(fd));
                continue;
            }
            o.channel_ok = offer(conn, std::move(state), std::move(fd), o);
        }
    }
    await_all(conn, o);
    if (topics.pending && o.channel_ok) move_topics(conn, pid, topics, o.channel_ok);
    if (topics.pending) {
        spdlog::error("takeover: the channel failed before the topic service could move; it serves on here");
        hooks_.topics_gone(false);
        topics.pending = false;
    }
    const auto stayed = hooks_.sessions();
    if (o.channel_ok) {
        try {
            send_takeover(conn, takeover_sessions_done{o.moved, stayed});
        } catch (const std::exception& e) {
            spdlog::warn("takeover: could not tell pid {} that the sessions are done: {}", pid, e.what());
        }
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(o.last_move - start).count();
    spdlog::info("takeover: moved {} session(s) ({} bytes of session state) to pid {} in {} ms; {} session(s) stay here",
                 o.moved, o.bytes, pid, o.moved ? ms : 0, stayed);
}

takeover_server::topic_move takeover_server::plan_topics(int conn, std::uint32_t pid, bool& channel_ok) {
    topic_move t;
    t.pending = hooks_.topics_movable && hooks_.topics_movable();
    t.since = std::chrono::steady_clock::now();
    if (t.pending) return t;
    try {
        // No topic service, or it stays: the new process's own topic service runs on its own.
        send_takeover(conn, takeover_topics_done{false, 0});
    } catch (const std::exception& e) {
        spdlog::warn("takeover: could not tell pid {} that the topic service stays: {}", pid, e.what());
        channel_ok = false;
    }
    return t;
}

void takeover_server::move_topics(int conn, std::uint32_t pid, topic_move& t, bool& channel_ok) {
    t.pending = false;
    const auto held_at = std::chrono::steady_clock::now();
    const auto parts = hooks_.hold_topics();
    std::size_t bytes = 0;
    try {
        for (std::size_t i = 0; i < parts.size(); ++i) {
            send_takeover(conn, takeover_topics{parts[i], i + 1 == parts.size()});
            bytes += parts[i].size();
        }
    } catch (const std::exception& e) {
        spdlog::error("takeover: cannot send the topic catalog to pid {}: {}; the topic service serves on here", pid,
                      e.what());
        channel_ok = false;
        hooks_.topics_gone(false);
        return;
    }
    hooks_.topics_gone(true);
    move_topic_connections(conn, pid, held_at, bytes, channel_ok);
}

void takeover_server::move_topic_connections(int conn, std::uint32_t pid, std::chrono::steady_clock::time_point held_at,
                                             std::size_t catalog_bytes, bool& channel_ok) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + topic_connections_wait;
    std::uint32_t sent = 0;
    for (;;) {
        const bool last = clock::now() >= until;
        std::size_t left = 0;
        auto batch = hooks_.take_topic_connections(last, left);
        for (auto& [m, fd] : batch) {
            if (!channel_ok) continue;  // dropped: its peer sees the connection close and reconnects
            try {
                const int attached = fd.get();
                send_packet(conn, encode_takeover(m), std::span<const int>(&attached, 1));
                ++sent;
            } catch (const std::exception& e) {
                spdlog::error("takeover: cannot send a topic connection to pid {}: {}; its peer reconnects", pid, e.what());
                channel_ok = false;
            }
        }
        if (last || left == 0) break;
        pollfd wake{wake_read_.get(), POLLIN, 0};
        if (::poll(&wake, 1, static_cast<int>(movable_poll.count())) > 0) {
            hooks_.take_topic_connections(true, left);  // stop(): the rest close gracefully
            break;
        }
    }
    if (channel_ok) {
        try {
            send_takeover(conn, takeover_topics_done{true, sent});
        } catch (const std::exception& e) {
            spdlog::warn("takeover: could not tell pid {} that the topic service moved: {}", pid, e.what());
        }
    }
    const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - held_at).count();
    spdlog::info("takeover: moved the topic service to pid {}: its catalog ({} bytes) and {} connection(s); "
                 "its publishers were held {} ms",
                 pid, catalog_bytes, sent, held);
}

bool takeover_server::offer(int conn, takeover_session state, unique_fd fd, offers& o) {
    state.serial = serial_ + 1;
    std::vector<std::byte> message;
    try {
        message = encode_takeover(state);
    } catch (const std::exception& e) {
        // Too large for a message: this one stays (it never left), the channel is fine.
        spdlog::error("takeover: cannot send session {}: {}; it stays here", state.category, e.what());
        hooks_.keep(std::move(state), std::move(fd));
        return true;
    }
    ++serial_;
    const auto size = message.size();
    try {
        const int attached = fd.get();
        send_packet(conn, message, std::span<const int>(&attached, 1));
    } catch (const std::exception& e) {
        spdlog::error("takeover: cannot send session {}: {}; it stays here and no more sessions move", state.category, e.what());
        hooks_.keep(std::move(state), std::move(fd));
        give_up(o, e.what());
        return false;
    }
    o.in_flight.push_back({std::move(state), std::move(fd), size});
    return true;
}

void takeover_server::await_all(int conn, offers& o) {
    while (o.channel_ok && !o.in_flight.empty()) o.channel_ok = await_answer(conn, o);
}

bool takeover_server::await_answer(int conn, offers& o) {
    try {
        const auto answer = decode_takeover(
            receive_packet(conn, takeover_message_max, 0, session_answer_timeout, wake_read_.get()).bytes);
        std::uint32_t serial = 0;
        const auto* no = std::get_if<takeover_session_refused>(&answer);
        const auto* taken = std::get_if<takeover_session_taken>(&answer);
        if (no) serial = no->serial;
        else if (taken) serial = taken->serial;
        else throw channel_error(std::string("expected session_taken or session_refused, got ") + takeover_name(answer));
        // The new process answers in order, so this is the oldest one; any session in flight is accepted.
        auto it = std::find_if(o.in_flight.begin(), o.in_flight.end(),
                               [serial](const offered& f) { return f.state.serial == serial; });
        if (it == o.in_flight.end())
            throw channel_error("an answer for session " + std::to_string(serial) + ", which is not in flight");
        auto f = std::move(*it);
        o.in_flight.erase(it);
        if (no) {
            spdlog::warn("takeover: the new process refused session of '{}': {}; it stays here", f.state.user_id, no->reason);
            hooks_.keep(std::move(f.state), std::move(f.fd));
            return true;
        }
        spdlog::debug("takeover: session of '{}' ({}) moved", f.state.user_id, f.state.category);
        hooks_.moved(f.state);
        ++o.moved;
        o.bytes += f.bytes;
        o.last_move = std::chrono::steady_clock::now();
        return true;
    } catch (const std::exception& e) {
        give_up(o, e.what());
        return false;
    }
}

void takeover_server::give_up(offers& o, const std::string& why) {
    // Sent but not confirmed: the new process may serve them already, so they must not be served
    // here too. They are given up here; a client the new process did not take reconnects.
    if (!o.in_flight.empty())
        spdlog::error("takeover: {} session(s) sent but not confirmed ({}); given up here, no more sessions move",
                      o.in_flight.size(), why);
    for (auto& f : o.in_flight) {
        spdlog::debug("takeover: session of '{}' ({}) given up", f.state.user_id, f.state.category);
        hooks_.moved(f.state);
    }
    o.in_flight.clear();
}

}  // namespace moraine::net
