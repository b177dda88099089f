#pragma once
// Counting the TLS records in captured wire bytes (tests only; RFC 8446 §5.1: a 5-byte header
// whose last two bytes are the length of what follows).
#include <moraine/protocol/bytes.hpp>

#include <cstddef>

namespace moraine::transport::test {

/// The number of TLS records in `wire`, or -1 if it does not end on a record boundary.
inline int record_count(protocol::byte_view wire) {
    std::size_t pos = 0;
    int n = 0;
    while (pos + 5 <= wire.size()) {
        pos += 5 + ((std::to_integer<std::size_t>(wire[pos + 3]) << 8) | std::to_integer<std::size_t>(wire[pos + 4]));
        ++n;
    }
    return pos == wire.size() ? n : -1;
}

}  // namespace moraine::transport::test
