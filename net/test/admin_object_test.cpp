// The admin object's facets, driven through dispatch() without sockets: asserted replies and hooks.
#include <moraine/net/admin_object.hpp>
#include <moraine/net/config_error.hpp>
#include <moraine/net/runtime_config.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

using writer = std::function<void(protocol::output_stream&)>;

/// A twoway request (id 7) to `category/name -f facet`, its params written by `params`.
protocol::byte_buffer request(std::string category, std::string facet, std::string op, const writer& params = {},
                              std::string name = "admin") {
    protocol::output_stream os;
    os.start_message(protocol::message_type::request);
    os.write_int(7);
    os.write_identity({std::move(name), std::move(category)});
    os.write_facet(facet);
    os.write_string(op);
    os.write_byte(0);
    os.write_context({});
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    if (params) params(os);
    os.end_encapsulation(start);
    os.end_message();
    return os.take();
}

net::property_file props(std::initializer_list<std::pair<const char*, const char*>> kv) {
    net::property_map m;
    for (const auto& [k, v] : kv) m[k] = net::property_value{v, 1, {}};
    return net::property_file("test.cfg", std::move(m));
}

struct admin_object : ::testing::Test {
    std::shared_ptr<const net::runtime_config> rc = [] {
        auto c = std::make_shared<net::runtime_config>();
        c->threads = 1;
        return c;
    }();
    net::shard_set shards{rc};
    int shutdowns = 0;
    std::map<std::string, std::string> in_force{{"Glacier2.SessionTimeout", "30"}, {"Glacier2.Trace.Session", "1"},
                                                {"Ice.Admin.InstanceName", "Glacier2"}};
    std::map<std::string, std::string> set;
    net::admin_object admin{shards, net::read_admin_config(props({{"Ice.Admin.Endpoints", "tcp -h 127.0.0.1"},
                                                                  {"Ice.Admin.InstanceName", "Glacier2"}})),
                            net::admin_hooks{[this] { ++shutdowns; }, [this] { return in_force; },
                                             [this](std::map<std::string, std::string> c) { set = std::move(c); },
                                             {"IceStorm"}}};

    /// Dispatches `message` on `to` (default: the fixture's object); returns the reply's status
    /// and payload (after the status byte).
    std::pair<protocol::reply_status, protocol::byte_buffer> call(const protocol::byte_buffer& message,
                                                                  net::admin_object* to = nullptr) {
        auto r = protocol::decode_request(protocol::byte_view(message).subspan(protocol::header_size));
        EXPECT_TRUE(r);
        auto reply = (to ? *to : admin).dispatch(*r);
        EXPECT_TRUE(reply);
        auto d = protocol::decode_reply(protocol::byte_view(*reply).subspan(protocol::header_size));
        EXPECT_TRUE(d);
        EXPECT_EQ(d->request_id, 7);
        return {d->status, protocol::byte_buffer(d->payload.begin(), d->payload.end())};
    }
};

}  // namespace

TEST(admin_config, enabled_by_endpoints_and_refused_without_them) {
    const auto c = net::read_admin_config(props({{"Ice.Admin.Endpoints", "tcp"}, {"Ice.Default.Host", "127.0.0.1"},
                                                 {"Ice.Admin.Facets", "Process, Properties"}}));
    EXPECT_TRUE(c.enabled);
    ASSERT_EQ(c.endpoints.size(), 1u);
    EXPECT_EQ(c.endpoints[0].host, "127.0.0.1");  // Ice.Default.Host: bound on loopback, not everywhere
    EXPECT_EQ(c.endpoints[0].port, 0);
    EXPECT_FALSE(c.instance_name.empty());        // made up, as Ice does
    EXPECT_TRUE(c.serves("Process"));
    EXPECT_FALSE(c.serves("Metrics"));
    EXPECT_FALSE(net::read_admin_config(props({{"Ice.Admin.InstanceName", "X"}})).enabled);
    EXPECT_FALSE(net::read_admin_config(props({{"Ice.Admin.Endpoints", "tcp"}, {"Ice.Admin.Enabled", "0"}})).enabled);
    EXPECT_THROW(net::read_admin_config(props({{"Ice.Admin.Enabled", "1"}})), net::config_error);
}

TEST_F(admin_object, process_shutdown_calls_the_hook_and_replies) {
    const auto [status, payload] = call(request("Glacier2", "Process", "shutdown"));
    EXPECT_EQ(status, protocol::reply_status::ok);
    EXPECT_EQ(shutdowns, 1);
}

TEST_F(admin_object, process_answers_ice_isA) {
    const auto [status, payload] =
        call(request("Glacier2", "Process", "ice_isA", [](auto& os) { os.write_string("::Ice::Process"); }));
    EXPECT_EQ(status, protocol::reply_status::ok);
    protocol::input_stream in(payload);
    const auto encaps = in.read_encapsulation();
    ASSERT_TRUE(in.ok());
    protocol::input_stream body(encaps.payload(), encaps.encoding);
    EXPECT_TRUE(body.read_bool());
}

