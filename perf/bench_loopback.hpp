#pragma once
// What the kernel benchmarks (bench_kernel_write, bench_kernel_relay, bench_kernel_setup) share: loopback TCP
// sockets set up as Ice and moraine-router set theirs (TCP_NODELAY), CPU clocks, and dying with
// the failed call's errno. Plain POSIX, no dependencies.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

namespace moraine::bench {

/// Prints "PROGRAM: what: strerror(errno)" and exits 1.
[[noreturn]] inline void die(const char* what) {
    std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, std::strerror(errno));
    std::exit(1);
}

/// `clock` (CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, ...) in ns.
inline std::int64_t now_ns(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// A getrusage time in ns.
inline std::int64_t tv_ns(const timeval& tv) {
    return std::int64_t{tv.tv_sec} * 1'000'000'000 + std::int64_t{tv.tv_usec} * 1000;
}

/// Raises RLIMIT_NOFILE's soft limit so that `need` more descriptors fit; dies naming `option`
/// when the hard limit does not allow it.
inline void raise_fd_limit(std::size_t need, const char* option) {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) die("getrlimit");
    if (rl.rlim_cur < need + 64) {
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, need + 64);
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) die("setrlimit");
    }
    if (rl.rlim_cur < need + 16) {
        errno = EMFILE;
        char what[96];
        std::snprintf(what, sizeof what, "RLIMIT_NOFILE too low for %s", option);
        die(what);
    }
}

/// A listening TCP socket on 127.0.0.1, port chosen by the kernel; its address in `addr`.
inline int listen_loopback(sockaddr_in& addr) {
    const int lst = socket(AF_INET, SOCK_STREAM, 0);
    if (lst < 0) die("socket");
    addr = sockaddr_in{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lst, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("bind");
    if (listen(lst, 4096) != 0) die("listen");
    socklen_t len = sizeof addr;
    if (getsockname(lst, reinterpret_cast<sockaddr*>(&addr), &len) != 0) die("getsockname");
    return lst;
}

inline void no_delay(int fd) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as Ice and moraine-router do
}

/// A blocking connection to `addr`, TCP_NODELAY.
inline int connect_to(const sockaddr_in& addr) {
    const int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0) die("socket");
    if (connect(c, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) die("connect");
    no_delay(c);
    return c;
}

/// The next connection on listener `lst`, TCP_NODELAY.
inline int accept_from(int lst) {
    const int a = accept(lst, nullptr, nullptr);
    if (a < 0) die("accept");
    no_delay(a);
    return a;
}

/// Registers `fd` for EPOLLIN (level-triggered) under `key`.
inline void watch(int ep, int fd, std::uint32_t key) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = key;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
}

/// One write(2) of all `n` bytes. The buffers never fill at these rates: a short write means the
/// bench is wrong, not slow, and dies naming `what`.
inline void write_all(int fd, const char* p, std::size_t n, const char* what) {
    if (write(fd, p, n) != static_cast<ssize_t>(n)) die(what);
}

/// Bytes read from one connection that do not yet make a whole record.
struct carry {
    std::string bytes;

    /// Appends `got` and calls on_record(record) for each whole record; keeps the rest.
    template <class F>
    void feed(std::string_view got, std::size_t record, F&& on_record) {
        if (bytes.empty()) {
            const std::size_t whole = got.size() - got.size() % record;
            for (std::size_t i = 0; i < whole; i += record) on_record(got.data() + i);
            bytes.assign(got.substr(whole));
            return;
        }
        bytes.append(got);
        const std::size_t whole = bytes.size() - bytes.size() % record;
        for (std::size_t i = 0; i < whole; i += record) on_record(bytes.data() + i);
        bytes.erase(0, whole);
    }
};

}  // namespace moraine::bench
