#pragma once
// Messages with descriptors attached (SCM_RIGHTS) over a Unix SOCK_SEQPACKET socket: the
// transport of the takeover channel (docs/takeover.md). Seqpacket keeps message boundaries, so
// each message arrives whole with exactly the descriptors sent with it.
#include <moraine/net/unique_fd.hpp>

#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace moraine::net {

/// A takeover channel failed: the peer sent something wrong (garbage, wrong version, too many
/// descriptors), said no, closed, or did not answer in time. what() says which, for the log.
class channel_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Descriptors one message may carry: below the kernel's SCM_MAX_FD (253).
inline constexpr std::size_t max_fds_per_packet = 64;

/// One message as received: its bytes and the descriptors that came with it, owned.
struct packet {
    std::vector<std::byte> bytes;
    std::vector<unique_fd> fds;
};

/** Sends `bytes` as one message on the SOCK_SEQPACKET socket `sock`, with `fds` attached
    (SCM_RIGHTS: the receiver gets its own descriptors for the same open sockets; ours stay
    open). Blocks at most as long as the socket's SO_SNDTIMEO.
    @throws channel_error if the kernel refuses it (peer gone, timeout) or `fds` has more than
    max_fds_per_packet descriptors. */
void send_packet(int sock, std::span<const std::byte> bytes, std::span<const int> fds = {});

/** Receives one message of at most `max_bytes` bytes and `max_fds` descriptors (each marked
    close-on-exec). Waits at most `timeout`, and gives up early if `cancel` (a descriptor; -1 for
    none) becomes readable. Every descriptor received is owned by the result or, on an error,
    already closed: none leaks.
    @throws channel_error if the peer closed, the wait ended, or the message was longer or carried
    more descriptors than allowed. */
packet receive_packet(int sock, std::size_t max_bytes, std::size_t max_fds, std::chrono::milliseconds timeout,
                      int cancel = -1);

}  // namespace moraine::net
