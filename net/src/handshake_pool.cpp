// The handshake threads (see handshake_pool.hpp).
#include <moraine/net/handshake_pool.hpp>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace moraine::net {

namespace {
// Below the shards: under contention the kernel runs established sessions' work first.
constexpr int handshake_nice = 10;
}  // namespace

handshake_pool::handshake_pool(unsigned threads) : io_(static_cast<int>(threads)), work_(io_.get_executor()) {
    for (unsigned i = 0; i < threads; ++i)
        threads_.emplace_back([this] {
            // Linux: a thread's nice value is per thread (its tid), not per process.
            ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), handshake_nice);
            io_.run();
        });
}

handshake_pool::~handshake_pool() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
}

}  // namespace moraine::net
