#include <moraine/router/session_control.hpp>

#include <moraine/router/callback_relay.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/router/session_router.hpp>
#include <moraine/router/session_shard.hpp>

#include <algorithm>
#include <array>
#include <optional>

namespace moraine::router {

using namespace net;

namespace {

constexpr std::string_view control_suffix = ".SessionControl";
constexpr std::array<std::string_view, 2> control_ids{"::Glacier2::SessionControl", "::Ice::Object"};
constexpr std::array<std::string_view, 2> string_set_ids{"::Glacier2::StringSet", "::Ice::Object"};
constexpr std::array<std::string_view, 2> identity_set_ids{"::Glacier2::IdentitySet", "::Ice::Object"};

enum class target { control, categories, adapter_ids, identities, none };

target target_of(const config& cfg, std::string_view category) {
    const auto base = session_control_category(cfg);
    if (category == base) return target::control;
    if (category == base + ".categories") return target::categories;
    if (category == base + ".adapterIds") return target::adapter_ids;
    if (category == base + ".identities") return target::identities;
    return target::none;
}

protocol::proxy object_proxy(const std::vector<protocol::endpoint>& eps, std::string name, std::string category) {
    protocol::proxy p;
    if (eps.empty()) return p;
    p.id = {std::move(name), std::move(category)};
    p.endpoints = eps;
    return p;
}

template <class T>
void add_unique(std::vector<T>& list, T value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

template <class T>
void remove_all(std::vector<T>& list, const T& value) {
    list.erase(std::remove(list.begin(), list.end(), value), list.end());
}

/// StringSet::add/remove/get on `set`. @return the reply, or nullopt if the operation is unknown.
std::optional<protocol::byte_buffer> string_set_op(const protocol::request_view& r, std::vector<std::string>& set) {
    const auto enc = r.params.encoding;
    protocol::input_stream in(r.params.payload(), enc);
    if (r.operation == "get") {
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(set.size()));
            for (const auto& s : set) os.write_string(s);
        });
    }
    if (r.operation != "add" && r.operation != "remove") return std::nullopt;
    const auto n = in.read_size();
    std::vector<std::string> values;
    for (std::int32_t i = 0; i < n && in.ok(); ++i) values.emplace_back(in.read_string());
    if (!in.ok()) return reply_not_exist(r, protocol::reply_status::operation_not_exist);
    for (auto& v : values) r.operation == "add" ? add_unique(set, std::move(v)) : remove_all(set, v);
    return reply_void(r.request_id, enc);
}

/// IdentitySet::add/remove/get on `set`.
std::optional<protocol::byte_buffer> identity_set_op(const protocol::request_view& r,
                                                     std::vector<protocol::identity>& set) {
    const auto enc = r.params.encoding;
    protocol::input_stream in(r.params.payload(), enc);
    if (r.operation == "get") {
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(set.size()));
            for (const auto& id : set) os.write_identity(id.view());
        });
    }
    if (r.operation != "add" && r.operation != "remove") return std::nullopt;
    const auto n = in.read_size();
    std::vector<protocol::identity> values;
    for (std::int32_t i = 0; i < n && in.ok(); ++i) values.push_back(protocol::identity::from(in.read_identity()));
    if (!in.ok()) return reply_not_exist(r, protocol::reply_status::operation_not_exist);
    for (auto& v : values) r.operation == "add" ? add_unique(set, std::move(v)) : remove_all(set, v);
    return reply_void(r.request_id, enc);
}

