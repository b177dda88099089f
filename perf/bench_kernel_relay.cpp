// bench_kernel_relay: the kernel's own cost of forwarding one twoway request through a router.
//
// The floor under perf/rpc_compare.py's "router CPU per forwarded request". A relay process (the
// one measured) holds C client connections and one back-end connection, as a router with one
// back end does, and does the least any such router must: on a readable client connection one
// read(2) and one write(2) of the request to the back end (a 4-byte connection index stamped
// into it, as a router maps request ids); on the readable back-end connection one read(2) of
// whatever replies arrived and one write(2) of each reply to its client. Level-triggered epoll,
// every descriptor registered once, no parsing, no allocation, no timers.
//
// A forked load process makes the C client connections and the back end: it sends --rate
// requests/s in total, spread over the clients round-robin (one outstanding per client), paced
// as perf/rpc's rpc-load paces: every millisecond (a timerfd) the calls due so far, or with
// --pacing even one call every 1/R s (each alone on the wire, as independent clients); it echoes each
// request at the back end and times each reply (p50/p99). After
// --warmup s it tells the relay through a pipe to start measuring and after --seconds more to
// stop. The relay's CPU (CLOCK_PROCESS_CPUTIME_ID; getrusage for user/sys) over that window,
// divided by the replies it forwarded, is the result; so are its system calls per request.
// On loopback a write(2) also runs the receiver's TCP input (softirq on the sending CPU).
//
//   bench_kernel_relay [--clients 1000] [--rate 10000] [--pacing ms|even] [--bytes 60] [--warmup 3]
//                      [--seconds 10] [--json]
//
// --bytes 60 is about an Ice `echo(string)` request with a 16-byte string (what rpc_compare.py
// sends by default); the reply is the same record echoed.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_loopback.hpp"

namespace {

using namespace moraine::bench;

struct options {
    std::size_t clients = 1000;
    double rate = 10000;  // requests/s, all clients together
    bool even = false;    // --pacing even: one call per 1/rate s, not the calls of each millisecond
    std::size_t bytes = 60;
    double warmup_s = 3;
    double seconds = 10;
    bool json = false;
};

// ---- the load process -------------------------------------------------------------------------

struct load_report {
    std::uint64_t replies = 0;
    double p50_us = 0, p99_us = 0;
};

/// Clients and back end. Record layout: [0,4) the relay's connection index, [4,8) the client's
/// index, [8,16) the send time (CLOCK_MONOTONIC ns), then filler.
[[noreturn]] void load_main(const options& o, const sockaddr_in& client_addr, int backend_lst, int control) {
    std::vector<int> clients;
    for (std::size_t i = 0; i < o.clients; ++i) clients.push_back(connect_to(client_addr));
    const int backend = accept_from(backend_lst);
    close(backend_lst);

    const int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    for (std::size_t i = 0; i < clients.size(); ++i) watch(ep, clients[i], static_cast<std::uint32_t>(i));
    const auto backend_key = static_cast<std::uint32_t>(clients.size());
    const auto timer_key = backend_key + 1;
    watch(ep, backend, backend_key);
    const int timer = timerfd_create(CLOCK_MONOTONIC, 0);
    if (timer < 0) die("timerfd_create");
    itimerspec its{};
    its.it_interval.tv_nsec = o.even ? std::clamp(static_cast<long>(1e9 / o.rate), 1L, 999'999'999L) : 1'000'000L;  // as rpc-load
    its.it_value = its.it_interval;
    if (timerfd_settime(timer, 0, &its, nullptr) != 0) die("timerfd_settime");
    watch(ep, timer, timer_key);

    std::vector<char> outstanding(clients.size(), 0);
    std::vector<carry> client_carry(clients.size()), backend_carry(1);
    std::vector<double> latencies_us;
    std::vector<char> record(o.bytes, 'x');
    std::size_t next = 0;
    std::uint64_t sent = 0;  // calls issued (or skipped) so far, against those due at --rate
    const std::int64_t start = now_ns(CLOCK_MONOTONIC);
    const std::int64_t window_start = start + static_cast<std::int64_t>(o.warmup_s * 1e9);
    const std::int64_t window_end = window_start + static_cast<std::int64_t>(o.seconds * 1e9);
    bool in_window = false;
    load_report rep;
    std::vector<epoll_event> evs(1024);
    std::vector<char> buf(1 << 18);
    for (;;) {
        const int n = epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("load epoll_wait");
        }
        const std::int64_t now = now_ns(CLOCK_MONOTONIC);
        if (!in_window && now >= window_start) {
            in_window = true;
            if (write(control, "S", 1) != 1) die("control write");
        }
        if (in_window && now >= window_end) {
            std::sort(latencies_us.begin(), latencies_us.end());
            if (!latencies_us.empty()) {
                rep.p50_us = latencies_us[latencies_us.size() / 2];
                rep.p99_us = latencies_us[latencies_us.size() * 99 / 100];
            }
            char line[128];
            const int len = std::snprintf(line, sizeof line, "E %llu %.1f %.1f\n",
                                          static_cast<unsigned long long>(rep.replies), rep.p50_us, rep.p99_us);
            if (write(control, line, static_cast<std::size_t>(len)) != len) die("control write");
            _exit(0);
        }
        for (int i = 0; i < n; ++i) {
            const std::uint32_t key = evs[static_cast<std::size_t>(i)].data.u32;
            if (key == timer_key) {
                std::uint64_t ticks = 0;
                if (read(timer, &ticks, sizeof ticks) != sizeof ticks) die("timerfd read");
                const auto due = static_cast<std::uint64_t>(o.rate * static_cast<double>(now - start) / 1e9);
                for (; sent < due; ++sent, next = (next + 1) % clients.size()) {
                    if (outstanding[next]) continue;  // its previous call is still out: skip, as a paced client would
                    outstanding[next] = 1;
                    const auto idx = static_cast<std::uint32_t>(next);
                    std::memcpy(record.data() + 4, &idx, 4);
                    std::memcpy(record.data() + 8, &now, 8);
                    write_all(clients[next], record.data(), record.size(), "client write");
                }
            } else if (key == backend_key) {  // the back end: echo what came
                const ssize_t r = read(backend, buf.data(), buf.size());
                if (r <= 0) die("back-end read");
                backend_carry[0].feed({buf.data(), static_cast<std::size_t>(r)}, o.bytes, [&](const char* rec) {
                    write_all(backend, rec, o.bytes, "back-end write");
                });
            } else {  // a reply at client `key`
                const ssize_t r = read(clients[key], buf.data(), buf.size());
                if (r <= 0) die("client read");
                client_carry[key].feed({buf.data(), static_cast<std::size_t>(r)}, o.bytes, [&](const char* rec) {
                    std::int64_t sent = 0;
                    std::memcpy(&sent, rec + 8, 8);
                    outstanding[key] = 0;
                    if (in_window) {
                        ++rep.replies;
                        latencies_us.push_back(static_cast<double>(now_ns(CLOCK_MONOTONIC) - sent) / 1000.0);
                    }
                });
            }
        }
    }
}

