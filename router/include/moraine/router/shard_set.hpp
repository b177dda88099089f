#pragma once
// All shards, their threads, and the messages between them (style.md §7).
#include <moraine/router/asio.hpp>
#include <moraine/router/config.hpp>
#include <moraine/router/shard.hpp>
#include <moraine/session/crypt_password_file.hpp>

#include <functional>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

namespace moraine::router {

/// Owns the shards, their threads and a small pool for blocking work (crypt(3)).
class shard_set {
public:
    /// @param cfg the loaded configuration; cfg->threads shards (0 = one per core).
    /// @throws std::runtime_error if the password file cannot be read.
    explicit shard_set(std::shared_ptr<const config> cfg);
    ~shard_set();

    std::size_t size() const noexcept { return shards_.size(); }
    shard& at(unsigned i) noexcept { return *shards_[i]; }
    const config& cfg() const noexcept { return *cfg_; }

    /// Runs `fn(shard&)` on shard `to`'s thread. `fn` must own everything it captures: values,
    /// or shared immutable data, never references into the sender's shard.
    template <class Fn>
    void invoke_on(unsigned to, Fn fn) {
        shard& target = *shards_[to];
        asio::post(target.io(), [&target, fn = std::move(fn)]() mutable { fn(target); });
    }

    /// The shard that owns the session with this category (see shard::new_category).
    unsigned owner_of_category(std::string_view category) const noexcept;

    /// Pool for blocking calls (crypt(3) password checks), so I/O threads never block.
    asio::thread_pool& blocking_pool() noexcept { return blocking_; }
    /// The crypt password file, if auth_mode::crypt_file.
    const session::crypt_password_file* passwords() const noexcept { return passwords_.get(); }

    /// Binds `endpoints` on every shard (SO_REUSEPORT); each accepted socket goes to `on_accept` on
    /// the accepting shard. Port 0 is chosen by shard 0 and reused by the others.
    /// @return the endpoints as bound (real ports). @throws boost::system::system_error.
    std::vector<protocol::endpoint> listen(std::vector<protocol::endpoint> endpoints,
                                           const std::function<void(shard&, tcp::socket)>& on_accept);

    /// Binds the client and server endpoints on every shard and starts the shard threads.
    /// @throws boost::system::system_error if an endpoint cannot be bound.
    void start();
    /// Stops every shard and joins the threads. Idempotent; callable from any thread.
    void stop();
    /// Blocks until every shard thread has ended.
    void join();

private:
    std::shared_ptr<const config> cfg_;
    std::vector<std::unique_ptr<shard>> shards_;
    std::vector<std::thread> threads_;
    asio::thread_pool blocking_{2};
    std::unique_ptr<session::crypt_password_file> passwords_;
};

}  // namespace moraine::router
