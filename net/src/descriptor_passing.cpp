#include <moraine/net/descriptor_passing.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace moraine::net {

namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

/// Waits until `sock` is readable; throws when `timeout` passes or `cancel` becomes readable first.
void wait_readable(int sock, std::chrono::milliseconds timeout, int cancel) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + timeout;
    for (;;) {
        pollfd fds[2] = {{sock, POLLIN, 0}, {cancel, POLLIN, 0}};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now());
        if (left.count() <= 0) throw channel_error("no message within " + std::to_string(timeout.count()) + " ms");
        const int n = ::poll(fds, cancel >= 0 ? 2 : 1, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw channel_error(errno_text("poll"));
        if (cancel >= 0 && fds[1].revents) throw channel_error("cancelled");
        if (fds[0].revents) return;  // readable, or hung up: recvmsg tells which
    }
}

/// Takes ownership of every descriptor in `msg`'s SCM_RIGHTS control messages.
std::vector<unique_fd> adopt_rights(msghdr& msg) {
    std::vector<unique_fd> out;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < n; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));  // CMSG_DATA may be unaligned
            out.emplace_back(fd);
        }
    }
    return out;
}

}  // namespace

void send_packet(int sock, std::span<const std::byte> bytes, std::span<const int> fds) {
    if (fds.size() > max_fds_per_packet) throw channel_error("too many descriptors for one message");
    iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<std::byte> control(CMSG_SPACE(sizeof(int) * max_fds_per_packet));
    if (!fds.empty()) {
        msg.msg_control = control.data();
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    for (;;) {
        const ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw channel_error(errno_text("send"));
        if (static_cast<std::size_t>(n) != bytes.size()) throw channel_error("send: message cut short");
        return;
    }
}

packet receive_packet(int sock, std::size_t max_bytes, std::size_t max_fds, std::chrono::milliseconds timeout,
                      int cancel) {
    wait_readable(sock, timeout, cancel);
    packet p;
    p.bytes.resize(max_bytes + 1);  // one more: a longer message shows as MSG_TRUNC
    iovec iov{p.bytes.data(), p.bytes.size()};
    // Room for max_fds, at least one: a sender that attaches any when none is expected shows as
    // MSG_CTRUNC, and the kernel closes what did not fit.
    std::vector<std::byte> control(CMSG_SPACE(sizeof(int) * (max_fds == 0 ? 1 : max_fds)));
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    ssize_t n = -1;
    do {
        n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) throw channel_error(errno_text("receive"));
    p.fds = adopt_rights(msg);  // owned from here: closed on any error below
    if (n == 0 && p.fds.empty()) throw channel_error("the peer closed the channel");
    if (msg.msg_flags & MSG_TRUNC) throw channel_error("message longer than " + std::to_string(max_bytes) + " bytes");
    if ((msg.msg_flags & MSG_CTRUNC) || p.fds.size() > max_fds)
        throw channel_error("message with more descriptors than the " + std::to_string(max_fds) + " expected");
    p.bytes.resize(static_cast<std::size_t>(n));
    return p;
}

}  // namespace moraine::net
