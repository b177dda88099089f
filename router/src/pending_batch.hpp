#pragma once
// One batch request message being built for a peer (buffered mode: docs/architecture.md,
// "Buffered mode"); private to the router's forwarding code.
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/request.hpp>

#include <cstddef>

namespace moraine::router {

/// One batch message being built, cut before it passes `limit` bytes (batch_size_max, as Ice's
/// auto-flush; a datagram's size for a batch datagram) and compressed for the peer when any of
/// its requests asked for it (`_fwd=z`).
class pending_batch {
public:
    explicit pending_batch(std::size_t limit = protocol::batch_size_max) : limit_(limit) {}
    /// Adds `message` (a whole request message). @return the batch so far when `message` would
    /// take it past the limit: send it first; else an empty buffer.
    protocol::byte_buffer add(const protocol::byte_buffer& message, bool compress) {
        protocol::byte_buffer full;
        if (!builder_.empty() && builder_.size_with(message) > limit_) full = finish();
        builder_.add(message);
        compress_ = compress_ || compress;
        return full;
    }
    bool empty() const noexcept { return builder_.empty(); }
    /// The batch message; the builder starts afresh.
    protocol::byte_buffer finish() {
        auto message = builder_.finish();
        if (compress_) protocol::compress_for_peer(message);
        compress_ = false;
        return message;
    }

private:
    protocol::batch_builder builder_;
    std::size_t limit_;
    bool compress_ = false;
};

}  // namespace moraine::router
