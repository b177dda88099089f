#include <moraine/net/takeover_server.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace moraine::net {

namespace {

constexpr std::chrono::seconds hello_timeout{5};
constexpr std::chrono::seconds session_answer_timeout{10};  // the new process adopts one session
constexpr std::chrono::milliseconds movable_poll{10};       // between looks for sessions at a message boundary
constexpr std::size_t sessions_per_round = 256;              // taken off the shards at once
constexpr int send_timeout_s = 5;

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

void send_message(int sock, const takeover_message& m, std::span<const int> fds = {}) {
    const auto bytes = encode_takeover(m);
    send_packet(sock, bytes, fds);
}

/// Tells the peer no, if it still listens; the reason goes to its log.
void send_refusal(int sock, const std::string& reason) noexcept {
    try {
        send_message(sock, takeover_refuse{reason});
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
    send_message(conn, offer);
    for (std::size_t at = 0; at < fds.size(); at += max_fds_per_packet) {
        const auto n = std::min(max_fds_per_packet, fds.size() - at);
        send_message(conn, takeover_descriptors{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(n)},
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
    handed_over_.store(true, std::memory_order_release);
    listen_.reset();  // before the confirmation: the new process then finds the path free to bind
    try {
        send_message(conn, takeover_released{static_cast<std::uint32_t>(closed), sessions});
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
    std::uint32_t moved = 0;
    std::uint64_t bytes = 0;
    bool channel_ok = true;
    const auto start = clock::now();
    auto last_move = start;
    while (hooks_.take_movable && channel_ok && clock::now() - start < hooks_.move_for) {
        auto batch = hooks_.take_movable(sessions_per_round);
        if (batch.empty()) {
            if (hooks_.sessions() == 0) break;
            pollfd wake{wake_read_.get(), POLLIN, 0};
            if (::poll(&wake, 1, static_cast<int>(movable_poll.count())) > 0) break;  // stop()
            continue;
        }
        for (auto& [state, fd] : batch) {
            if (!channel_ok) {  // never sent: it goes on here
                hooks_.keep(std::move(state), std::move(fd));
                continue;
            }
            channel_ok = offer(conn, state, std::move(fd), moved, bytes);
        }
        last_move = clock::now();
    }
    const auto stayed = hooks_.sessions();
    if (channel_ok) {
        try {
            send_message(conn, takeover_sessions_done{moved, stayed});
        } catch (const std::exception& e) {
            spdlog::warn("takeover: could not tell pid {} that the sessions are done: {}", pid, e.what());
        }
    }
    const auto ms = [&](clock::time_point t) { return std::chrono::duration_cast<std::chrono::milliseconds>(t - start).count(); };
    spdlog::info("takeover: moved {} session(s) ({} bytes of session state) to pid {} in {} ms; {} session(s) stay here",
                 moved, bytes, pid, moved ? ms(last_move) : 0, stayed);
}

bool takeover_server::offer(int conn, takeover_session& state, unique_fd fd, std::uint32_t& moved, std::uint64_t& bytes) {
    state.serial = ++serial_;
    std::vector<std::byte> message;
    try {
        message = encode_takeover(state);
        const int attached = fd.get();
        send_packet(conn, message, std::span<const int>(&attached, 1));
    } catch (const std::exception& e) {
        spdlog::error("takeover: cannot send session {}: {}; it stays here and no more sessions move", state.category, e.what());
        hooks_.keep(std::move(state), std::move(fd));
        return false;
    }
    try {
        const auto answer = decode_takeover(
            receive_packet(conn, takeover_message_max, 0, session_answer_timeout, wake_read_.get()).bytes);
        if (const auto* no = std::get_if<takeover_session_refused>(&answer)) {
            spdlog::warn("takeover: the new process refused session of '{}': {}; it stays here", state.user_id, no->reason);
            hooks_.keep(std::move(state), std::move(fd));
            return true;
        }
        const auto* taken = std::get_if<takeover_session_taken>(&answer);
        if (!taken || taken->serial != state.serial)
            throw channel_error(std::string("expected session_taken ") + std::to_string(state.serial) + ", got " +
                                takeover_name(answer));
    } catch (const std::exception& e) {
        // Sent but not confirmed: the new process may serve it already, so it must not be served
        // here too. It is given up here; if the new process did not take it, the client reconnects.
        spdlog::error("takeover: session of '{}' sent but not confirmed ({}); given up here, no more sessions move",
                      state.user_id, e.what());
        hooks_.moved(state);
        return false;
    }
    spdlog::debug("takeover: session of '{}' ({}) moved", state.user_id, state.category);
    hooks_.moved(state);
    ++moved;
    bytes += message.size();
    return true;
}

}  // namespace moraine::net
