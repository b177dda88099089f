#include <moraine/client/servant_map.hpp>

#include <exception>

namespace moraine::client {

void servant_map::add(std::string name, servant s) { servants_.insert_or_assign(std::move(name), std::move(s)); }

bool servant_map::remove(std::string_view name) {
    const auto it = servants_.find(name);
    if (it == servants_.end()) return false;
    servants_.erase(it);
    return true;
}

dispatch_result servant_map::dispatch(std::string_view category, const incoming_request& r) const {
    using protocol::reply_status;
    const auto it = r.id.category == category ? servants_.find(r.id.name) : servants_.end();
    if (it == servants_.end()) return dispatch_result::not_exist(reply_status::object_not_exist);
    if (!r.facet.empty()) return dispatch_result::not_exist(reply_status::facet_not_exist);
    if (r.operation == "ice_ping") return dispatch_result::ok();
    try {
        return it->second(r);
    } catch (const std::exception& e) {
        return dispatch_result::unknown(reply_status::unknown_exception, e.what());
    } catch (...) {
        return dispatch_result::unknown(reply_status::unknown_exception, "unknown C++ exception");
    }
}

}  // namespace moraine::client
