#include <moraine/router/outstanding_calls.hpp>

#include <utility>

namespace moraine::router {

std::int32_t outstanding_calls::next_id() noexcept {
    std::int32_t id;
    do {
        id = next_;
        next_ = next_ == INT32_MAX ? 1 : next_ + 1;
    } while (outstanding(id));
    return id;
}

bool outstanding_calls::outstanding(std::int32_t id) const noexcept {
    return tables_ && (tables_->callbacks.contains(id) || tables_->events.contains(id));
}

outstanding_calls::tables& outstanding_calls::made() {
    if (!tables_) tables_ = std::make_unique<tables>();
    return *tables_;
}

void outstanding_calls::add_callback(std::int32_t id, net::callback_route route) { made().callbacks.emplace(id, std::move(route)); }

void outstanding_calls::add_event(std::int32_t id, reply_done done) { made().events.emplace(id, std::move(done)); }

outstanding_calls::completion outstanding_calls::complete(std::int32_t id) {
    completion c;
    if (!tables_) return c;
    if (auto ev = tables_->events.find(id); ev != tables_->events.end()) {
        c.event = std::move(ev->second);
        tables_->events.erase(ev);
    } else if (auto cb = tables_->callbacks.find(id); cb != tables_->callbacks.end()) {
        c.callback = std::move(cb->second);
        tables_->callbacks.erase(cb);
    }
    return c;
}

std::vector<net::callback_route> outstanding_calls::take_callbacks() {
    std::vector<net::callback_route> out;
    if (!tables_) return out;
    for (auto& [id, route] : tables_->callbacks) out.push_back(std::move(route));
    tables_->callbacks.clear();
    return out;
}

std::vector<outstanding_calls::reply_done> outstanding_calls::take_events() {
    std::vector<reply_done> out;
    if (!tables_) return out;
    for (auto& [id, done] : tables_->events) out.push_back(std::move(done));
    tables_->events.clear();
    return out;
}

}  // namespace moraine::router
