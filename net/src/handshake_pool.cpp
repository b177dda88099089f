// The handshake threads (see handshake_pool.hpp).
#include <moraine/net/handshake_pool.hpp>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace moraine::net {

namespace {
// Below the shards: under contention the kernel runs established sessions' work first.
constexpr int handshake_nice_offset = 10;
constexpr int lowest_priority_nice = 19;
}  // namespace

handshake_pool::handshake_pool(unsigned threads) : io_(static_cast<int>(threads)), work_(io_.get_executor()) {
    for (unsigned i = 0; i < threads; ++i)
        threads_.emplace_back([this] {
            // Linux: a thread's nice value is per thread (its tid), not per process. Relative to
            // the router's own (it inherited it): an absolute 10 would raise the priority of a
            // router started under `nice -n 19` above its shards (root may lower niceness).
            const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
            errno = 0;
            const int own = ::getpriority(PRIO_PROCESS, tid);
            if (errno == 0)
                ::setpriority(PRIO_PROCESS, tid, std::min(own + handshake_nice_offset, lowest_priority_nice));
            io_.run();
        });
}

handshake_pool::~handshake_pool() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
}

}  // namespace moraine::net
