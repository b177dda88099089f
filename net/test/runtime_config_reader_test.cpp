// runtime_config_reader: the runtime's own keys from an Ice property file and from YAML, with
// their units and defaults, and require_served() refusing endpoints the runtime cannot serve.
#include <moraine/net/config_error.hpp>
#include <moraine/net/runtime_config_reader.hpp>

#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

using namespace moraine;

namespace {

net::runtime_config from_properties(std::string_view text, std::vector<std::string>& warnings) {
    auto props = net::parse_properties(text, "rt.cfg", warnings);
    return net::read_runtime_config(net::property_file("rt.cfg", std::move(props)), warnings);
}

}  // namespace

TEST(runtime_config_reader, ice_properties_with_their_units) {
    std::vector<std::string> warnings;
    const auto rt = from_properties(
        "Ice.MessageSizeMax=2048\n"
        "Ice.Override.ConnectTimeout=2500\n"
        "Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n"
        "Ice.Default.LocatorCacheTimeout=30\n"
        "Ice.TCP.SndSize=65536\n"
        "Ice.TCP.RcvSize=131072\n"
        "Ice.TCP.Backlog=16384\n",
        warnings);
    EXPECT_EQ(rt.message_size_max, 2048u * 1024u) << "Ice.MessageSizeMax is in KiB";
    EXPECT_EQ(rt.tcp_send_buffer, 65536u) << "Ice.TCP.SndSize is in bytes";
    EXPECT_EQ(rt.tcp_receive_buffer, 131072u);
    EXPECT_EQ(rt.tcp_backlog, 16384) << "Ice.TCP.Backlog: connections";
    EXPECT_EQ(rt.backend_connect_timeout_ms, 2500);
    ASSERT_TRUE(rt.locator);
    EXPECT_EQ(rt.locator->id.name, "Locator");
    EXPECT_EQ(rt.locator_cache_timeout_s, 30);
}

TEST(runtime_config_reader, ice_defaults_and_unlimited_message_size) {
    std::vector<std::string> warnings;
    const auto defaults = from_properties("", warnings);
    EXPECT_EQ(defaults.message_size_max, 1024u * 1024u);
    EXPECT_EQ(defaults.backend_connect_timeout_ms, 10000);
    EXPECT_FALSE(defaults.locator);
    EXPECT_EQ(defaults.tcp_send_buffer, 0u) << "the kernel's, autotuned";
    EXPECT_EQ(defaults.tcp_receive_buffer, 0u);
    EXPECT_EQ(defaults.tcp_backlog, 0) << "SOMAXCONN";
    const auto unlimited = from_properties("Ice.MessageSizeMax=0\nIce.Override.ConnectTimeout=-1\n", warnings);
    EXPECT_EQ(unlimited.message_size_max, 0u) << "< 1 is unlimited, as in Ice";
    EXPECT_EQ(unlimited.backend_connect_timeout_ms, 10000) << "<= 0 keeps the default";
}

TEST(runtime_config_reader, yaml_limits_and_threads) {
    const std::string file = "moraine.yaml";
    YAML::Node root = YAML::Load(
        "threads: 3\n"
        "limits:\n"
        "  message_size_max: 64KiB\n"
        "  connection_queue_high: 1MiB\n"
        "  connection_queue_low: 256KiB\n"
        "  backend_connect_timeout_ms: 1500\n"
        "  tcp_send_buffer: 64KiB\n"
        "  tcp_backlog: 8192\n");
    net::yaml_section top(root, "", file);
    const auto rt = net::read_runtime_config(top, ".");
    EXPECT_EQ(rt.threads, 3u);
    EXPECT_EQ(rt.message_size_max, 64u * 1024u);
    EXPECT_EQ(rt.tcp_send_buffer, 64u * 1024u);
    EXPECT_EQ(rt.tcp_backlog, 8192);
    EXPECT_EQ(rt.connection_queue_high, 1024u * 1024u);
    EXPECT_EQ(rt.connection_queue_low, 256u * 1024u);
    EXPECT_EQ(rt.backend_connect_timeout_ms, 1500);
}

