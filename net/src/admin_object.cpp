// The Ice admin object and its Process and Properties facets (see admin_object.hpp);
// IceBox.ServiceManager is in admin_service_manager.cpp.
#include <moraine/net/admin_object.hpp>

#include <moraine/net/ice_connection.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>
#include <iostream>
#include <random>

namespace moraine::net {

namespace {

// Type ids, sorted as ice_ids returns them.
constexpr std::array<std::string_view, 2> process_ids{"::Ice::Object", "::Ice::Process"};
constexpr std::array<std::string_view, 2> properties_ids{"::Ice::Object", "::Ice::PropertiesAdmin"};

/// A UUID-like name, as Ice makes one up for an admin object without Ice.Admin.InstanceName.
std::string made_up_instance_name() {
    std::random_device rd;
    char text[37];
    std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%04x%08x", rd(), rd() & 0xffff, (rd() & 0x0fff) | 0x4000,
                  (rd() & 0x3fff) | 0x8000, rd() & 0xffff, rd());
    return text;
}

/// Splits Ice.Admin.Facets: names separated by commas or whitespace.
std::vector<std::string> facet_list(const std::string& value) {
    std::vector<std::string> out;
    std::string word;
    for (char c : value + " ") {
        if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
            if (!word.empty()) out.push_back(std::move(word));
            word.clear();
        } else {
            word += c;
        }
    }
    return out;
}

/// A connection accepted on Ice.Admin.Endpoints: every request goes to the admin object.
class admin_connection final : public ice_connection {
public:
    admin_connection(shard& home, transport socket, admin_object& admin)
        : ice_connection(home, std::move(socket)), admin_(admin) {}

    void start() { start_accepted(); }

private:
    bool on_frame(const protocol::frame_view& frame) override {
        using protocol::message_type;
        switch (frame.header.type) {
        case message_type::request:
        case message_type::batch_request:
            // After Process::shutdown the object is gone, as an Ice server's adapters are once
            // its communicator shuts down: a later request fails (ConnectionLostException).
            if (admin_.shut_down()) {
                close(close_reason::shutdown, "admin object shut down");
                return false;
            }
            return for_each_request(frame, [&](const protocol::request_view& r) {
                if (auto reply = admin_.dispatch(r); reply && r.request_id != 0) enqueue(std::move(*reply));
                if (!admin_.shut_down()) return true;
                close_gracefully();  // the shutdown's reply, then Ice's close-connection message
                return false;
            });
        case message_type::close_connection:
            close(close_reason::peer_closed, "peer closed the connection");
            return false;
        default:
            return true;
        }
    }
    void on_closed(std::string_view why) override { spdlog::debug("admin connection closed: {}", why); }

    admin_object& admin_;
};

}  // namespace

bool admin_config::serves(std::string_view facet) const {
    return facets.empty() || std::find(facets.begin(), facets.end(), facet) != facets.end();
}

admin_config read_admin_config(const property_file& p) {
    admin_config c;
    c.endpoints = p.endpoints("Ice.Admin.Endpoints");
    c.enabled = !c.endpoints.empty();
    p.read_bool("Ice.Admin.Enabled", c.enabled);
    if (c.enabled && c.endpoints.empty())
        throw config_error(p.at("Ice.Admin.Enabled"), "Ice.Admin.Enabled",
                           "the admin object needs Ice.Admin.Endpoints to be reachable");
    if (const std::string* v = p.find("Ice.Admin.InstanceName")) c.instance_name = *v;
    if (const std::string* v = p.find("Ice.Admin.ServerId")) c.server_id = *v;
    if (const std::string* v = p.find("Ice.Admin.Facets")) c.facets = facet_list(*v);
    if (c.enabled && c.instance_name.empty()) c.instance_name = made_up_instance_name();
    return c;
}

admin_object::admin_object(shard_set& shards, admin_config cfg, admin_hooks hooks)
    : shards_(shards), cfg_(std::move(cfg)), hooks_(std::move(hooks)) {}

