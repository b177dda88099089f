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
}

}  // namespace moraine::net
