#pragma once
// A shard's back-end connections, one per endpoint (host:port).
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/backend_connection.hpp>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace moraine::net {

class shard;

/// Back-end connections of one shard, keyed by endpoint; shard-local.
class backend_pool {
public:
    explicit backend_pool(shard& home) : home_(home) {}

    /** The connection for proxy `p`: its first tcp endpoint, or ssl with TLS configured
        (connected lazily, shared by every session of the shard); with `secure_only` (Glacier2's
        `_fwd=s`), its first ssl endpoint. An endpoint this process serves under another
        address (runtime_config::endpoint_aliases) connects to its bound address. @return nullptr with `failure` set (Ice's
        NoEndpointException text) if `p` has no usable endpoint. */
    std::shared_ptr<backend_connection> get(const protocol::proxy& p, std::string& failure, bool secure_only = false);

    /// Called by a connection that closed, so the next request reconnects.
    void remove(const std::string& key, const backend_connection* c) noexcept;

    /// Closes every connection (shard shutdown).
    void close_all();

    std::size_t size() const noexcept { return connections_.size(); }
    /// Twoway requests sent on this shard's back-end connections and not yet answered.
    std::size_t in_flight() const noexcept;

private:
    shard& home_;
    std::unordered_map<std::string, std::shared_ptr<backend_connection>> connections_;
};

/// The failure text Ice gives (as an UnknownLocalException) for a proxy with no endpoint it can use.
std::string no_endpoint_text(const protocol::proxy& p);

/** Invokes `operation` on `target` from the router itself (PermissionsVerifier, SessionManager,
    Session::destroy): a twoway request with context `ctx` (empty unless given) and `params` (a
    whole encapsulation). `done` runs on this shard with the reply or a failure text. */
void invoke(shard& home, const protocol::proxy& target, std::string_view operation, std::uint8_t mode,
            protocol::byte_view params, reply_handler done, const protocol::context& ctx = {});

/// Invokes a parameterless operation on `target` (mode normal) and ignores the answer:
/// Session::destroy on an external SessionManager's session.
void invoke_and_forget(shard& home, const protocol::proxy& target, std::string_view operation,
                       const protocol::context& ctx = {});

/// The results encapsulation of reply `r` as a stream in its own encoding (whatever the status);
/// nullopt if the payload is not a well-formed encapsulation.
std::optional<protocol::input_stream> results_of(const protocol::reply_view& r);

/// The proxy an OK reply returns (an `Object*` result, e.g. SessionManager::create,
/// Topic::getPublisher); nullopt for a failure, another status or malformed results.
std::optional<protocol::proxy> proxy_result(const protocol::reply_view* r);

}  // namespace moraine::net
