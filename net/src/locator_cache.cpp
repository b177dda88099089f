#include <moraine/net/locator_cache.hpp>

namespace moraine::net {

bool locator_cache::fresh(clock::time_point stored, clock::time_point now) const noexcept {
    if (timeout_s_ < 0) return true;
    return now - stored <= std::chrono::seconds(timeout_s_);
}

const std::vector<protocol::endpoint>* locator_cache::adapter_locked(std::string_view id, clock::time_point now) const {
    auto it = adapters_.find(std::string(id));
    if (it == adapters_.end() || !fresh(it->second.stored, now)) return nullptr;
    return &it->second.value;
}

std::optional<std::vector<protocol::endpoint>> locator_cache::adapter(std::string_view id, clock::time_point now) const {
    std::lock_guard lock(mutex_);
    if (const auto* eps = adapter_locked(id, now)) return *eps;
    return std::nullopt;
}

std::optional<protocol::proxy> locator_cache::object(const protocol::identity& id, clock::time_point now) const {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(id);
    if (it == objects_.end() || !fresh(it->second.stored, now)) return std::nullopt;
    return it->second.value;
}

std::optional<std::vector<protocol::endpoint>> locator_cache::find(const protocol::proxy& p, clock::time_point now) const {
    if (!p.endpoints.empty()) return std::nullopt;
    std::lock_guard lock(mutex_);
    const std::vector<protocol::endpoint>* eps = nullptr;
    if (!p.adapter_id.empty()) {
        eps = adapter_locked(p.adapter_id, now);
    } else if (auto it = objects_.find(p.id); it != objects_.end() && fresh(it->second.stored, now)) {
        const protocol::proxy& o = it->second.value;
        if (!o.endpoints.empty()) eps = &o.endpoints;
        else if (!o.adapter_id.empty()) eps = adapter_locked(o.adapter_id, now);
    }
    if (!eps) return std::nullopt;
    return *eps;
}

void locator_cache::put_adapter(const std::string& id, std::vector<protocol::endpoint> endpoints,
                                clock::time_point now) {
    if (timeout_s_ == 0) return;  // LocatorCacheTimeout=0: every resolution asks the locator
    std::lock_guard lock(mutex_);
    adapters_.insert_or_assign(id, entry<std::vector<protocol::endpoint>>{std::move(endpoints), now});
}

void locator_cache::put_object(const protocol::identity& id, protocol::proxy p, clock::time_point now) {
    if (timeout_s_ == 0) return;
    std::lock_guard lock(mutex_);
    objects_.insert_or_assign(id, entry<protocol::proxy>{std::move(p), now});
}

void locator_cache::forget(const protocol::proxy& p) {
    std::lock_guard lock(mutex_);
    if (!p.adapter_id.empty()) {
        adapters_.erase(p.adapter_id);
        return;
    }
    auto it = objects_.find(p.id);
    if (it == objects_.end()) return;
    if (!it->second.value.adapter_id.empty()) adapters_.erase(it->second.value.adapter_id);
    objects_.erase(it);
}

std::size_t locator_cache::size() const {
    std::lock_guard lock(mutex_);
    return adapters_.size() + objects_.size();
}

}  // namespace moraine::net
