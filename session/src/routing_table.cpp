// A session's routing table (Glacier2.RoutingTable.MaxSize), LRU-evicted.
#include <moraine/session/routing_table.hpp>

#include <utility>

namespace moraine::session {
namespace {

// What a routed request needs from an added proxy: where to send it. The request itself carries
// facet and mode, so those (and secure) are dropped as Glacier2 does (docs/glacier2.md §5).
protocol::proxy stripped(const protocol::proxy& p) {
    protocol::proxy out = p;
    out.facet.clear();
    out.mode = static_cast<std::uint8_t>(protocol::proxy_mode::twoway);
    out.secure = false;
    return out;
}

}  // namespace

routing_table::routing_table(std::size_t max_size) : max_size_(max_size) {}

std::vector<protocol::proxy> routing_table::add(const std::vector<protocol::proxy>& proxies) {
    for (const auto& p : proxies) {
        if (p.is_nil()) continue;
        if (auto found = map_.find(p.id.view()); found != map_.end()) {
            // First add wins: the stored endpoints stay, only the LRU position changes.
            lru_.splice(lru_.begin(), lru_, found->second);
            continue;
        }
        lru_.push_front(stripped(p));
        map_.emplace(lru_.front().id, lru_.begin());
    }

    // Evict only after the whole batch, so an entry the same call refreshed is not thrown out
    // and handed back to the client as evicted.
    std::vector<protocol::proxy> evicted;
    while (max_size_ != 0 && map_.size() > max_size_) {
        map_.erase(lru_.back().id);
        evicted.push_back(std::move(lru_.back()));
        lru_.pop_back();
    }
    return evicted;
}

const protocol::proxy* routing_table::find(protocol::identity_view id) {
    auto found = map_.find(id);
    if (found == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, found->second);  // iterators stay valid across splice
    return &*found->second;
}

}  // namespace moraine::session
