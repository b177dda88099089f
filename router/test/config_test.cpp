// router config: reading the router's keys from a Glacier2 property file and from YAML with
// their defaults, warnings for keys Moraine does not act on, and errors naming file, line and
// key; client.reuse_port in both spellings; heartbeat_interval()'s default. (app/test checks
// the shipped files end to end.)
#include <moraine/router/config.hpp>

#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

using namespace moraine;

namespace {

router::config from_properties(std::string_view text, std::vector<std::string>& warnings) {
    auto props = net::parse_properties(text, "test.cfg", warnings);
    return router::read_config(net::property_file("test.cfg", std::move(props)), warnings);
}

std::string error_of(std::string_view text) {
    std::vector<std::string> warnings;
    try {
        from_properties(text, warnings);
    } catch (const net::config_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(config, glacier2_properties_get_glacier2routers_defaults) {
    std::vector<std::string> warnings;
    const auto cfg = from_properties("Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p 4063\n", warnings);
    ASSERT_EQ(cfg.client_endpoints.size(), 1u);
    EXPECT_EQ(cfg.client_endpoints[0].port, 4063);
    EXPECT_TRUE(cfg.server_endpoints.empty());
    EXPECT_TRUE(cfg.client_buffered) << "glacier2router buffers by default";
    EXPECT_TRUE(cfg.server_buffered);
    EXPECT_EQ(cfg.instance_name, "Glacier2");
    EXPECT_EQ(cfg.auth, router::auth_mode::none);
}

TEST(config, glacier2_properties_are_read) {
    std::vector<std::string> warnings;
    const auto cfg = from_properties(
        "Glacier2.InstanceName=Edge\n"
        "Glacier2.Client.Endpoints=tcp -p 4063\n"
        "Glacier2.Server.Endpoints=tcp -h 127.0.0.1 -p 4064\n"
        "Glacier2.Client.Buffered=0\n"
        "Glacier2.Client.ForwardContext=1\n"
        "Glacier2.SessionTimeout=45\n"
        "Glacier2.RoutingTable.MaxSize=7\n"
        "Glacier2.PermissionsVerifier=Edge/NullPermissionsVerifier\n",  // <InstanceName>/Null...
        warnings);
    EXPECT_EQ(cfg.instance_name, "Edge");
    EXPECT_FALSE(cfg.client_buffered);
    EXPECT_TRUE(cfg.client_forward_context);
    EXPECT_EQ(cfg.session_timeout_s, 45);
    EXPECT_EQ(cfg.routing_table_max, 7u);
    EXPECT_EQ(cfg.auth, router::auth_mode::allow_all);
    ASSERT_EQ(cfg.server_endpoints.size(), 1u);
    EXPECT_EQ(cfg.server_endpoints[0].port, 4064);
}

TEST(config, errors_name_the_line_and_key) {
    EXPECT_NE(error_of("Glacier2.Server.Endpoints=tcp -p 4064\n").find("Glacier2.Client.Endpoints"), std::string::npos);
    const auto bad = error_of("Glacier2.Client.Endpoints=tcp -p 4063\nGlacier2.SessionTimeout=soon\n");
    EXPECT_NE(bad.find("test.cfg:2"), std::string::npos) << bad;
    EXPECT_NE(bad.find("Glacier2.SessionTimeout"), std::string::npos) << bad;
}

TEST(config, unknown_glacier2_keys_are_warnings) {
    std::vector<std::string> warnings;
    from_properties("Glacier2.Client.Endpoints=tcp -p 4063\nGlacier2.NoSuchKey=1\n", warnings);
    ASSERT_FALSE(warnings.empty());
    bool named = false;
    for (const auto& w : warnings) named |= w.find("Glacier2.NoSuchKey") != std::string::npos;
    EXPECT_TRUE(named);
}

TEST(config, yaml_is_read_with_moraines_defaults) {
    const std::string file = "test.yaml";
    YAML::Node root = YAML::Load(
        "client:\n"
        "  endpoints: tcp -h 127.0.0.1 -p 4063\n"
        "auth:\n"
        "  mode: allow_all\n");
    net::yaml_section top(root, "", file);
    const auto cfg = router::read_config(top, ".");
    ASSERT_EQ(cfg.client_endpoints.size(), 1u);
    EXPECT_FALSE(cfg.client_buffered) << "YAML's default is unbuffered";
    EXPECT_EQ(cfg.auth, router::auth_mode::allow_all);
    EXPECT_FALSE(cfg.client_reuse_port) << "a client port is this process's alone unless asked";
}

TEST(config, client_reuse_port_in_both_spellings) {
    std::vector<std::string> warnings;
    EXPECT_FALSE(from_properties("Glacier2.Client.Endpoints=tcp -p 4063\n", warnings).client_reuse_port);
    EXPECT_TRUE(from_properties("Glacier2.Client.Endpoints=tcp -p 4063\nMoraine.Client.ReusePort=1\n", warnings)
                    .client_reuse_port);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    EXPECT_NE(error_of("Glacier2.Client.Endpoints=tcp -p 4063\nMoraine.Client.ReusePort=maybe\n")
                  .find("Moraine.Client.ReusePort"),
              std::string::npos);
    YAML::Node root = YAML::Load(
        "client:\n"
        "  endpoints: tcp -h 127.0.0.1 -p 4063\n"
        "  reuse_port: true\n");
    const std::string file = "test.yaml";  // yaml_section keeps a reference to it
    net::yaml_section top(root, "", file);
    EXPECT_TRUE(router::read_config(top, ".").client_reuse_port);
}

TEST(config, heartbeat_interval_defaults_to_half_the_acm_timeout_within_bounds) {
    router::config c;
    c.acm_timeout_s = 20;
    EXPECT_EQ(c.heartbeat_interval(), 10000);
    c.acm_timeout_s = 600;
    EXPECT_EQ(c.heartbeat_interval(), 30000);
    c.acm_timeout_s = 1;
    EXPECT_EQ(c.heartbeat_interval(), 1000);
    c.heartbeat_interval_ms = 0;
    EXPECT_EQ(c.heartbeat_interval(), 0);
}
