#pragma once
// The takeover channel's messages and their bytes (docs/takeover.md, "Wire format"): a new
// moraine-router asks the running one for its listening sockets over a Unix socket.
#include <moraine/net/descriptor_passing.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace moraine::net {

/// The format version this build writes and reads. A peer with another version is refused.
/// Version 2 added the session messages (phase 2a: established sessions move); version 3 the
/// topic service's messages (its catalog and its connections move).
inline constexpr std::uint16_t takeover_version = 3;
/// Bytes before every message: "MRTK", the version (u16 little-endian), the message type (u8).
inline constexpr std::size_t takeover_header_bytes = 7;
/// Upper bound of one message's bytes (a listeners message with thousands of sockets fits).
inline constexpr std::size_t takeover_message_max = 1 << 20;
/// Upper bound of one takeover_topics part: a catalog is cut into parts of at most this many
/// bytes. Far below the largest packet a Unix socket takes with Linux's default buffer size
/// (net.core.wmem_default, 208 KiB), which bounds one message whatever takeover_message_max says.
inline constexpr std::size_t takeover_topics_part_max = 64 * 1024;

/// Which configured endpoint a listening socket serves: the same three values in the old and
/// the new process mean the same socket.
struct listener_id {
    std::string adapter;        ///< the configuration's name for the endpoint list: "Glacier2.Client", ...
    std::string endpoint;       ///< the endpoint as configured (protocol::endpoint_to_string), port 0 included
    std::uint32_t ordinal = 0;  ///< 0, or n for the n+1-th identical (adapter, endpoint) pair
    bool operator==(const listener_id&) const = default;
    auto operator<=>(const listener_id&) const = default;
};

/// Whether a listening socket accepts connections (tcp, ssl, ws, wss) or receives datagrams (udp).
enum class socket_kind : std::uint8_t { stream = 0, datagram = 1 };

/// One listening socket of the running process: what it serves, where it is bound, which shard has it.
struct listener_record {
    listener_id id;
    std::string bound;       ///< the endpoint as bound (real port), for logs and checks
    std::uint32_t shard = 0; ///< the shard that accepts on it in the running process
    socket_kind kind = socket_kind::stream;
    bool operator==(const listener_record&) const = default;
};

/// New → old: "hand me your listeners". `program` and `pid` are for the old process's log.
struct takeover_hello {
    std::string program;
    std::uint32_t pid = 0;
    bool operator==(const takeover_hello&) const = default;
};

/// Old → new: every listening socket, in the order their descriptors follow (descriptor batches).
struct takeover_listeners {
    std::string program;
    std::uint32_t pid = 0;
    std::vector<listener_record> sockets;
    bool operator==(const takeover_listeners&) const = default;
};

/// Old → new: `count` descriptors attached (SCM_RIGHTS), for sockets[first .. first+count).
struct takeover_descriptors {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    bool operator==(const takeover_descriptors&) const = default;
};

/// New → old: every socket is adopted and accepting; the old process may stop accepting.
struct takeover_accept {
    std::uint32_t adopted = 0;
    bool operator==(const takeover_accept&) const = default;
};

/// Either way: no takeover, and why. The old process goes on serving. Its bytes are the same in
/// every format version, so each side can read the other's refusal.
struct takeover_refuse {
    std::string reason;
    bool operator==(const takeover_refuse&) const = default;
};

/// Old → new: its copies are closed; `sessions` still open will be drained by the old process.
struct takeover_released {
    std::uint32_t closed = 0;
    std::uint32_t sessions = 0;
    bool operator==(const takeover_released&) const = default;
};

/// A `_con.*`-style context entry: key and value.
using context_entry = std::pair<std::string, std::string>;

/// How a moved connection's bytes travel; only tcp moves in phase 2a.
enum class session_transport : std::uint8_t { tcp = 0, ws = 1 };

/** Old → new, with the client connection's descriptor attached (SCM_RIGHTS, exactly one): an
    established Glacier2 session at a message boundary. Proxies travel as Ice encoding 1.1 writes
    them (write_proxy), so net needs no knowledge of them; empty bytes mean "none". */
