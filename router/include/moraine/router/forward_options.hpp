#pragma once
// How a routed request leaves the router: Glacier2's `_fwd` and `_ovrd` context entries
// (docs/glacier2.md §5).
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/identity.hpp>

#include <string>
#include <string_view>

namespace moraine::router {

/// The invocation mode a request is forwarded with.
enum class forward_kind {
    twoway,          ///< a reply is expected and relayed
    oneway,          ///< request id 0, sent at once (in buffered mode: at the next flush)
    batch_oneway,    ///< request id 0, sent in one batch message with the others queued for the same peer
    datagram,        ///< request id 0, one datagram to the peer's udp endpoint (none: lost, as in Glacier2)
    batch_datagram,  ///< request id 0, in one batch datagram with the others queued for the same proxy
};

/// What the request's own kind and its `_fwd` letters ask for.
struct forward_options {
    forward_kind kind = forward_kind::twoway;
    bool secure = false;    ///< `s`: only a TLS connection may carry it
    bool compress = false;  ///< `z`: compress it when large enough (>= 100 bytes, as Ice)
    std::string unknown;    ///< letters Glacier2 does not know: logged and ignored

    bool is_twoway() const noexcept { return kind == forward_kind::twoway; }
    bool is_batch() const noexcept { return kind == forward_kind::batch_oneway || kind == forward_kind::batch_datagram; }
    bool is_datagram() const noexcept { return kind == forward_kind::datagram || kind == forward_kind::batch_datagram; }
};

/** Glacier2's rule for one direction: a request with id 0 goes oneway (batch oneway when
    `buffered && always_batch`), any other twoway; then each `_fwd` letter in order overrides:
    `t` twoway, `o` oneway (batch when buffered and always_batch), `d` datagram (likewise), `O`
    batch oneway and `D` batch datagram (plain oneway/datagram when not buffered), `s` secure,
    `z` compress. Batches exist only in buffered mode. */
forward_options decide_forward(bool twoway, const protocol::context_view& ctx, bool buffered, bool always_batch);

/** Names the proxy a request leaves on, as Ice compares proxies: identity, facet, how it is
    forwarded and the peer (`where`). Batch oneways for one such proxy share a batch message. */
std::string target_key(const protocol::identity_view& id, std::string_view facet, const forward_options& how,
                       std::string_view where);

/** The key under which a queued request overrides an older one (buffered mode): empty unless
    the request is not twoway and carries a non-empty `_ovrd` value; otherwise that value and the
    target_key, so only a request for the same proxy with the same value is replaced, as Glacier2 does. */
std::string override_key(const protocol::context_view& ctx, const protocol::identity_view& id, std::string_view facet,
                         const forward_options& how, std::string_view where);

}  // namespace moraine::router
