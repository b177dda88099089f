#include <moraine/net/locator_cache.hpp>

namespace moraine::net {

bool locator_cache::fresh(clock::time_point stored, clock::time_point now) const noexcept {
    if (timeout_s_ < 0) return true;
    return now - stored <= std::chrono::seconds(timeout_s_);
}

const std::vector<protocol::endpoint>* locator_cache::adapter(std::string_view id, clock::time_point now) const {
    auto it = adapters_.find(std::string(id));
    if (it == adapters_.end() || !fresh(it->second.stored, now)) return nullptr;
    return &it->second.value;
}

const protocol::proxy* locator_cache::object(const protocol::identity& id, clock::time_point now) const {
    auto it = objects_.find(id);
    if (it == objects_.end() || !fresh(it->second.stored, now)) return nullptr;
    return &it->second.value;
}

const std::vector<protocol::endpoint>* locator_cache::find(const protocol::proxy& p, clock::time_point now) const {
    if (!p.endpoints.empty()) return nullptr;
    if (!p.adapter_id.empty()) return adapter(p.adapter_id, now);
    const protocol::proxy* o = object(p.id, now);
    if (!o) return nullptr;
    if (!o->endpoints.empty()) return &o->endpoints;
    return o->adapter_id.empty() ? nullptr : adapter(o->adapter_id, now);
}

void locator_cache::put_adapter(const std::string& id, std::vector<protocol::endpoint> endpoints,
                                clock::time_point now) {
    if (timeout_s_ == 0) return;  // LocatorCacheTimeout=0: every resolution asks the locator
    adapters_.insert_or_assign(id, entry<std::vector<protocol::endpoint>>{std::move(endpoints), now});
}

void locator_cache::put_object(const protocol::identity& id, protocol::proxy p, clock::time_point now) {
    if (timeout_s_ == 0) return;
    objects_.insert_or_assign(id, entry<protocol::proxy>{std::move(p), now});
}

void locator_cache::forget(const protocol::proxy& p) {
    if (!p.adapter_id.empty()) {
        adapters_.erase(p.adapter_id);
        return;
    }
    auto it = objects_.find(p.id);
    if (it == objects_.end()) return;
    if (!it->second.value.adapter_id.empty()) adapters_.erase(it->second.value.adapter_id);
    objects_.erase(it);
}

}  // namespace moraine::net