TEST_F(admin_object, properties_get_and_prefix) {
    auto [status, payload] = call(request("Glacier2", "Properties", "getProperty",
                                          [](auto& os) { os.write_string("Glacier2.SessionTimeout"); }));
    ASSERT_EQ(status, protocol::reply_status::ok);
    protocol::input_stream in(payload);
    auto encaps = in.read_encapsulation();
    protocol::input_stream value(encaps.payload(), encaps.encoding);
    EXPECT_EQ(value.read_string(), "30");

    std::tie(status, payload) = call(request("Glacier2", "Properties", "getPropertiesForPrefix",
                                             [](auto& os) { os.write_string("Glacier2."); }));
    ASSERT_EQ(status, protocol::reply_status::ok);
    protocol::input_stream in2(payload);
    encaps = in2.read_encapsulation();
    protocol::input_stream dict(encaps.payload(), encaps.encoding);
    ASSERT_EQ(dict.read_size(), 2);
    EXPECT_EQ(dict.read_string(), "Glacier2.SessionTimeout");
    EXPECT_EQ(dict.read_string(), "30");
    EXPECT_EQ(dict.read_string(), "Glacier2.Trace.Session");
    EXPECT_EQ(dict.read_string(), "1");
    EXPECT_TRUE(dict.ok());
}

TEST_F(admin_object, properties_set_passes_the_changes_to_the_hook) {
    const auto [status, payload] = call(request("Glacier2", "Properties", "setProperties", [](auto& os) {
        os.write_size(2);
        os.write_string("Glacier2.Trace.Session");
        os.write_string("0");
        os.write_string("Glacier2.Filter.Category.Accept");
        os.write_string("");
    }));
    EXPECT_EQ(status, protocol::reply_status::ok);
    EXPECT_EQ(set, (std::map<std::string, std::string>{{"Glacier2.Filter.Category.Accept", ""},
                                                       {"Glacier2.Trace.Session", "0"}}));
}

TEST_F(admin_object, other_identity_facet_or_operation_is_refused) {
    EXPECT_EQ(call(request("Other", "Process", "shutdown")).first, protocol::reply_status::object_not_exist);
    EXPECT_EQ(call(request("Glacier2", "Metrics", "getMetricsView")).first, protocol::reply_status::facet_not_exist);
    EXPECT_EQ(call(request("Glacier2", "", "ice_ping")).first, protocol::reply_status::facet_not_exist);
    EXPECT_EQ(call(request("Glacier2", "Process", "reboot")).first, protocol::reply_status::operation_not_exist);
    EXPECT_EQ(shutdowns, 0);
}

TEST_F(admin_object, malformed_params_are_a_marshal_error_not_a_crash) {
    const auto [status, payload] = call(request("Glacier2", "Properties", "setProperties", [](auto& os) {
        os.write_size(5);  // five entries announced, none sent
    }));
    EXPECT_EQ(status, protocol::reply_status::unknown_local_exception);
    EXPECT_TRUE(set.empty());
}

TEST_F(admin_object, service_manager_shutdown_calls_the_hook_as_process_shutdown_does) {
    const auto [status, payload] = call(request("Glacier2", "IceBox.ServiceManager", "shutdown"));
    EXPECT_EQ(status, protocol::reply_status::ok);
    EXPECT_EQ(shutdowns, 1);
    EXPECT_TRUE(admin.shut_down());
}

TEST_F(admin_object, service_manager_knows_only_its_hosted_services) {
    auto service = [](const char* name) { return [name](protocol::output_stream& os) { os.write_string(name); }; };
    auto [status, payload] = call(request("Glacier2", "IceBox.ServiceManager", "startService", service("IceStorm")));
    EXPECT_EQ(status, protocol::reply_status::user_exception);
    EXPECT_NE(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()).find("AlreadyStartedException"),
              std::string::npos);
    std::tie(status, payload) = call(request("Glacier2", "IceBox.ServiceManager", "stopService", service("Other")));
    EXPECT_EQ(status, protocol::reply_status::user_exception);
    EXPECT_NE(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()).find("NoSuchServiceException"),
              std::string::npos);
    std::tie(status, payload) = call(request("Glacier2", "IceBox.ServiceManager", "stopService", service("IceStorm")));
    EXPECT_EQ(status, protocol::reply_status::unknown_local_exception);
    EXPECT_EQ(shutdowns, 0);
}

TEST_F(admin_object, no_service_manager_facet_without_hosted_services) {
    net::admin_object plain{shards, net::read_admin_config(props({{"Ice.Admin.Endpoints", "tcp -h 127.0.0.1"},
                                                                  {"Ice.Admin.InstanceName", "Glacier2"}})),
                            net::admin_hooks{[] {}, [] { return std::map<std::string, std::string>{}; }, {}, {}}};
    EXPECT_EQ(call(request("Glacier2", "IceBox.ServiceManager", "shutdown"), &plain).first,
              protocol::reply_status::facet_not_exist);
}
