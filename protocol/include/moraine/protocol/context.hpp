#pragma once
// Ice::Context (dictionary<string,string>, docs/ice-wire.md §1).
#include <moraine/protocol/bytes.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moraine::protocol {

/// A decoded context. A loan of the message bytes (`raw` covers the size and all pairs, so a
/// forwarder copies it verbatim).
struct context_view {
    byte_view raw;  ///< the encoded dictionary, count included; "00" when empty
    std::vector<std::pair<std::string_view, std::string_view>> entries;
    bool empty() const noexcept { return entries.empty(); }
    /// The value for `key`, if present (linear scan: contexts are tiny).
    std::optional<std::string_view> find(std::string_view key) const noexcept;
};

/// An owned context, in wire order.
using context = std::vector<std::pair<std::string, std::string>>;

}  // namespace moraine::protocol
