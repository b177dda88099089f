#include <moraine/net/locator_resolver.hpp>

#include <moraine/net/backend_pool.hpp>
#include <moraine/net/locator_messages.hpp>

#include <moraine/net/shard.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace moraine::net {

namespace {

/// Runs every handler of a finished query, in the order they asked. Taken out of the map
/// first: a handler may start a new resolution of the same key.
template <class Map, class Key>
void settle(Map& waiters, const Key& key, const std::vector<protocol::endpoint>* endpoints, std::string_view failure) {
    auto it = waiters.find(key);
    if (it == waiters.end()) return;
    auto handlers = std::move(it->second);
    waiters.erase(it);
    for (auto& h : handlers) h(endpoints, failure);
}

}  // namespace

locator_resolver::locator_resolver(query_fn ask, std::shared_ptr<locator_cache> cache)
    : ask_(std::move(ask)), cache_(std::move(cache)) {}

std::optional<std::vector<protocol::endpoint>> locator_resolver::cached(const protocol::proxy& p) const {
    return cache_->find(p, locator_cache::clock::now());
}

void locator_resolver::resolve(const protocol::proxy& p, resolved_handler done) {
    if (const auto eps = cached(p)) {
        done(&*eps, {});
        return;
    }
    if (!p.adapter_id.empty()) resolve_adapter(p.adapter_id, std::move(done));
    else resolve_object(p.id, std::move(done));
}

void locator_resolver::resolve_adapter(const std::string& id, resolved_handler done) {
    if (const auto eps = cache_->adapter(id, locator_cache::clock::now())) {
        done(&*eps, {});
        return;
    }
    auto [it, first] = adapter_waiters_.try_emplace(id);
    it->second.push_back(std::move(done));
    if (!first) return;  // a call for this adapter is under way: wait for its answer
    ask_(find_adapter_operation, find_adapter_params(id),
         [this, id, alive = std::weak_ptr<int>(alive_)](const protocol::reply_view* reply, std::string_view failure) {
             if (alive.expired()) return;
             auto answer = read_find_adapter_reply(reply, failure, id);
             // An adapter is reached by its endpoints: an answer without any is no better than none.
             if (answer.proxy && answer.proxy->endpoints.empty()) {
                 answer.failure = adapter_not_registered_text(id);
                 answer.proxy.reset();
             }
             if (!answer.proxy) {
                 spdlog::debug("locator: adapter '{}' not resolved: {}", id, answer.failure);
                 settle(adapter_waiters_, id, nullptr, answer.failure);
                 return;
             }
             cache_->put_adapter(id, answer.proxy->endpoints, locator_cache::clock::now());
             settle(adapter_waiters_, id, &answer.proxy->endpoints, {});
         });
}

void locator_resolver::resolve_object(const protocol::identity& id, resolved_handler done) {
    if (const auto o = cache_->object(id, locator_cache::clock::now())) {
        follow(*o, id, std::move(done));
        return;
    }
    auto [it, first] = object_waiters_.try_emplace(id);
    it->second.push_back(std::move(done));
    if (!first) return;
    ask_(find_object_operation, find_object_params(id.view()),
         [this, id, alive = std::weak_ptr<int>(alive_)](const protocol::reply_view* reply, std::string_view failure) {
             if (alive.expired()) return;
             auto answer = read_find_object_reply(reply, failure, id);
             auto it = object_waiters_.find(id);
             if (it == object_waiters_.end()) return;
             auto handlers = std::move(it->second);
             object_waiters_.erase(it);
             if (!answer.proxy) {
                 spdlog::debug("locator: object '{}' not resolved: {}", protocol::identity_to_string(id.view()),
                               answer.failure);
                 for (auto& h : handlers) h(nullptr, answer.failure);
                 return;
             }
             cache_->put_object(id, *answer.proxy, locator_cache::clock::now());
             for (auto& h : handlers) follow(*answer.proxy, id, std::move(h));
         });
}

void locator_resolver::follow(const protocol::proxy& answer, const protocol::identity& id, resolved_handler done) {
    if (!answer.endpoints.empty()) {
        done(&answer.endpoints, {});
        return;
    }
    // Indirect answer: resolve its adapter id. A well-known answer again would never end.
    if (answer.adapter_id.empty()) {
        done(nullptr, object_not_registered_text(id));
        return;
    }
    resolve_adapter(answer.adapter_id, std::move(done));
}

locator_resolver::query_fn invoke_locator(shard& home, protocol::proxy locator) {
    return [&home, locator = std::move(locator)](std::string_view operation, protocol::byte_buffer params,
                                                 reply_handler done) {
        // A locator that takes the call and never answers must not hold the resolution (and
        // every request that joins it) for ever: after the connect timeout the call fails; a
        // late answer is dropped.
        auto once = std::make_shared<reply_handler>(std::move(done));
        auto timer = std::make_shared<asio::steady_timer>(home.executor());
        timer->expires_after(std::chrono::milliseconds(home.cfg().backend_connect_timeout_ms));
        timer->async_wait([once](boost::system::error_code ec) {
            if (ec || !*once) return;
            auto d = std::exchange(*once, nullptr);
            d(nullptr, locator_timeout_text);
        });
        invoke(home, locator, operation, locator_find_mode, params,
               [once, timer](const protocol::reply_view* reply, std::string_view failure) {
                   timer->cancel();
                   if (!*once) return;
                   auto d = std::exchange(*once, nullptr);
                   d(reply, failure);
               });
    };
}

protocol::proxy with_endpoints(const protocol::proxy& p, const std::vector<protocol::endpoint>& endpoints) {
    protocol::proxy out = p;
    out.endpoints = endpoints;
    out.adapter_id.clear();
    return out;
}

}  // namespace moraine::net
