// bench_kernel_write: the kernel's own cost of delivering one clock tick to K subscribers.
//
// One tick-sized Ice message (86 bytes by default: what moraine-router writes per Clock::tick to
// a clock-subscriber session, measured with `ss -ti`) is written once to each of K loopback TCP
// connections, round after round. A forked reader process drains all K connections with epoll and
// acknowledges each round through a pipe, so rounds never pile up in the socket buffers and the
// writer's process CPU time (CLOCK_PROCESS_CPUTIME_ID: it is single-threaded) is the write path
// alone. On loopback the sender's write() also runs the receiver's TCP input and the reader's
// epoll wake-up (softirq on the sending CPU), which is all part of "delivering the event".
//
// Modes (--mode):
//   write    one write(2) of the whole message per socket
//   writev2  one writev(2) of two iovecs per socket (header + shared tail, as moraine-router's
//            ice_connection::write_now does)
//   both     one after the other (default)
//
//   bench_kernel_write [--sockets 1000] [--bytes 86] [--rounds 200] [--warmup 20]
//                      [--gap-us 0] [--mode both] [--json]
//
// Prints CPU ns per write (mean over all rounds, and the median/min/max of per-round means), wall
// ns per write, the user/system split (getrusage) and the reader's CPU per message read (its
// connects included: it makes the connections, so that each process holds only its own side).
// --json prints one JSON object per mode instead (for perf/clock_compare.py).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_loopback.hpp"

namespace {

using namespace moraine::bench;

struct options {
    std::size_t sockets = 1000;
    std::size_t bytes = 86;
    std::size_t rounds = 200;
    std::size_t warmup = 20;
    long gap_us = 0;
    std::string mode = "both";
    bool json = false;
};

/// The reader's side: k connections to addr (the writer accepts them meanwhile). Each process
/// holds only its own k descriptors, so k may come close to RLIMIT_NOFILE (19,000 of 20,000).
std::vector<int> connect_k(std::size_t k, const sockaddr_in& addr) {
    std::vector<int> fds;
    fds.reserve(k);
    for (std::size_t i = 0; i < k; ++i) fds.push_back(connect_to(addr));
    return fds;
}

/// The writer's side: the k connections the reader makes.
std::vector<int> accept_k(std::size_t k, int lst) {
    std::vector<int> fds;
    fds.reserve(k);
    for (std::size_t i = 0; i < k; ++i) fds.push_back(accept_from(lst));
    return fds;
}

/// The reader process: drains every socket; after each round's k*bytes, writes one byte to `ack`.
[[noreturn]] void reader_main(const std::vector<int>& fds, std::size_t per_round, std::size_t total_rounds, int ack) {
    const int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    for (int fd : fds) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
    }
    std::vector<epoll_event> evs(1024);
    char buf[65536];
    std::size_t got = 0, rounds = 0;
    while (rounds < total_rounds) {
        const int n = epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; ++i) {
            const ssize_t r = read(evs[static_cast<std::size_t>(i)].data.fd, buf, sizeof buf);
            if (r < 0 && errno != EAGAIN) die("reader read");
            if (r == 0) _exit(2);
            if (r > 0) got += static_cast<std::size_t>(r);
        }
        while (got >= per_round && rounds < total_rounds) {
            got -= per_round;
            ++rounds;
            const char c = 1;
            if (write(ack, &c, 1) != 1) die("ack write");
        }
    }
    _exit(0);
}

struct result {
    std::string mode;
    std::size_t sockets = 0, bytes = 0, rounds = 0;
    double cpu_ns_per_write = 0, cpu_ns_median_round = 0, cpu_ns_min_round = 0, cpu_ns_max_round = 0;
    double wall_ns_per_write = 0;
    double user_ns_per_write = 0, sys_ns_per_write = 0;
    double reader_cpu_ns_per_msg = 0;
};

