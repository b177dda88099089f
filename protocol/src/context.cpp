// Ice::Context lookups (docs/ice-wire.md §1).
#include <moraine/protocol/context.hpp>

namespace moraine::protocol {

std::optional<std::string_view> context_view::find(std::string_view key) const noexcept {
    // A duplicated key is legal on the wire; Ice's map unmarshaling keeps the last value.
    std::optional<std::string_view> found;
    for (const auto& [k, v] : entries)
        if (k == key) found = v;
    return found;
}

}  // namespace moraine::protocol
