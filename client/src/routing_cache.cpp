#include <moraine/client/routing_cache.hpp>

namespace moraine::client {

routing_cache::state routing_cache::find(protocol::identity_view id) const noexcept {
    const auto it = entries_.find(id);
    return it == entries_.end() ? state::absent : it->second;
}

bool routing_cache::begin_add(const protocol::identity& id) {
    return entries_.try_emplace(id, state::adding).second;
}

void routing_cache::add_done(protocol::identity_view id, bool ok) {
    const auto it = entries_.find(id);
    if (it == entries_.end()) return;  // forgotten meanwhile: stays absent
    if (ok)
        it->second = state::added;
    else
        entries_.erase(it);
}

void routing_cache::forget(protocol::identity_view id) noexcept {
    const auto it = entries_.find(id);
    if (it != entries_.end()) entries_.erase(it);
}

void routing_cache::evict(std::span<const protocol::proxy> evicted) noexcept {
    for (const auto& p : evicted) forget(p.id.view());
}

}  // namespace moraine::client