result run_mode(const options& o, const std::string& mode) {
    sockaddr_in addr{};
    const int lst = listen_loopback(addr);
    int ack[2];
    if (pipe(ack) != 0) die("pipe");
    const std::size_t total_rounds = o.warmup + o.rounds;
    const pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(lst);
        close(ack[0]);
        reader_main(connect_k(o.sockets, addr), o.sockets * o.bytes, total_rounds, ack[1]);
    }
    close(ack[1]);
    const std::vector<int> writers = accept_k(o.sockets, lst);
    close(lst);

    // An Ice request header then filler: the content does not matter to the kernel.
    std::vector<char> msg(o.bytes, 'x');
    const char head[] = {'I', 'c', 'e', 'P', 1, 0, 1, 0, 0, 0};
    std::memcpy(msg.data(), head, std::min(sizeof head, msg.size()));
    const std::size_t split = std::min<std::size_t>(msg.size(), 44);  // header + request header | params

    auto wait_ack = [&] {
        char c;
        for (;;) {
            const ssize_t r = read(ack[0], &c, 1);
            if (r == 1) return;
            if (r < 0 && errno == EINTR) continue;
            die("ack read (reader died?)");
        }
    };
    std::vector<double> per_round;
    per_round.reserve(o.rounds);
    std::int64_t cpu_total = 0, wall_total = 0;
    rusage ru0{}, ru1{};
    for (std::size_t r = 0; r < total_rounds; ++r) {
        if (r == o.warmup) getrusage(RUSAGE_SELF, &ru0);
        const auto c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        const auto w0 = now_ns(CLOCK_MONOTONIC);
        for (int fd : writers) {
            ssize_t n;
            if (mode == "writev2") {
                iovec iov[2] = {{msg.data(), split}, {msg.data() + split, msg.size() - split}};
                n = writev(fd, iov, 2);
            } else {
                n = write(fd, msg.data(), msg.size());
            }
            if (n != static_cast<ssize_t>(msg.size())) die("short or failed write");
        }
        const auto c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        const auto w1 = now_ns(CLOCK_MONOTONIC);
        if (r == total_rounds - 1) getrusage(RUSAGE_SELF, &ru1);
        if (r >= o.warmup) {
            cpu_total += c1 - c0;
            wall_total += w1 - w0;
            per_round.push_back(static_cast<double>(c1 - c0) / static_cast<double>(o.sockets));
        }
        wait_ack();
        if (o.gap_us > 0) usleep(static_cast<useconds_t>(o.gap_us));
    }
    int status = 0;
    rusage child_ru{};
    if (wait4(child, &status, 0, &child_ru) != child) die("wait4");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        errno = EIO;
        die("reader process failed");
    }
    for (int fd : writers) close(fd);
    close(ack[0]);

    const double writes = static_cast<double>(o.rounds * o.sockets);
    std::sort(per_round.begin(), per_round.end());
    result res;
    res.mode = mode;
    res.sockets = o.sockets;
    res.bytes = o.bytes;
    res.rounds = o.rounds;
    res.cpu_ns_per_write = static_cast<double>(cpu_total) / writes;
    res.cpu_ns_median_round = per_round[per_round.size() / 2];
    res.cpu_ns_min_round = per_round.front();
    res.cpu_ns_max_round = per_round.back();
    res.wall_ns_per_write = static_cast<double>(wall_total) / writes;
    // getrusage spans the measured rounds including the (blocking, near-free) ack reads.
    res.user_ns_per_write = static_cast<double>(tv_ns(ru1.ru_utime) - tv_ns(ru0.ru_utime)) / writes;
    res.sys_ns_per_write = static_cast<double>(tv_ns(ru1.ru_stime) - tv_ns(ru0.ru_stime)) / writes;
    res.reader_cpu_ns_per_msg = static_cast<double>(tv_ns(child_ru.ru_utime) + tv_ns(child_ru.ru_stime)) /
                                static_cast<double>(total_rounds * o.sockets);
    return res;
}

void print(const options& o, const result& r) {
    if (o.json) {
        std::printf(
            "{\"mode\": \"%s\", \"sockets\": %zu, \"bytes\": %zu, \"rounds\": %zu, \"gap_us\": %ld, \"cpu_ns_per_write\": %.1f, "
            "\"cpu_ns_median_round\": %.1f, \"cpu_ns_min_round\": %.1f, \"cpu_ns_max_round\": %.1f, "
            "\"wall_ns_per_write\": %.1f, \"user_ns_per_write\": %.1f, \"sys_ns_per_write\": %.1f, "
            "\"reader_cpu_ns_per_msg\": %.1f}\n",
            r.mode.c_str(), r.sockets, r.bytes, r.rounds, o.gap_us, r.cpu_ns_per_write, r.cpu_ns_median_round,
            r.cpu_ns_min_round, r.cpu_ns_max_round, r.wall_ns_per_write, r.user_ns_per_write, r.sys_ns_per_write,
            r.reader_cpu_ns_per_msg);
    } else {
        std::printf("%-8s K=%zu bytes=%zu rounds=%zu: CPU %.0f ns/write (per-round median %.0f, min %.0f, max %.0f; "
                    "user %.0f + sys %.0f from getrusage), wall %.0f ns/write; reader CPU %.0f ns/message\n",
                    r.mode.c_str(), r.sockets, r.bytes, r.rounds, r.cpu_ns_per_write, r.cpu_ns_median_round,
                    r.cpu_ns_min_round, r.cpu_ns_max_round, r.user_ns_per_write, r.sys_ns_per_write,
                    r.wall_ns_per_write, r.reader_cpu_ns_per_msg);
    }
    std::fflush(stdout);
}

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        auto num = [&](auto& out) {
            const char* v = next();
            if (!v) return false;
            char* end = nullptr;
            const long long x = std::strtoll(v, &end, 10);
            if (*end || x < 0) return false;
            out = static_cast<std::remove_reference_t<decltype(out)>>(x);
            return true;
        };
        if (a == "--sockets") {
            if (!num(o.sockets) || o.sockets == 0) return false;
        } else if (a == "--bytes") {
            if (!num(o.bytes) || o.bytes == 0) return false;
        } else if (a == "--rounds") {
            if (!num(o.rounds) || o.rounds == 0) return false;
        } else if (a == "--warmup") {
            if (!num(o.warmup)) return false;
        } else if (a == "--gap-us") {
            if (!num(o.gap_us)) return false;
        } else if (a == "--mode") {
            const char* v = next();
            if (!v) return false;
            o.mode = v;
            if (o.mode != "write" && o.mode != "writev2" && o.mode != "both") return false;
        } else if (a == "--json") {
            o.json = true;
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr,
                     "usage: bench_kernel_write [--sockets K] [--bytes N] [--rounds R] [--warmup W] [--gap-us U]\n"
                     "                          [--mode write|writev2|both] [--json]\n");
        return 2;
    }
    raise_fd_limit(o.sockets + 8, "--sockets");  // each process holds one side of each connection
    if (o.mode == "both" || o.mode == "write") print(o, run_mode(o, "write"));
    if (o.mode == "both" || o.mode == "writev2") print(o, run_mode(o, "writev2"));
    return 0;
}
