#pragma once
// Appending a byte view to a buffer: shared by the request and reply encoders.
#include <moraine/protocol/bytes.hpp>

namespace moraine::protocol::detail {

inline void append_bytes(byte_buffer& out, byte_view b) { out.insert(out.end(), b.begin(), b.end()); }

}  // namespace moraine::protocol::detail
