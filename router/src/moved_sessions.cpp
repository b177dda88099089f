#include <moraine/router/moved_sessions.hpp>

#include <utility>

namespace moraine::router {

void moved_sessions::leave(const std::string& category) { sessions_[category].taken = false; }

bool moved_sessions::contains(std::string_view category) const { return sessions_.contains(std::string(category)); }

bool moved_sessions::taken(std::string_view category) const {
    const auto it = sessions_.find(std::string(category));
    return it != sessions_.end() && it->second.taken;
}

bool moved_sessions::park(std::string_view category, parked_callback& c) {
    const auto it = sessions_.find(std::string(category));
    if (it == sessions_.end() || it->second.taken || it->second.parked.size() >= max_parked) return false;
    it->second.parked.push_back(std::move(c));
    ++parked_;
    return true;
}

std::vector<parked_callback> moved_sessions::take(std::string_view category) {
    auto& e = sessions_[std::string(category)];
    e.taken = true;
    parked_ -= e.parked.size();
    return std::exchange(e.parked, {});
}

std::vector<parked_callback> moved_sessions::come_back(std::string_view category) {
    const auto it = sessions_.find(std::string(category));
    if (it == sessions_.end()) return {};
    auto out = std::move(it->second.parked);
    parked_ -= out.size();
    sessions_.erase(it);
    return out;
}

}  // namespace moraine::router