/// SessionControl's own operations.
std::optional<protocol::byte_buffer> control_op(const protocol::request_view& r, client_connection& c) {
    const auto& cfg = c.local().cfg();
    const auto enc = r.params.encoding;
    const std::string name(r.id.name);
    const auto base = session_control_category(cfg);
    auto set_proxy = [&](std::string_view suffix) {
        const auto p = object_proxy(c.local().router().server_endpoints(), name, base + std::string(suffix));
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) { protocol::write_proxy(os, p); });
    };
    if (r.operation == "categories") return set_proxy(".categories");
    if (r.operation == "adapterIds") return set_proxy(".adapterIds");
    if (r.operation == "identities") return set_proxy(".identities");
    if (r.operation == "getSessionTimeout") {
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) {
            os.write_int(static_cast<std::int32_t>(cfg.session_timeout_s));
        });
    }
    if (r.operation == "destroy") {
        // The manager ends the session. As Glacier2 does, the connection stays open for what is
        // in flight (a routed twoway's reply still reaches the client); the client's next routed
        // request finds no session and closes it (client_connection::dispatch_request).
        auto reply = reply_void(r.request_id, enc);
        c.destroy_session();
        return reply;
    }
    return std::nullopt;
}

std::optional<protocol::byte_buffer> dispatch(const protocol::request_view& r, target t, client_connection& c) {
    auto& filters = c.session_state()->filters;
    bool malformed = false;
    std::optional<protocol::byte_buffer> reply;
    switch (t) {
    case target::control:
        reply = answer_object_op(r, control_ids, control_ids[0], malformed);
        return reply ? reply : control_op(r, c);
    case target::categories:
        reply = answer_object_op(r, string_set_ids, string_set_ids[0], malformed);
        return reply ? reply : string_set_op(r, filters.categories());
    case target::adapter_ids:
        reply = answer_object_op(r, string_set_ids, string_set_ids[0], malformed);
        return reply ? reply : string_set_op(r, filters.adapter_ids());
    case target::identities:
        reply = answer_object_op(r, identity_set_ids, identity_set_ids[0], malformed);
        return reply ? reply : identity_set_op(r, filters.identities());
    case target::none:
        break;
    }
    return std::nullopt;
}

}  // namespace

std::string session_control_category(const config& cfg) { return cfg.instance_name + std::string(control_suffix); }

bool is_session_control_category(const config& cfg, std::string_view category) noexcept {
    return category.starts_with(cfg.instance_name) && category.substr(cfg.instance_name.size()).starts_with(control_suffix);
}

protocol::proxy session_control_proxy(const config& cfg, const std::vector<protocol::endpoint>& server_endpoints,
                                      const std::string& session_category) {
    return object_proxy(server_endpoints, session_category, session_control_category(cfg));
}

void dispatch_session_control(session_shard& owner, protocol::byte_buffer message, bool twoway, callback_route route) {
    // The message goes into `call` first and is decoded there, once: `r` views call.message,
    // which stays put unless route_to_moved takes the call (then `r` is not used again).
    parked_callback call{true, std::move(message), {}, {}, twoway ? route : callback_route{}, false, false, {}};
    auto r = protocol::decode_request(protocol::byte_view(call.message).subspan(protocol::header_size));
    if (!r) return;
    r->request_id = route.request_id;
    auto* c = owner.find_session(r->id.name);
    if (!c && owner.moved().contains(r->id.name)) {
        // The session lives in the new process (takeover): its SessionControl object too.
        // Refused (too many parked), the call is left untouched and answered as for no session.
        const std::string category(r->id.name);  // r views the message, which may leave with `call`
        if (route_to_moved(owner, category, call)) return;
    }
    std::optional<protocol::byte_buffer> reply;
    if (!c || !c->session_state()) {
        reply = reply_not_exist(*r, protocol::reply_status::object_not_exist);
    } else if (!r->facet.empty()) {
        reply = reply_not_exist(*r, protocol::reply_status::facet_not_exist);
    } else {
        reply = dispatch(*r, target_of(owner.cfg(), r->id.category), *c);
        if (!reply) reply = reply_not_exist(*r, protocol::reply_status::operation_not_exist);
    }
    if (twoway) send_callback_reply(owner.io().set(), owner.io().index(), route, std::move(*reply));
}

}  // namespace moraine::router
