#include <moraine/net/backend_pool.hpp>

#include <moraine/protocol/output_stream.hpp>
#include <moraine/net/locator_resolver.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace moraine::net {

namespace {

/// An endpoint this router can reach: tcp or ws, or ssl or wss when TLS is configured (as an Ice
/// communicator without the IceSSL plugin has no secure endpoints to choose); only secure ones
/// when `secure_only`.
bool usable(const protocol::endpoint& e, bool tls, bool secure_only) {
    return ((e.is_tcp() || e.is_ws()) && !secure_only) || (tls && e.secure());
}

/// `e`, or where this process serves it under another address (runtime_config::endpoint_aliases):
/// the bound host and port, the proxy's other settings (timeout, compression) kept.
protocol::endpoint aliased(protocol::endpoint e, const std::vector<endpoint_alias>& aliases) {
    for (const auto& a : aliases) {
        if (protocol::same_address(a.published, e)) {
            e.host = a.bound.host;
            e.port = a.bound.port;
            break;
        }
    }
    return e;
}

/// The endpoints one connection to `p` tries in turn: the usable ones of the first usable one's
/// transport (a connection has one transport), in the proxy's order or shuffled, as Ice's
/// Ordered and Random endpoint selection do. Empty if none is usable.
std::vector<protocol::endpoint> candidates(const protocol::proxy& p, const runtime_config& cfg, bool tls,
                                           bool secure_only) {
    std::vector<protocol::endpoint> out;
    for (const auto& e : p.endpoints)
        if (usable(e, tls, secure_only) && (out.empty() || e.type == out.front().type))
            out.push_back(aliased(e, cfg.endpoint_aliases));
    if (!cfg.endpoints_ordered && out.size() > 1) {
        static thread_local std::minstd_rand random(std::random_device{}());
        std::shuffle(out.begin(), out.end(), random);
    }
    return out;
}

/// Connections are shared per transport and address; a ws resource is part of the address.
/// Built for every forwarded request, so from the fields, not from the endpoint's string form.
std::string connection_key(const protocol::endpoint& ep) {
    std::string key = std::to_string(ep.type) + ":" + ep.host + ":" + std::to_string(ep.port);
    if (ep.websocket()) key += ep.resource.empty() ? "/" : ep.resource;
    return key;
}

}  // namespace

std::string no_endpoint_text(const protocol::proxy& p) {
    return "::Ice::NoEndpointException:\nno suitable endpoint available for proxy `" + protocol::proxy_to_string(p) +
           "'";
}

std::shared_ptr<backend_connection> backend_pool::get(const protocol::proxy& p, std::string& failure, bool secure_only) {
    auto eps = candidates(p, home_.cfg(), home_.tls() != nullptr, secure_only);
    if (eps.empty()) {
        failure = no_endpoint_text(p);
        return nullptr;
    }
    // One endpoint (nearly always): its address is the key. Several: the sorted set of them, so
    // every proxy naming that set shares one connection, whichever endpoint it reached.
    std::string key;
    if (eps.size() == 1) {
        key = connection_key(eps.front());
    } else {
        std::vector<std::string> keys;
        for (const auto& e : eps) keys.push_back(connection_key(e));
        std::sort(keys.begin(), keys.end());
        for (const auto& k : keys) key += (key.empty() ? "" : "|") + k;
    }
    auto it = connections_.find(key);
    if (it != connections_.end()) return it->second;
    auto c = std::make_shared<backend_connection>(home_, std::move(eps), key);
    connections_.emplace(std::move(key), c);
    c->start();
    return c;
}

void backend_pool::remove(const std::string& key, const backend_connection* c) noexcept {
    auto it = connections_.find(key);
    if (it != connections_.end() && it->second.get() == c) connections_.erase(it);
}

std::size_t backend_pool::in_flight() const noexcept {
    std::size_t n = 0;
    for (const auto& [key, c] : connections_) n += c->in_flight();
    return n;
}

void backend_pool::close_all() {
    auto all = std::move(connections_);
    connections_.clear();
    for (auto& [key, c] : all) c->close(close_reason::shutdown, "router shutting down");
}

