// bench_kernel_setup: the kernel's own cost of setting up one routed session, as rpc-load does.
//
// The floor under perf/rpc_compare.py's "router CPU per session set-up". rpc-load (perf/rpc)
// sets up its N sessions in two phases, and so does this bench's load process:
//   1. at once: N connections, each greeted by the router with Ice's 14-byte validate connection
//      message, then createSession on all N (all sent before any reply is read);
//   2. one session after another: the Ice runtime's getClientProxy and addProxies round trips to
//      the router, then the first ice_ping, which the router forwards to the back end and whose
//      reply it relays back (two hops).
// The server process (the one measured) does the least any router must for that: accept4
// (non-blocking), TCP_NODELAY and one write(2) of 14 bytes per connection; per local request one
// read(2) and one write(2) of the reply; per forwarded request one read and one write on each
// side. Level-triggered epoll, each descriptor registered once, no parsing, no allocation per
// request. The load tells it through a pipe when phase 1 starts and when phase 2 ends; its CPU
// (CLOCK_PROCESS_CPUTIME_ID; getrusage for user/sys) in between, divided by N, is the result.
// The connections stay open (rpc-load keeps them for its calls). On loopback a write(2) also
// runs the receiver's TCP input (softirq on the sending CPU).
//
//   bench_kernel_setup [--sessions 1000] [--bytes 60] [--rounds 3] [--json]
//
// Records are --bytes long (about an Ice request of that kind): byte 0 says local ('L') or
// forwarded ('F'); the server stamps a forwarded one's connection index at [4,8) so that the
// back end's echo finds its way back. --rounds repeats the whole set-up (new connections each
// time) and reports each round.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_loopback.hpp"

namespace {

using namespace moraine::bench;

struct options {
    std::size_t sessions = 1000;
    std::size_t bytes = 60;
    int rounds = 3;
    bool json = false;
};

constexpr std::size_t validate_size = 14;  // Ice's validate connection message
constexpr int local_round_trips = 2;       // getClientProxy, addProxies (phase 2)

// ---- the load process -------------------------------------------------------------------------

/// Reads exactly `n` bytes from blocking `fd` into `p`.
void read_exactly(int fd, char* p, std::size_t n, const char* what) {
    while (n > 0) {
        const ssize_t r = read(fd, p, n);
        if (r <= 0) die(what);
        p += r;
        n -= static_cast<std::size_t>(r);
    }
}

/// One round trip on blocking `fd`: `record` out, its echo in.
void round_trip(int fd, std::vector<char>& record, std::vector<char>& reply) {
    write_all(fd, record.data(), record.size(), "client write");
    read_exactly(fd, reply.data(), reply.size(), "client read");
}

/// The back end: echoes whatever arrives, on its own thread (phase 2 blocks on a client).
void echo_backend(int backend) {
    std::vector<char> buf(1 << 16);
    for (;;) {
        const ssize_t r = read(backend, buf.data(), buf.size());
        if (r <= 0) return;  // the server closed it: the bench is over
        write_all(backend, buf.data(), static_cast<std::size_t>(r), "back-end write");
    }
}

[[noreturn]] void load_main(const options& o, const sockaddr_in& router_addr, int backend_lst, int control) {
    const int backend = accept_from(backend_lst);
    close(backend_lst);
    std::thread(echo_backend, backend).detach();
    std::vector<char> local(o.bytes, 'x'), forwarded(o.bytes, 'x'), reply(o.bytes);
    local[0] = 'L';
    forwarded[0] = 'F';
    char greeting[validate_size];
    for (int round = 0; round < o.rounds; ++round) {
        if (write(control, "S", 1) != 1) die("control write");
        std::vector<int> clients;
        for (std::size_t i = 0; i < o.sessions; ++i) clients.push_back(connect_to(router_addr));
        for (int fd : clients) read_exactly(fd, greeting, sizeof greeting, "validate read");
        for (int fd : clients) write_all(fd, local.data(), local.size(), "createSession write");
        for (int fd : clients) read_exactly(fd, reply.data(), reply.size(), "createSession read");
        for (int fd : clients) {
            for (int k = 0; k < local_round_trips; ++k) round_trip(fd, local, reply);
            round_trip(fd, forwarded, reply);
        }
        if (write(control, "E", 1) != 1) die("control write");
        char ack = 0;  // the server has read its clock: now the connections may go
        if (read(control, &ack, 1) != 1) die("control read");
        for (int fd : clients) close(fd);
    }
    _exit(0);
}

// ---- the server (measured) --------------------------------------------------------------------

struct counts {
    std::uint64_t syscalls = 0;
};

struct round_result {
    double cpu_us = 0, user_us = 0, sys_us = 0, syscalls = 0, seconds = 0;  // per session, but seconds
};

class server {
public:
    server(const options& o, int lst, int backend, int control) : o_(o), lst_(lst), backend_(backend), control_(control) {
        ep_ = epoll_create1(0);
        if (ep_ < 0) die("epoll_create1");
        watch(ep_, lst_, listener_key);
        watch(ep_, backend_, backend_key);
        watch(ep_, control_, control_key);
    }