std::vector<protocol::endpoint> admin_object::start() {
    auto bound = shards_.listen("Ice.Admin", cfg_.endpoints, [this](shard& sh, transport s) {
        std::make_shared<admin_connection>(sh, std::move(s), *this)->start();
    });
    proxy_.id = {"admin", cfg_.instance_name};
    proxy_.endpoints = bound;
    spdlog::info("admin object {}", protocol::proxy_to_string(proxy_));
    return bound;
}

std::optional<protocol::byte_buffer> admin_object::dispatch(const protocol::request_view& r) {
    if (r.id.name != "admin" || r.id.category != cfg_.instance_name)
        return reply_not_exist(r, protocol::reply_status::object_not_exist);
    const bool known = r.facet == "Process" || r.facet == "Properties" ||
                       (r.facet == "IceBox.ServiceManager" && !hooks_.services.empty());
    if (!known || !cfg_.serves(r.facet)) return reply_not_exist(r, protocol::reply_status::facet_not_exist);
    if (r.facet == "Process") return process_op(r);
    if (r.facet == "Properties") return properties_op(r);
    return service_manager_op(r);
}

protocol::byte_buffer admin_object::shut_down(const protocol::request_view& r, std::string_view what) {
    spdlog::info("admin: {}", what);
    auto reply = reply_void(r.request_id, r.params.encoding);
    shut_down_.store(true, std::memory_order_relaxed);
    hooks_.shutdown();
    return reply;
}

std::optional<protocol::byte_buffer> admin_object::process_op(const protocol::request_view& r) {
    bool malformed = false;
    if (auto reply = answer_object_op(r, process_ids, process_ids[1], malformed)) return reply;
    protocol::input_stream in(r.params.payload(), r.params.encoding);
    if (r.operation == "shutdown") return shut_down(r, "Process::shutdown");
    if (r.operation == "writeMessage") {
        const std::string message(in.read_string());
        const auto fd = in.read_int();
        if (!in.ok() || malformed) return reply_unknown_local(r.request_id, "::Ice::MarshalException");
        (fd == 2 ? std::cerr : std::cout) << message << std::endl;
        return reply_void(r.request_id, r.params.encoding);
    }
    return reply_not_exist(r, protocol::reply_status::operation_not_exist);
}

std::optional<protocol::byte_buffer> admin_object::properties_op(const protocol::request_view& r) {
    bool malformed = false;
    if (auto reply = answer_object_op(r, properties_ids, properties_ids[1], malformed)) return reply;
    const auto enc = r.params.encoding;
    protocol::input_stream in(r.params.payload(), enc);
    if (r.operation == "getProperty") {
        const std::string key(in.read_string());
        if (!in.ok()) return reply_unknown_local(r.request_id, "::Ice::MarshalException");
        const auto all = hooks_.properties();
        const auto it = all.find(key);
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) {
            os.write_string(it == all.end() ? std::string_view() : std::string_view(it->second));
        });
    }
    if (r.operation == "getPropertiesForPrefix") {
        const std::string prefix(in.read_string());
        if (!in.ok()) return reply_unknown_local(r.request_id, "::Ice::MarshalException");
        std::map<std::string, std::string> matching;
        for (const auto& [k, v] : hooks_.properties())
            if (k.starts_with(prefix)) matching.emplace(k, v);
        return reply_ok(r.request_id, enc, [&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(matching.size()));
            for (const auto& [k, v] : matching) {
                os.write_string(k);
                os.write_string(v);
            }
        });
    }
    if (r.operation == "setProperties") {
        std::map<std::string, std::string> changes;
        const auto n = in.read_size();
        for (std::int32_t i = 0; i < n && in.ok(); ++i) {
            std::string k(in.read_string());
            changes[std::move(k)] = std::string(in.read_string());
        }
        if (!in.ok()) return reply_unknown_local(r.request_id, "::Ice::MarshalException");
        spdlog::info("admin: PropertiesAdmin::setProperties ({} key(s))", changes.size());
        hooks_.set_properties(std::move(changes));
        return reply_void(r.request_id, enc);
    }
    return reply_not_exist(r, protocol::reply_status::operation_not_exist);
}

}  // namespace moraine::net