// ---- the relay (measured) ---------------------------------------------------------------------

struct relay_counts {
    std::uint64_t forwarded = 0, epoll_waits = 0, reads = 0, writes = 0;
};

struct result {
    double cpu_ns_per_request = 0, user_ns_per_request = 0, sys_ns_per_request = 0;
    double syscalls_per_request = 0, requests_per_s = 0, p50_us = 0, p99_us = 0;
    std::uint64_t requests = 0;
};

result relay_main(const options& o, int client_lst, const sockaddr_in& backend_addr, int control) {
    std::vector<int> clients;
    for (std::size_t i = 0; i < o.clients; ++i) clients.push_back(accept_from(client_lst));
    close(client_lst);
    const int backend = connect_to(backend_addr);

    const int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    for (std::size_t i = 0; i < clients.size(); ++i) watch(ep, clients[i], static_cast<std::uint32_t>(i));
    const auto backend_key = static_cast<std::uint32_t>(clients.size());
    const auto control_key = backend_key + 1;
    watch(ep, backend, backend_key);
    watch(ep, control, control_key);

    std::vector<carry> client_carry(clients.size()), backend_carry(1);
    std::vector<epoll_event> evs(1024);
    std::vector<char> buf(1 << 18);
    relay_counts c, c0;
    std::int64_t cpu0 = 0;
    rusage ru0{};
    for (;;) {
        const int n = epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), -1);
        ++c.epoll_waits;
        if (n < 0) {
            if (errno == EINTR) continue;
            die("relay epoll_wait");
        }
        for (int i = 0; i < n; ++i) {
            const std::uint32_t key = evs[static_cast<std::size_t>(i)].data.u32;
            if (key == control_key) {
                char line[128] = {};
                const ssize_t r = read(control, line, sizeof line - 1);
                if (r <= 0) die("control read (load process died?)");
                if (line[0] == 'S') {  // window start
                    c0 = c;
                    cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
                    getrusage(RUSAGE_SELF, &ru0);
                    continue;
                }
                const std::int64_t cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
                rusage ru1{};
                getrusage(RUSAGE_SELF, &ru1);
                unsigned long long replies = 0;
                result res;
                if (std::sscanf(line, "E %llu %lf %lf", &replies, &res.p50_us, &res.p99_us) != 3) die("control line");
                const double reqs = static_cast<double>(c.forwarded - c0.forwarded);
                res.requests = c.forwarded - c0.forwarded;
                res.cpu_ns_per_request = static_cast<double>(cpu1 - cpu0) / reqs;
                res.user_ns_per_request = static_cast<double>(tv_ns(ru1.ru_utime) - tv_ns(ru0.ru_utime)) / reqs;
                res.sys_ns_per_request = static_cast<double>(tv_ns(ru1.ru_stime) - tv_ns(ru0.ru_stime)) / reqs;
                res.syscalls_per_request = static_cast<double>((c.epoll_waits - c0.epoll_waits) + (c.reads - c0.reads) +
                                                               (c.writes - c0.writes)) / reqs;
                res.requests_per_s = reqs / o.seconds;
                for (int fd : clients) close(fd);
                close(backend);
                close(ep);
                return res;
            }
            const int fd = key == backend_key ? backend : clients[key];
            const ssize_t r = read(fd, buf.data(), buf.size());
            ++c.reads;
            if (r <= 0) die("relay read");
            const std::string_view got{buf.data(), static_cast<std::size_t>(r)};
            if (key == backend_key) {  // replies: one write each, to the client named in the record
                backend_carry[0].feed(got, o.bytes, [&](const char* rec) {
                    std::uint32_t idx = 0;
                    std::memcpy(&idx, rec, 4);
                    if (idx >= clients.size()) die("reply for no client");
                    write_all(clients[idx], rec, o.bytes, "client write");
                    ++c.writes;
                    ++c.forwarded;
                });
            } else {  // requests: stamped with their connection and written to the back end at once
                std::string out;
                client_carry[key].feed(got, o.bytes, [&](const char* rec) {
                    out.append(rec, o.bytes);
                    std::memcpy(out.data() + out.size() - o.bytes, &key, 4);
                });
                if (!out.empty()) {
                    write_all(backend, out.data(), out.size(), "back-end write");
                    ++c.writes;
                }
            }
        }
    }
}

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--json") {
            o.json = true;
        } else if (a == "--clients" && has_value) {
            o.clients = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--rate" && has_value) {
            o.rate = std::strtod(argv[++i], nullptr);
        } else if (a == "--pacing" && has_value) {
            const std::string_view p = argv[++i];
            if (p != "ms" && p != "even") return false;
            o.even = p == "even";
        } else if (a == "--bytes" && has_value) {
            o.bytes = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--warmup" && has_value) {
            o.warmup_s = std::strtod(argv[++i], nullptr);
        } else if (a == "--seconds" && has_value) {
            o.seconds = std::strtod(argv[++i], nullptr);
        } else {
            return false;
        }
    }
    return o.clients > 0 && o.rate > 0 && o.bytes >= 16 && o.seconds > 0 && o.warmup_s >= 0;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: bench_kernel_relay [--clients C] [--rate R] [--pacing ms|even] [--bytes N (>= 16)] [--warmup S]"
                             " [--seconds S] [--json]\n");
        return 2;
    }
    raise_fd_limit(o.clients + 8, "--clients");  // each process holds one side of each connection
    sockaddr_in client_addr{}, backend_addr{};
    const int client_lst = listen_loopback(client_addr);
    const int backend_lst = listen_loopback(backend_addr);
    int control[2];
    if (pipe(control) != 0) die("pipe");
    const pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(client_lst);
        close(control[0]);
        load_main(o, client_addr, backend_lst, control[1]);
    }
    close(backend_lst);
    close(control[1]);
    const result res = relay_main(o, client_lst, backend_addr, control[0]);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        errno = EIO;
        die("load process failed");
    }
    if (o.json) {
        std::printf("{\"clients\": %zu, \"rate\": %.0f, \"pacing\": \"%s\", \"bytes\": %zu, \"requests\": %llu, \"requests_per_s\": %.0f, "
                    "\"cpu_ns_per_request\": %.0f, \"user_ns_per_request\": %.0f, \"sys_ns_per_request\": %.0f, "
                    "\"syscalls_per_request\": %.2f, \"p50_us\": %.1f, \"p99_us\": %.1f}\n",
                    o.clients, o.rate, o.even ? "even" : "ms", o.bytes, static_cast<unsigned long long>(res.requests),
                    res.requests_per_s, res.cpu_ns_per_request, res.user_ns_per_request, res.sys_ns_per_request,
                    res.syscalls_per_request, res.p50_us, res.p99_us);
    } else {
        std::printf("relay C=%zu rate=%.0f/s bytes=%zu: %llu requests (%.0f/s); relay CPU %.0f ns/request (user %.0f + "
                    "sys %.0f), %.2f syscalls/request; load's p50 %.1f us, p99 %.1f us\n",
                    o.clients, o.rate, o.bytes, static_cast<unsigned long long>(res.requests), res.requests_per_s,
                    res.cpu_ns_per_request, res.user_ns_per_request, res.sys_ns_per_request, res.syscalls_per_request,
                    res.p50_us, res.p99_us);
    }
    return 0;
}