namespace {

/// A router-originated request message to `target` (request id 0: the connection sets it).
protocol::byte_buffer request_message(const protocol::proxy& target, std::string_view operation, std::uint8_t mode,
                                      protocol::byte_view params, const protocol::context& ctx) {
    protocol::output_stream os;
    os.start_message(protocol::message_type::request);
    os.write_int(0);  // request id: set by the connection
    os.write_identity(target.id.view());
    os.write_facet(target.facet);
    os.write_string(operation);
    os.write_byte(mode);
    os.write_size(static_cast<std::int32_t>(ctx.size()));
    for (const auto& [k, v] : ctx) {
        os.write_string(k);
        os.write_string(v);
    }
    os.write_bytes(params);
    os.end_message();
    return os.take();
}

/** Sends `message` to indirect proxy `target` once the shard's locator has resolved it. If the
    connection to the resolved endpoints fails before the back end validated it (nothing was
    sent), the cached resolution is dropped and the call resolved and sent once more, as Ice
    retries through its locator (the back end may have moved). */
void invoke_indirect(shard& home, const protocol::proxy& target, protocol::byte_buffer message, reply_handler done,
                     bool retried) {
    home.resolver()->resolve(target, [&home, target, message = std::move(message), done = std::move(done), retried](
                                         const std::vector<protocol::endpoint>* endpoints,
                                         std::string_view failure) mutable {
        if (!endpoints) {
            done(nullptr, failure);
            return;
        }
        std::string why;
        auto backend = home.backends().get(with_endpoints(target, *endpoints), why);
        if (!backend) {
            done(nullptr, why);
            return;
        }
        if (retried || backend->validated()) {
            backend->invoke(std::move(message), std::move(done));
            return;
        }
        auto copy = message;
        backend->invoke(std::move(copy), [&home, target, message = std::move(message), done = std::move(done),
                                          weak = std::weak_ptr<backend_connection>(backend)](
                                             const protocol::reply_view* reply, std::string_view failure) mutable {
            auto b = weak.lock();
            if (reply || !b || b->validated() || !home.resolver()) {
                done(reply, failure);
                return;
            }
            spdlog::debug("{} unreachable at its resolved endpoints, asking the locator again: {}",
                          protocol::proxy_to_string(target), failure);
            home.resolver()->forget(target);
            invoke_indirect(home, target, std::move(message), std::move(done), true);
        });
    });
}

}  // namespace

void invoke(shard& home, const protocol::proxy& target, std::string_view operation, std::uint8_t mode,
            protocol::byte_view params, reply_handler done, const protocol::context& ctx) {
    if (target.endpoints.empty() && home.resolver()) {
        invoke_indirect(home, target, request_message(target, operation, mode, params, ctx), std::move(done), false);
        return;
    }
    std::string failure;
    auto backend = home.backends().get(target, failure);
    if (!backend) {
        done(nullptr, failure);
        return;
    }
    backend->invoke(request_message(target, operation, mode, params, ctx), std::move(done));
}

void invoke_and_forget(shard& home, const protocol::proxy& target, std::string_view operation,
                       const protocol::context& ctx) {
    protocol::output_stream none;
    none.write_empty_encapsulation(protocol::encoding_1_1);
    invoke(home, target, operation, 0, none.view(), [](auto*, std::string_view) {}, ctx);
}

std::optional<protocol::input_stream> results_of(const protocol::reply_view& r) {
    protocol::input_stream outer(r.payload);
    const auto encaps = outer.read_encapsulation();
    if (!outer.ok()) return std::nullopt;
    return protocol::input_stream(encaps.payload(), encaps.encoding);
}

std::optional<protocol::proxy> proxy_result(const protocol::reply_view* r) {
    if (!r || r->status != protocol::reply_status::ok) return std::nullopt;
    auto in = results_of(*r);
    if (!in) return std::nullopt;
    auto proxy = protocol::read_proxy(*in);
    if (!in->ok()) return std::nullopt;
    return proxy;
}

}  // namespace moraine::net