TEST(runtime_config_reader, yaml_errors_name_the_key) {
    const std::string file = "moraine.yaml";
    YAML::Node root = YAML::Load("limits:\n  message_size_max: lots\n");
    net::yaml_section top(root, "", file);
    try {
        net::read_runtime_config(top, ".");
        FAIL() << "a bad size was accepted";
    } catch (const net::config_error& e) {
        EXPECT_NE(std::string(e.what()).find("limits.message_size_max"), std::string::npos) << e.what();
    }
}

TEST(runtime_config_reader, yaml_socket_buffer_above_int_max_is_refused) {
    // setsockopt takes an int: 2 GiB would wrap to a negative size in the kernel call.
    const std::string file = "moraine.yaml";
    YAML::Node root = YAML::Load("limits:\n  tcp_send_buffer: 2GiB\n");
    net::yaml_section top(root, "", file);
    try {
        net::read_runtime_config(top, ".");
        FAIL() << "a 2 GiB socket buffer was accepted";
    } catch (const net::config_error& e) {
        EXPECT_NE(std::string(e.what()).find("limits.tcp_send_buffer"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("2147483647"), std::string::npos) << e.what();
    }
    YAML::Node largest = YAML::Load("limits:\n  tcp_receive_buffer: 2147483647\n");
    net::yaml_section ok(largest, "", file);
    EXPECT_EQ(net::read_runtime_config(ok, ".").tcp_receive_buffer, 2147483647u);
}

TEST(runtime_config_reader, require_served_refuses_what_the_runtime_cannot_serve) {
    net::tls_config no_tls;
    EXPECT_NO_THROW(net::require_served(*protocol::endpoints_from_string("tcp -p 4063:ws -p 4065"), "f", "K", no_tls));
    EXPECT_THROW(net::require_served(*protocol::endpoints_from_string("udp -p 4063"), "f", "K", no_tls),
                 net::config_error);
    try {
        net::require_served(*protocol::endpoints_from_string("ssl -p 4064"), "f:3", "Glacier2.Client.Endpoints", no_tls);
        FAIL() << "ssl without a certificate accepted";
    } catch (const net::config_error& e) {
        EXPECT_NE(std::string(e.what()).find("Glacier2.Client.Endpoints"), std::string::npos) << e.what();
    }
}

TEST(runtime_config_reader, takeover_socket_is_off_unless_configured) {
    std::vector<std::string> warnings;
    const auto off = from_properties("", warnings);
    EXPECT_TRUE(off.takeover.socket.empty()) << "no takeover socket by default";
    EXPECT_EQ(off.takeover.drain_timeout_ms, 60000);
    const auto on = from_properties(
        "Moraine.Takeover.Socket=/run/moraine/takeover.sock\nMoraine.Takeover.DrainTimeout=5000\n", warnings);
    EXPECT_EQ(on.takeover.socket, "/run/moraine/takeover.sock");
    EXPECT_EQ(on.takeover.drain_timeout_ms, 5000);
    EXPECT_THROW(from_properties("Moraine.Takeover.DrainTimeout=-1\n", warnings), net::config_error);

    const std::string file = "moraine.yaml";  // a section keeps a reference to it
    YAML::Node root = YAML::Load("takeover:\n  socket: /run/t.sock\n  drain_timeout_ms: 250\n");
    net::yaml_section top(root, "", file);
    const auto yaml = net::read_runtime_config(top, ".");
    EXPECT_EQ(yaml.takeover.socket, "/run/t.sock");
    EXPECT_EQ(yaml.takeover.drain_timeout_ms, 250);
    YAML::Node typo = YAML::Load("takeover:\n  sokcet: /run/t.sock\n");
    net::yaml_section bad(typo, "", file);
    EXPECT_THROW(net::read_runtime_config(bad, "."), net::config_error) << "an unknown key in the section";
}
