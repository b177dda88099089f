#pragma once
// The two Ice::Locator operations the router calls to resolve indirect proxies, as bytes:
// their parameters, their replies, and the failure texts a client gets (docs/transports.md §2).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/reply.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace moraine::net {

/// `idempotent Object* Ice::Locator::findAdapterById(string id)`; sent with mode 1 (nonmutating),
/// as glacier2router 3.7 does (docs/transports.md §2.2).
inline constexpr std::string_view find_adapter_operation = "findAdapterById";
/// `idempotent Object* Ice::Locator::findObjectById(Identity id)`; mode 1 as well.
inline constexpr std::string_view find_object_operation = "findObjectById";
/// The operation-mode byte of both finds (1: nonmutating, docs/transports.md §2.2).
inline constexpr std::uint8_t locator_find_mode = 1;

/// The parameters of findAdapterById: a whole encoding-1.1 encapsulation holding the string `adapter_id`.
protocol::byte_buffer find_adapter_params(std::string_view adapter_id);

/// The parameters of findObjectById: a whole encoding-1.1 encapsulation holding identity `id`.
protocol::byte_buffer find_object_params(protocol::identity_view id);

/// What a find returned: the proxy (never nil), or why there is none, as the text of the
/// UnknownLocalException the client gets.
struct locator_answer {
    std::optional<protocol::proxy> proxy;
    std::string failure;  ///< set when proxy is empty
};

/** Reads the reply to findAdapterById(`adapter_id`): an OK reply with a non-nil proxy is the
    answer. AdapterNotFoundException, or a nil proxy (an adapter known but not active), become
    adapter_not_registered_text; a failed call (`reply` null) keeps `failure`, the connection's
    text; anything else (another status, malformed results) gets a text naming the locator's answer. */
locator_answer read_find_adapter_reply(const protocol::reply_view* reply, std::string_view failure,
                                       std::string_view adapter_id);

/// As read_find_adapter_reply, for findObjectById(`id`): ObjectNotFoundException or a nil proxy
/// become object_not_registered_text.
locator_answer read_find_object_reply(const protocol::reply_view* reply, std::string_view failure,
                                      const protocol::identity& id);

/// glacier2router's text for an adapter id its locator does not know (observed, docs/transports.md §2.2).
std::string adapter_not_registered_text(std::string_view adapter_id);

/// glacier2router's text for a well-known object its locator does not know (observed, docs/transports.md §2.2).
std::string object_not_registered_text(const protocol::identity& id);

}  // namespace moraine::net
