#pragma once
// The takeover channel's messages and their bytes (docs/takeover.md, "Wire format"): a new
// moraine-router asks the running one for its listening sockets over a Unix socket.
#include <moraine/net/descriptor_passing.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace moraine::net {

/// The format version this build writes and reads. A peer with another version is refused.
inline constexpr std::uint16_t takeover_version = 1;
/// Bytes before every message: "MRTK", the version (u16 little-endian), the message type (u8).
inline constexpr std::size_t takeover_header_bytes = 7;
/// Upper bound of one message's bytes (a listeners message with thousands of sockets fits).
inline constexpr std::size_t takeover_message_max = 1 << 20;

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

using takeover_message = std::variant<takeover_hello, takeover_listeners, takeover_descriptors, takeover_accept,
                                      takeover_refuse, takeover_released>;

/// The bytes of `m`, header included (at most takeover_message_max).
std::vector<std::byte> encode_takeover(const takeover_message& m);

/** Reads one message. @throws channel_error naming what is wrong: not "MRTK" (not a takeover
    peer), another format version (a refusal is read whatever its version), an unknown type,
    a truncated message or bytes left over, a string or count out of bounds. */
takeover_message decode_takeover(std::span<const std::byte> bytes);

/// The message's type for errors and logs: "hello", "listeners", ...
const char* takeover_name(const takeover_message& m) noexcept;

}  // namespace moraine::net