    std::vector<round_result> run() {
        std::vector<round_result> results;
        std::vector<epoll_event> evs(1024);
        while (static_cast<int>(results.size()) < o_.rounds) {
            const int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), -1);
            ++c_.syscalls;
            if (n < 0) {
                if (errno == EINTR) continue;
                die("server epoll_wait");
            }
            for (int i = 0; i < n; ++i) {
                const std::uint32_t key = evs[static_cast<std::size_t>(i)].data.u32;
                if (key == control_key)
                    on_control(results);
                else if (key == listener_key)
                    accept_all();
                else if (key == backend_key)
                    on_backend();
                else
                    on_client(key);
            }
        }
        return results;
    }

private:
    static constexpr std::uint32_t listener_key = 0xffffffff, backend_key = 0xfffffffe, control_key = 0xfffffffd;

    void on_control(std::vector<round_result>& results) {
        char c = 0;
        if (read(control_, &c, 1) != 1) die("control read (load process died?)");
        if (c == 'S') {
            start_ = c_;
            cpu0_ = now_ns(CLOCK_PROCESS_CPUTIME_ID);
            wall0_ = now_ns(CLOCK_MONOTONIC);
            getrusage(RUSAGE_SELF, &ru0_);
            return;
        }
        const std::int64_t cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        rusage ru1{};
        getrusage(RUSAGE_SELF, &ru1);
        const double n = static_cast<double>(o_.sessions);
        round_result r;
        r.cpu_us = static_cast<double>(cpu1 - cpu0_) / n / 1000.0;
        r.user_us = static_cast<double>(tv_ns(ru1.ru_utime) - tv_ns(ru0_.ru_utime)) / n / 1000.0;
        r.sys_us = static_cast<double>(tv_ns(ru1.ru_stime) - tv_ns(ru0_.ru_stime)) / n / 1000.0;
        r.syscalls = static_cast<double>(c_.syscalls - start_.syscalls) / n;
        r.seconds = static_cast<double>(now_ns(CLOCK_MONOTONIC) - wall0_) / 1e9;
        results.push_back(r);
        // This round's connections close after the clock was read: their closes are not set-up.
        for (int fd : clients_)
            if (fd >= 0) close(fd);
        clients_.clear();
        carries_.clear();
        if (write(control_, "A", 1) != 1) die("control write");
    }

    void accept_all() {
        for (;;) {
            const int fd = accept4(lst_, nullptr, nullptr, SOCK_NONBLOCK);
            ++c_.syscalls;
            if (fd < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) return;
                die("accept4");
            }
            no_delay(fd);
            const auto key = static_cast<std::uint32_t>(clients_.size());
            clients_.push_back(fd);
            carries_.emplace_back();
            watch(ep_, fd, key);
            static constexpr char validate[validate_size] = {'I', 'c', 'e', 'P', 1, 0, 1, 0, 3, 0, 14, 0, 0, 0};
            write_all(fd, validate, sizeof validate, "validate write");
            c_.syscalls += 3;  // setsockopt, epoll_ctl, write
        }
    }

    void on_client(std::uint32_t key) {
        const ssize_t r = read(clients_[key], buf_, sizeof buf_);
        ++c_.syscalls;
        if (r == 0) {  // a client of a finished round going away early: forget it
            close(clients_[key]);
            clients_[key] = -1;
            return;
        }
        if (r < 0) die("server read");
        carries_[key].feed({buf_, static_cast<std::size_t>(r)}, o_.bytes, [&](const char* rec) {
            if (rec[0] == 'F') {  // forwarded: stamped with its connection, to the back end
                std::memcpy(out_, rec, o_.bytes);
                std::memcpy(out_ + 4, &key, 4);
                write_all(backend_, out_, o_.bytes, "back-end write");
            } else {              // answered here
                write_all(clients_[key], rec, o_.bytes, "reply write");
            }
            ++c_.syscalls;
        });
    }

    void on_backend() {
        const ssize_t r = read(backend_, buf_, sizeof buf_);
        ++c_.syscalls;
        if (r <= 0) die("back-end read");
        backend_carry_.feed({buf_, static_cast<std::size_t>(r)}, o_.bytes, [&](const char* rec) {
            std::uint32_t idx = 0;
            std::memcpy(&idx, rec + 4, 4);
            if (idx >= clients_.size() || clients_[idx] < 0) die("reply for no client");
            write_all(clients_[idx], rec, o_.bytes, "relayed reply write");
            ++c_.syscalls;
        });
    }

    const options& o_;
    int lst_, backend_, control_, ep_ = -1;
    std::vector<int> clients_;
    std::vector<carry> carries_;
    carry backend_carry_;
    counts c_, start_;
    std::int64_t cpu0_ = 0, wall0_ = 0;
    rusage ru0_{};
    char buf_[1 << 16];
    char out_[1 << 12];
};

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--json") {
            o.json = true;
        } else if (a == "--sessions" && has_value) {
            o.sessions = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--bytes" && has_value) {
            o.bytes = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--rounds" && has_value) {
            o.rounds = std::atoi(argv[++i]);
        } else {
            return false;
        }
    }
    return o.sessions > 0 && o.bytes >= 8 && o.bytes <= 4096 && o.rounds > 0;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: bench_kernel_setup [--sessions N] [--bytes B (8..4096)] [--rounds R] [--json]\n");
        return 2;
    }
    raise_fd_limit(o.sessions + 16, "--sessions");  // each process holds one side of each connection
    sockaddr_in router_addr{}, backend_addr{};
    const int lst = listen_loopback(router_addr);
    if (fcntl(lst, F_SETFL, O_NONBLOCK) != 0) die("fcntl");  // accept4 until EAGAIN
    const int backend_lst = listen_loopback(backend_addr);
    int control[2];  // both ways: the load's "S" and "E", the server's "A"
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, control) != 0) die("socketpair");
    const pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(lst);
        close(control[0]);
        load_main(o, router_addr, backend_lst, control[1]);
    }
    close(backend_lst);
    close(control[1]);
    const int backend = connect_to(backend_addr);
    const auto results = server(o, lst, backend, control[0]).run();
    close(backend);  // ends the load's echo thread
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        errno = EIO;
        die("load process failed");
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        if (o.json)
            std::printf("{\"sessions\": %zu, \"bytes\": %zu, \"round\": %zu, \"cpu_us_per_session\": %.2f, "
                        "\"user_us_per_session\": %.2f, \"sys_us_per_session\": %.2f, \"syscalls_per_session\": %.2f, "
                        "\"seconds\": %.3f}\n",
                        o.sessions, o.bytes, i + 1, r.cpu_us, r.user_us, r.sys_us, r.syscalls, r.seconds);
        else
            std::printf("round %zu: %zu sessions set up in %.3f s; server CPU %.1f us/session (user %.1f + sys %.1f), "
                        "%.1f syscalls/session\n",
                        i + 1, o.sessions, r.seconds, r.cpu_us, r.user_us, r.sys_us, r.syscalls);
    }
    return 0;
}
