#pragma once
// Threads for the public-key work of TLS handshakes, beside the shards and below them in priority.
#include <moraine/net/asio.hpp>

#include <thread>
#include <vector>

namespace moraine::net {

/** A few threads that run TLS handshake steps (a transport::tls_engine's handshake(), where the
    signature and key exchange cost about a millisecond each) for the shards, so that a flood of
    handshakes queues here instead of between the events of established sessions. Each thread
    runs at a lower scheduling priority than the shards (its nice value 10 above the router's,
    at most 19; setpriority on its own thread), so when the machine is busy the kernel gives the
    shards their time first. A job is a handler posted to executor(); it hands its result back
    to the owning shard by posting there. Moraine.TLS.HandshakeThreads / tls.handshake_threads
    (0: no pool, steps run on the shard). Thread-safe. */
class handshake_pool {
public:
    /// Starts `threads` threads (> 0).
    explicit handshake_pool(unsigned threads);
    /// Stops accepting work, drops what is queued and joins the threads.
    ~handshake_pool();
    handshake_pool(const handshake_pool&) = delete;
    handshake_pool& operator=(const handshake_pool&) = delete;

    /// Where handshake steps are posted.
    asio::io_context::executor_type executor() noexcept { return io_.get_executor(); }

private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::vector<std::thread> threads_;
};

}  // namespace moraine::net
