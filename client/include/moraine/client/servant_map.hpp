#pragma once
// Servants of one session, by name within the session category. Pure: no I/O.
#include <moraine/client/servant.hpp>

#include <map>
#include <string>
#include <string_view>

namespace moraine::client {

/// The object adapter of a routed client, reduced to a name → servant table. Only requests
/// whose category is the session category reach a servant (docs/glacier2.md §6).
class servant_map {
public:
    /// Registers (or replaces) the servant for identity `<category>/name`.
    void add(std::string name, servant s);
    /// Removes it. @return true if there was one.
    bool remove(std::string_view name);
    /// Dispatches `r` for a session of category `category`: wrong category or unknown name →
    /// ObjectNotExist; non-empty facet → FacetNotExist; `ice_ping` → OK (void); otherwise the
    /// servant's answer (UnknownException with the text if it throws).
    dispatch_result dispatch(std::string_view category, const incoming_request& r) const;
    bool empty() const noexcept { return servants_.empty(); }

private:
    std::map<std::string, servant, std::less<>> servants_;
};

}  // namespace moraine::client