struct takeover_session {
    std::uint32_t serial = 0;  ///< numbers the sessions of one channel; the answer names it
    session_transport transport = session_transport::tcp;
    std::string category;      ///< the session's callback category (20 characters)
    std::string user_id;
    std::string control_name;  ///< the SessionControl object's name; empty without a SessionManager
    std::vector<std::byte> session_proxy;  ///< the Session* a SessionManager returned, encoded; empty: none
    std::vector<context_entry> connection_context;  ///< the `_con.*` entries as the old process built them
    std::uint32_t routes_max = 0;  ///< Glacier2.RoutingTable.MaxSize the table was made with (0: unbounded)
    std::vector<std::vector<std::byte>> routes;  ///< addProxies' proxies, encoded, least recently used first
    std::vector<std::string> filter_categories;   ///< SessionControl categories() contents
    std::vector<std::string> filter_adapter_ids;  ///< SessionControl adapterIds() contents
    std::vector<std::string> filter_identities;   ///< SessionControl identities(), each as identity_to_string
    std::uint32_t idle_ms = 0;  ///< since the client last sent a byte: the ACM timer's state (time left = timeout - idle)
    std::vector<std::byte> pending;  ///< bytes read from the socket but not yet dispatched (a partial message)
    bool operator==(const takeover_session&) const = default;
};

/// New → old: the session `serial` is adopted; the old process closes its copy and forgets it.
struct takeover_session_taken {
    std::uint32_t serial = 0;
    bool operator==(const takeover_session_taken&) const = default;
};

/// New → old: the session `serial` cannot be honoured (`reason`); it stays in the old process.
struct takeover_session_refused {
    std::uint32_t serial = 0;
    std::string reason;
    bool operator==(const takeover_session_refused&) const = default;
};

/// Old → new: no more sessions come; `moved` were taken, `stayed` remain with the old process.
struct takeover_sessions_done {
    std::uint32_t moved = 0;
    std::uint32_t stayed = 0;
    bool operator==(const takeover_sessions_done&) const = default;
};

/** Old → new, before any session: one part of the embedded topic service's catalog (topics,
    subscribers with their QoS, links), in the topic service's own encoding, which the channel
    does not read. A catalog larger than one message comes in several parts; `last` marks the end. */
struct takeover_topics {
    std::vector<std::byte> part;
    bool last = true;
    bool operator==(const takeover_topics&) const = default;
};

/** Old → new, with the connection's descriptor attached (exactly one): a connection accepted on
    a TopicManager (`publish_side` false) or Publish endpoint, its reading stopped. `pending` is
    a partial Ice message read but not yet dispatched; it goes first. No answer: the new process
    serves it or closes it. */
struct takeover_topic_connection {
    bool publish_side = false;
    session_transport transport = session_transport::tcp;
    std::uint32_t idle_ms = 0;
    std::vector<std::byte> pending;
    bool operator==(const takeover_topic_connection&) const = default;
};

/// Old → new: the topic service's move is over; `connections` topic connections were sent
/// (`moved` false: the topic service stays with the old process, and none were).
struct takeover_topics_done {
    bool moved = false;
    std::uint32_t connections = 0;
    bool operator==(const takeover_topics_done&) const = default;
};

using takeover_message = std::variant<takeover_hello, takeover_listeners, takeover_descriptors, takeover_accept,
                                      takeover_refuse, takeover_released, takeover_session, takeover_session_taken,
                                      takeover_session_refused, takeover_sessions_done, takeover_topics,
                                      takeover_topic_connection, takeover_topics_done>;

/// The bytes of `m`, header included (at most takeover_message_max).
std::vector<std::byte> encode_takeover(const takeover_message& m);

/** Sends `m` (encode_takeover) as one packet on the takeover socket `sock`, with `fds` attached
    as send_packet attaches them. The one sender of both sides, the running router's and the new
    one's. @throws channel_error as send_packet does. */
void send_takeover(int sock, const takeover_message& m, std::span<const int> fds = {});

/** Reads one message. @throws channel_error naming what is wrong: not "MRTK" (not a takeover
    peer), another format version (a refusal is read whatever its version), an unknown type,
    a truncated message or bytes left over, a string, byte field or count out of bounds, an
    unknown session transport, a boolean that is neither 0 nor 1. */
takeover_message decode_takeover(std::span<const std::byte> bytes);

/// The message's type for errors and logs: "hello", "listeners", ...
const char* takeover_name(const takeover_message& m) noexcept;

}  // namespace moraine::net
