#include <moraine/app/app_config.hpp>

#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/identity.hpp>

#include <gtest/gtest.h>

#include <crypt.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using moraine::app::load_ice_config;
using moraine::app::load_yaml_config;
using moraine::router::auth_mode;
using config = moraine::app::app_config;
using moraine::net::config_error;

const fs::path source_dir = MORAINE_SOURCE_DIR;

// A scratch directory removed at the end of each test.
class config_files : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "moraine_config_XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path write(const std::string& name, const std::string& text) {
        fs::path p = dir_ / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p;
    }

    // A password file with user `demo`, password `demo`.
    fs::path write_passwords(const std::string& name = "passwords") {
        return write(name, "demo $6$IrxMhDyZD8UAj86K$ixD3Yr.qLmk8LtQaogTPKcV8LYo7imGk7ra1r7n9aIp9CFZvORMrUqv64aiHXfkRTMM"
                           "Fn6KdLQwYC73.N1DZ50\n");
    }

    config ice(const std::string& text) { return load_ice_config(write("router.cfg", text)); }
    config yaml(const std::string& text) { return load_yaml_config(write("moraine.yaml", text)); }

    // The message of the config_error thrown by `load`, or "no error".
    template <class Load>
    static std::string error_of(Load load) {
        try {
            load();
        } catch (const config_error& e) {
            return e.what();
        }
        return "no error";
    }
    std::string ice_error(const std::string& text) {
        return error_of([&] { ice(text); });
    }
    std::string yaml_error(const std::string& text) {
        return error_of([&] { yaml(text); });
    }
    std::string cfg_file() const { return (dir_ / "router.cfg").string(); }
    std::string yaml_file() const { return (dir_ / "moraine.yaml").string(); }

    fs::path dir_;
};

bool has_warning(const config& cfg, const std::string& part) {
    return std::any_of(cfg.warnings.begin(), cfg.warnings.end(),
                       [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

std::string endpoints_string(const std::vector<moraine::protocol::endpoint>& eps) {
    std::string s;
    for (const auto& e : eps) s += (s.empty() ? "" : ":") + moraine::protocol::endpoint_to_string(e);
    return s;
}

// ===== Glacier2 property files ==================================================================

const std::string client = "Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p 4063\n";

TEST_F(config_files, ice_minimal_file_gets_glacier2router_defaults) {
    config cfg = ice(client);
    EXPECT_EQ(cfg.source, cfg_file());
    EXPECT_EQ(cfg.router.instance_name, "Glacier2");
    ASSERT_EQ(cfg.router.client_endpoints.size(), 1u);
    EXPECT_EQ(cfg.router.client_endpoints[0].host, "127.0.0.1");
    EXPECT_EQ(cfg.router.client_endpoints[0].port, 4063);
    EXPECT_TRUE(cfg.router.server_endpoints.empty());
    EXPECT_TRUE(cfg.router.client_buffered);
    EXPECT_TRUE(cfg.router.server_buffered);
    EXPECT_FALSE(cfg.router.client_forward_context);
    EXPECT_FALSE(cfg.router.client_always_batch);
    EXPECT_EQ(cfg.router.session_timeout_s, 0);
    EXPECT_EQ(cfg.router.acm_timeout_s, 60);
    EXPECT_EQ(cfg.router.routing_table_max, 1000u);
    EXPECT_EQ(cfg.router.auth, auth_mode::none);
    EXPECT_EQ(cfg.runtime.message_size_max, 1024u * 1024u);
    EXPECT_FALSE(cfg.topics.enabled);
    EXPECT_TRUE(cfg.warnings.empty());
}

TEST_F(config_files, ice_missing_client_endpoints) {
    EXPECT_EQ(ice_error("Glacier2.Server.Endpoints=tcp -p 4064\n"),
              cfg_file() + ": Glacier2.Client.Endpoints: required (the endpoints clients connect to)");
    EXPECT_EQ(ice_error("Glacier2.Client.Endpoints=\n"),
              cfg_file() + ": Glacier2.Client.Endpoints: required (the endpoints clients connect to)");
}

TEST_F(config_files, ice_missing_file) {
    std::string e = error_of([&] { load_ice_config(dir_ / "nope.cfg"); });
    EXPECT_EQ(e, (dir_ / "nope.cfg").string() + ": open: No such file or directory");
}

TEST_F(config_files, ice_bad_endpoint_names_line_and_key) {
    EXPECT_EQ(ice_error(client + "\nGlacier2.Server.Endpoints=tcp -h 127.0.0.1 -p notaport\n"),
              cfg_file() + ":3: Glacier2.Server.Endpoints: not a valid Ice endpoint list: 'tcp -h 127.0.0.1 -p notaport'");
    EXPECT_NE(ice_error("Glacier2.Client.Endpoints=carrier-pigeon -p 1\n").find(":1: Glacier2.Client.Endpoints: "),
              std::string::npos);
}

TEST_F(config_files, ice_syntax_comments_escapes_and_overrides) {
    config cfg = ice("# a comment line\n"
                     "   Glacier2.Client.Endpoints =  tcp -h 127.0.0.1 -p 4063   # trailing comment\r\n"
                     "\n"
                     "Glacier2.InstanceName=First\n"
                     "Glacier2.InstanceName=Hash\\#Name\n"  // later line wins; \# is a literal #
                     "Glacier2.Filter.Category.Accept=a=b\tc\n"
                     "Glacier2.Filter.AdapterId.Accept=x\n"
                     "Glacier2.Filter.AdapterId.Accept=\n"  // empty value unsets
                     "this line has no equals sign\n");
    EXPECT_EQ(cfg.router.client_endpoints.at(0).port, 4063);
    EXPECT_EQ(cfg.router.instance_name, "Hash#Name");
    EXPECT_EQ(cfg.router.filters.category_accept, (std::vector<std::string>{"a=b", "c"}));
    EXPECT_TRUE(cfg.router.filters.adapter_id_accept.empty());
    EXPECT_TRUE(has_warning(cfg, cfg_file() + ":9: ignored line without 'key=value'"));
}

TEST_F(config_files, ice_backslashes_other_than_escapes_are_kept) {
    config cfg = ice(client + "Glacier2.Filter.Identity.Accept=cat\\/name plain\n");
    ASSERT_EQ(cfg.router.filters.identity_accept.size(), 2u);
    // "cat\/name" is one identity named "cat/name" with no category (the escape is identity syntax).
    EXPECT_EQ(cfg.router.filters.identity_accept[0], (moraine::protocol::identity{"cat/name", ""}));
    EXPECT_EQ(cfg.router.filters.identity_accept[1], (moraine::protocol::identity{"plain", ""}));
}

TEST_F(config_files, ice_bad_numbers_name_line_and_key) {
    EXPECT_EQ(ice_error(client + "Glacier2.SessionTimeout=thirty\n"),
              cfg_file() + ":2: Glacier2.SessionTimeout: expected an integer, got 'thirty'");
    EXPECT_EQ(ice_error(client + "Glacier2.SessionTimeout=-5\n"),
              cfg_file() + ":2: Glacier2.SessionTimeout: -5 is out of range [0, 2147483647]");
    EXPECT_EQ(ice_error(client + "Glacier2.Client.Buffered=yes\n"),
              cfg_file() + ":2: Glacier2.Client.Buffered: expected an integer, got 'yes'");
    EXPECT_EQ(ice_error(client + "Glacier2.Filter.Category.AcceptUser=3\n"),
              cfg_file() + ":2: Glacier2.Filter.Category.AcceptUser: 3 is out of range [0, 2]");
    EXPECT_EQ(ice_error(client + "Glacier2.RoutingTable.MaxSize=1k\n"),
              cfg_file() + ":2: Glacier2.RoutingTable.MaxSize: expected an integer, got '1k'");
}

TEST_F(config_files, ice_forwarding_flags) {
    config cfg = ice(client +
                     "Glacier2.Client.Buffered=0\nGlacier2.Server.Buffered=0\n"
                     "Glacier2.Client.ForwardContext=1\nGlacier2.Server.ForwardContext=2\n"
                     "Glacier2.Client.AlwaysBatch=1\nGlacier2.Server.AlwaysBatch=1\n"
                     "Glacier2.ReturnClientProxy=1\nGlacier2.AddConnectionContext=2\n"
                     "Glacier2.RoutingTable.MaxSize=50\n");
    EXPECT_FALSE(cfg.router.client_buffered);
    EXPECT_FALSE(cfg.router.server_buffered);
    EXPECT_TRUE(cfg.router.client_forward_context);
    EXPECT_TRUE(cfg.router.server_forward_context);  // any non-zero integer is true, as in Ice
    EXPECT_TRUE(cfg.router.client_always_batch);
    EXPECT_TRUE(cfg.router.server_always_batch);
    EXPECT_TRUE(cfg.router.return_client_proxy);
    EXPECT_EQ(cfg.router.add_connection_context, 2);
    EXPECT_EQ(cfg.router.routing_table_max, 50u);
}

TEST_F(config_files, ice_server_and_published_endpoints) {
    config cfg = ice(client +
                     "Glacier2.Server.Endpoints=tcp -h 127.0.0.1 -p 4064:tcp -h 127.0.0.1 -p 4065\n"
                     "Glacier2.Server.PublishedEndpoints=tcp -h router.example.com -p 4064\n");
    ASSERT_EQ(cfg.router.server_endpoints.size(), 2u);
    EXPECT_EQ(cfg.router.server_endpoints[1].port, 4065);
    ASSERT_EQ(cfg.router.server_published_endpoints.size(), 1u);
    EXPECT_EQ(cfg.router.server_published_endpoints[0].host, "router.example.com");
}

TEST_F(config_files, ice_acm_timeout_precedence) {
    EXPECT_EQ(ice(client).router.acm_timeout_s, 60);
    EXPECT_EQ(ice(client + "Ice.ACM.Timeout=45\n").router.acm_timeout_s, 45);
    EXPECT_EQ(ice(client + "Ice.ACM.Timeout=45\nIce.ACM.Server.Timeout=50\n").router.acm_timeout_s, 50);
    config with_session = ice(client + "Ice.ACM.Server.Timeout=50\nGlacier2.SessionTimeout=30\n");
    EXPECT_EQ(with_session.router.session_timeout_s, 30);
    EXPECT_EQ(with_session.router.acm_timeout_s, 30);
    EXPECT_EQ(ice(client + "Ice.ACM.Server.Timeout=50\nGlacier2.SessionTimeout=0\n").router.acm_timeout_s, 50);
    EXPECT_EQ(ice(client + "Glacier2.SessionTimeout=30\nGlacier2.Client.ACM.Timeout=12\n").router.acm_timeout_s, 12);
    EXPECT_EQ(ice(client + "Glacier2.SessionTimeout=30\nGlacier2.Client.ACM.Timeout=0\n").router.acm_timeout_s, 0);
}

TEST_F(config_files, ice_message_size_max_is_kib) {
    EXPECT_EQ(ice(client + "Ice.MessageSizeMax=2048\n").runtime.message_size_max, 2048u * 1024u);
    EXPECT_EQ(ice(client + "Ice.MessageSizeMax=0\n").runtime.message_size_max, 0u);
    EXPECT_EQ(ice(client + "Ice.MessageSizeMax=-1\n").runtime.message_size_max, 0u);
    EXPECT_EQ(ice(client + "Ice.MessageSizeMax=99999999\n").runtime.message_size_max, 0u);
    EXPECT_NE(ice_error(client + "Ice.MessageSizeMax=big\n").find("Ice.MessageSizeMax: expected an integer"),
              std::string::npos);
}

TEST_F(config_files, ice_connect_timeout_override) {
    EXPECT_EQ(ice(client).runtime.backend_connect_timeout_ms, 10000);
    EXPECT_EQ(ice(client + "Ice.Override.ConnectTimeout=2500\n").runtime.backend_connect_timeout_ms, 2500);
    EXPECT_EQ(ice(client + "Ice.Override.ConnectTimeout=-1\n").runtime.backend_connect_timeout_ms, 10000);
}

TEST_F(config_files, ice_auth_crypt_passwords) {
    fs::path pw = write_passwords();
    config cfg = ice(client + "Glacier2.CryptPasswords=" + pw.string() + "\n");
    EXPECT_EQ(cfg.router.auth, auth_mode::crypt_file);
    EXPECT_EQ(cfg.router.crypt_passwords, pw.string());
}

TEST_F(config_files, ice_auth_crypt_passwords_errors_name_the_key) {
    EXPECT_EQ(ice_error(client + "Glacier2.CryptPasswords=" + (dir_ / "missing").string() + "\n"),
              cfg_file() + ":2: Glacier2.CryptPasswords: " + (dir_ / "missing").string() +
                  ": cannot open: No such file or directory");
    fs::path bad = write("bad_passwords", "\nalice\n");
    EXPECT_EQ(ice_error(client + "Glacier2.CryptPasswords=" + bad.string() + "\n"),
              cfg_file() + ":2: Glacier2.CryptPasswords: " + bad.string() + ":2: missing password hash for user 'alice'");
}

TEST_F(config_files, ice_auth_crypt_passwords_relative_to_working_directory) {
    write_passwords("sub/pw");
    fs::path old = fs::current_path();
    fs::current_path(dir_);
    config cfg = ice(client + "Glacier2.CryptPasswords=sub/pw\n");
    fs::current_path(old);
    EXPECT_EQ(cfg.router.crypt_passwords, (dir_ / "sub/pw").string());
}

TEST_F(config_files, ice_auth_permissions_verifier) {
    config cfg = ice(client + "Glacier2.PermissionsVerifier=verifier:tcp -h 127.0.0.1 -p 10020\n"
                              "Glacier2.PermissionsVerifier.InvocationTimeout=5000\n"
                              "Glacier2.PermissionsVerifier.Context.x=y\n");
    EXPECT_EQ(cfg.router.auth, auth_mode::verifier);
    EXPECT_EQ(cfg.router.permissions_verifier, "verifier:tcp -h 127.0.0.1 -p 10020");
    // The proxy's own properties are accepted but not read: named at start.
    EXPECT_EQ(cfg.warnings.size(), 2u);
    EXPECT_TRUE(has_warning(cfg, ":3: Glacier2.PermissionsVerifier.InvocationTimeout: accepted, has no effect"));
    EXPECT_TRUE(has_warning(cfg, ":4: Glacier2.PermissionsVerifier.Context.x: accepted, has no effect"));
}

TEST_F(config_files, ice_auth_verifier_wins_over_crypt_passwords) {
    fs::path pw = write_passwords();
    config cfg = ice(client + "Glacier2.PermissionsVerifier=verifier:tcp -p 10020\nGlacier2.CryptPasswords=" +
                     pw.string() + "\n");
    EXPECT_EQ(cfg.router.auth, auth_mode::verifier);
    EXPECT_TRUE(has_warning(cfg, "Glacier2.CryptPasswords: ignored, Glacier2.PermissionsVerifier is set"));
}

TEST_F(config_files, ice_auth_null_permissions_verifier_is_allow_all) {
    EXPECT_EQ(ice(client + "Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier\n").router.auth,
              auth_mode::allow_all);
    // The instance name may come later in the file; it is what counts.
    config custom = ice(client + "Glacier2.PermissionsVerifier=Edge/NullPermissionsVerifier\nGlacier2.InstanceName=Edge\n");
    EXPECT_EQ(custom.router.auth, auth_mode::allow_all);
    EXPECT_TRUE(custom.router.permissions_verifier.empty());
    EXPECT_EQ(ice(client + "Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier\nGlacier2.InstanceName=Edge\n")
                  .router.auth,
              auth_mode::verifier);
}

TEST_F(config_files, ice_proxies_are_checked) {
    config cfg = ice(client + "Glacier2.SessionManager=SessionManager:tcp -h 127.0.0.1 -p 10010\n"
                              "Glacier2.SSLPermissionsVerifier=Glacier2/NullSSLPermissionsVerifier\n");
    EXPECT_EQ(cfg.router.session_manager, "SessionManager:tcp -h 127.0.0.1 -p 10010");
    EXPECT_EQ(cfg.router.ssl_permissions_verifier, "Glacier2/NullSSLPermissionsVerifier");
    EXPECT_EQ(ice_error(client + "Glacier2.SessionManager=SessionManager:tcp -p x\n"),
              cfg_file() + ":2: Glacier2.SessionManager: not a valid proxy: 'SessionManager:tcp -p x'");
    EXPECT_NE(ice_error(client + "Glacier2.PermissionsVerifier=v:bogus -p 1\n").find(":2: Glacier2.PermissionsVerifier: "),
              std::string::npos);
}

TEST_F(config_files, ice_filters) {
    config cfg = ice(client +
                     "Glacier2.Filter.Category.Accept=IceStorm  cb \"with space\"\n"
                     "Glacier2.Filter.Category.AcceptUser=2\n"
                     "Glacier2.Filter.Identity.Accept=hello IceStorm/TopicManager\n"
                     "Glacier2.Filter.AdapterId.Accept=A B\n"
                     "Glacier2.Filter.Address.Accept=127.0.0.1:[4000-5000] 10.0.*.*\n"
                     "Glacier2.Filter.Address.Reject=10.0.0.1\n"
                     "Glacier2.Filter.ProxySizeMax=512\n");
    const auto& f = cfg.router.filters;
    EXPECT_EQ(f.category_accept, (std::vector<std::string>{"IceStorm", "cb", "with space"}));
    EXPECT_EQ(f.category_accept_user, 2);
    EXPECT_EQ(f.identity_accept, (std::vector<moraine::protocol::identity>{{"hello", ""}, {"TopicManager", "IceStorm"}}));
    EXPECT_EQ(f.adapter_id_accept, (std::vector<std::string>{"A", "B"}));
    EXPECT_EQ(f.address_accept, "127.0.0.1:[4000-5000] 10.0.*.*");
    EXPECT_EQ(f.address_reject, "10.0.0.1");
    EXPECT_EQ(f.proxy_size_max, 512u);
}

TEST_F(config_files, ice_filter_errors_name_line_and_key) {
    EXPECT_EQ(ice_error(client + "Glacier2.Filter.Address.Reject=127.0.0.1:*\n"),
              cfg_file() + ":2: Glacier2.Filter.Address.Reject: rule '127.0.0.1:*': expected number");
    EXPECT_EQ(ice_error(client + "Glacier2.Filter.Address.Accept=10.[1-2\n"),
              cfg_file() + ":2: Glacier2.Filter.Address.Accept: rule '10.[1-2': unclosed group");
    EXPECT_EQ(ice_error(client + "Glacier2.Filter.Identity.Accept=a/b/c\n"),
              cfg_file() + ":2: Glacier2.Filter.Identity.Accept: not a valid identity: 'a/b/c'");
    EXPECT_EQ(ice_error(client + "Glacier2.Filter.Category.Accept=\"open\n"),
              cfg_file() + ":2: Glacier2.Filter.Category.Accept: unmatched \"");
    EXPECT_EQ(ice_error(client + "Glacier2.Filter.ProxySizeMax=-1\n"),
              cfg_file() + ":2: Glacier2.Filter.ProxySizeMax: -1 is out of range [0, 2147483647]");
}

TEST_F(config_files, ice_topics_need_both_endpoints) {
    config cfg = ice(client + "IceStorm.InstanceName=Events\n"
                              "IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 10000\n"
                              "IceStorm.TopicManager.PublishedEndpoints=tcp -h tm.example.com -p 10000\n"
                              "IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 10001\n"
                              "IceStorm.Transient=1\n");
    EXPECT_TRUE(cfg.topics.enabled);
    EXPECT_EQ(cfg.topics.instance_name, "Events");
    EXPECT_EQ(cfg.topics.topic_manager_endpoints.at(0).port, 10000);
    EXPECT_EQ(cfg.topics.topic_manager_published_endpoints.at(0).host, "tm.example.com");
    EXPECT_EQ(cfg.topics.publish_endpoints.at(0).port, 10001);
    EXPECT_TRUE(cfg.topics.publish_published_endpoints.empty());
    EXPECT_TRUE(cfg.warnings.empty());

    config half = ice(client + "IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 10000\n");
    EXPECT_FALSE(half.topics.enabled);
    EXPECT_EQ(half.topics.instance_name, "IceStorm");
    EXPECT_TRUE(has_warning(half, "topic service off"));
    EXPECT_NE(ice_error(client + "IceStorm.Publish.Endpoints=tcp -p many\n").find(":2: IceStorm.Publish.Endpoints: "),
              std::string::npos);
}

TEST_F(config_files, ice_unknown_glacier2_keys_are_warnings) {
    config cfg = ice(client + "Glacier2.SessionTimout=30\n"  // typo
                              "Glacier2.Filter.Category.Acept=x\n"
                              "Glacier2.Client.Bufered=1\n"
                              "Ice.Warn.Connections=1\n"   // other components' keys: silent
                              "Freeze.Whatever=1\n");
    EXPECT_EQ(cfg.warnings.size(), 3u);
    EXPECT_TRUE(has_warning(cfg, cfg_file() + ":2: Glacier2.SessionTimout: unknown property, ignored"));
    EXPECT_TRUE(has_warning(cfg, cfg_file() + ":3: Glacier2.Filter.Category.Acept: unknown property"));
    EXPECT_TRUE(has_warning(cfg, cfg_file() + ":4: Glacier2.Client.Bufered: unknown property"));
}

TEST_F(config_files, ice_honoured_glacier2_keys_are_silent) {
    config cfg = ice(client +
                     "Glacier2.Trace.Session=1\nGlacier2.Trace.RoutingTable=2\n"
                     "Glacier2.Client.Trace.Request=1\nGlacier2.Client.Trace.Override=1\nGlacier2.Client.Trace.Reject=3\n"
                     "Glacier2.Server.Trace.Request=1\nGlacier2.Server.Trace.Override=4\n"
                     "Glacier2.Client.ACM.Close=4\nGlacier2.Client.ACM.Heartbeat=0\nGlacier2.Client.ACM.Timeout=30\n"
                     "Glacier2.Client.SleepTime=0\n"
                     "Glacier2.SessionManager=sm:tcp -p 1\n"
                     "Glacier2.SSLPermissionsVerifier=v:tcp -p 2\n");
    EXPECT_TRUE(cfg.warnings.empty()) << cfg.warnings.front();
    const auto& t = cfg.router.trace;
    EXPECT_EQ(t.session, 1);
    EXPECT_EQ(t.routing_table, 2);
    EXPECT_EQ(t.client_request, 1);
    EXPECT_EQ(t.client_override, 1);
    EXPECT_EQ(t.client_reject, 3);
    EXPECT_EQ(t.server_request, 1);
    EXPECT_EQ(t.server_override, 4);
    EXPECT_EQ(ice(client).router.trace.client_request, 0);  // off by default
    EXPECT_NE(ice_error(client + "Glacier2.Trace.Session=-1\n").find(":2: Glacier2.Trace.Session: "), std::string::npos);
}

// Every documented Glacier2 key Moraine accepts without acting on it is named at start, once, with
// its line and why (docs/properties.md, "accepted with a warning").
TEST_F(config_files, ice_noop_glacier2_keys_are_warnings) {
    const std::vector<std::string> noop = {
        "Glacier2.Client.ThreadPool.Size=4",
        "Glacier2.Server.ThreadPool.SizeMax=8",
        "Glacier2.Client.ThreadPool.Serialize=1",
        "Glacier2.Client.PublishedEndpoints=tcp -h example.com -p 4063",
        "Glacier2.Server.AdapterId=router-server",
        "Glacier2.Server.ReplicaGroupId=g",
        "Glacier2.Client.ProxyOptions=-t",
        "Glacier2.Client.Locator=IceGrid/Locator:tcp -p 4061",
        "Glacier2.Server.Locator.EndpointSelection=Ordered",
        "Glacier2.Client.Router.Context.x=y",
        "Glacier2.Client.ACM.Close=0",
        "Glacier2.Client.ACM=30",
        "Glacier2.Server.ACM.Timeout=30",
        "Glacier2.Server.ACM.Heartbeat=3",
        "Glacier2.PermissionsVerifier.InvocationTimeout=5000",
        "Glacier2.PermissionsVerifier.Context.x=y",
        "Glacier2.SessionManager.LocatorCacheTimeout=600",
        "Glacier2.SSLPermissionsVerifier.EndpointSelection=Random",
        "Glacier2.SSLSessionManager.PreferSecure=1",
    };
    for (const auto& line : noop) {
        const std::string key = line.substr(0, line.find('='));
        config cfg = ice(client + "Glacier2.PermissionsVerifier=v:tcp -p 1\n" + line + "\n");
        ASSERT_EQ(cfg.warnings.size(), 1u) << line;
        EXPECT_EQ(cfg.warnings[0].rfind(cfg_file() + ":3: " + key + ": accepted, has no effect in Moraine (", 0), 0u)
            << cfg.warnings[0];
    }
    // Under a documented prefix, an undocumented key is a typo, not a no-op.
    for (const std::string line : {"Glacier2.Client.ThreadPool.Sise=4", "Glacier2.PermissionsVerifier.Contxt=1",
                                   "Glacier2.Server.Trace.Reject=1", "Glacier2.Client.Locator.Foo=1"}) {
        config cfg = ice(client + line + "\n");
        EXPECT_TRUE(has_warning(cfg, ": unknown property, ignored")) << line;
    }
}

// Glacier2.Client.AdapterId / ReplicaGroupId: the client endpoints are registered with the
// locator under them (docs/deployment.md, "IceGrid"); without a locator start-up stops.
const std::string ice_locator = "Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n";

TEST_F(config_files, ice_client_adapter_id_and_replica_group) {
    config cfg = ice(client + ice_locator + "Glacier2.Client.AdapterId=R1\nGlacier2.Client.ReplicaGroupId=RouterGroup\n");
    EXPECT_EQ(cfg.router.client_adapter_id, "R1");
    EXPECT_EQ(cfg.router.client_replica_group_id, "RouterGroup");
    EXPECT_TRUE(cfg.warnings.empty()) << cfg.warnings.front();
    config alone = ice(client + ice_locator + "Glacier2.Client.AdapterId=R1\n");
    EXPECT_EQ(alone.router.client_adapter_id, "R1");
    EXPECT_TRUE(alone.router.client_replica_group_id.empty());
    config none = ice(client);
    EXPECT_TRUE(none.router.client_adapter_id.empty());
    EXPECT_TRUE(none.router.client_replica_group_id.empty());
}

TEST_F(config_files, ice_client_adapter_id_without_locator_stops_startup) {
    EXPECT_EQ(ice_error(client + "Glacier2.Client.AdapterId=R1\n"),
              cfg_file() + ":2: Glacier2.Client.AdapterId: 'R1': the client endpoints are registered with a "
                           "locator, and none is configured (Ice.Default.Locator, YAML locator.proxy)");
    // Glacier2.Client.Locator is not what the adapter registers with: still refused.
    EXPECT_NE(ice_error(client + "Glacier2.Client.Locator=IceGrid/Locator:tcp -p 4061\nGlacier2.Client.AdapterId=R1\n")
                  .find("none is configured"),
              std::string::npos);
    EXPECT_EQ(ice_error(client + ice_locator + "Glacier2.Client.ReplicaGroupId=RouterGroup\n"),
              cfg_file() + ":3: Glacier2.Client.ReplicaGroupId: a replica group is joined by an adapter: set "
                           "Glacier2.Client.AdapterId too (each router its own id)");
}

// Every key of Ice 3.7.8's property table for Glacier2 (142 names; docs/properties.md) is known:
// honoured, or accepted with its warning, never reported as an unknown property.
std::vector<std::string> documented_glacier2_keys() {
    std::vector<std::string> keys = {"AddConnectionContext", "CryptPasswords", "InstanceName", "PermissionsVerifier",
                                     "ReturnClientProxy", "RoutingTable.MaxSize", "SSLPermissionsVerifier",
                                     "SSLSessionManager", "SessionManager", "SessionTimeout", "Trace.RoutingTable",
                                     "Trace.Session", "Filter.AdapterId.Accept", "Filter.Address.Accept",
                                     "Filter.Address.Reject", "Filter.Category.Accept", "Filter.Category.AcceptUser",
                                     "Filter.Identity.Accept", "Filter.ProxySizeMax"};
    const std::vector<std::string> proxy_subs = {"EndpointSelection", "ConnectionCached", "PreferSecure",
                                                 "LocatorCacheTimeout", "InvocationTimeout", "Locator", "Router",
                                                 "CollocationOptimized", "Context.x"};
    for (const std::string proxy : {"PermissionsVerifier", "SSLPermissionsVerifier", "SessionManager", "SSLSessionManager"})
        for (const auto& sub : proxy_subs) keys.push_back(proxy + "." + sub);
    for (const std::string direction : {"Client.", "Server."}) {
        for (const std::string k : {"ACM", "ACM.Close", "ACM.Heartbeat", "ACM.Timeout", "AdapterId", "AlwaysBatch",
                                    "Buffered", "Endpoints", "ForwardContext", "Locator", "MessageSizeMax",
                                    "ProxyOptions", "PublishedEndpoints", "ReplicaGroupId", "Router", "SleepTime",
                                    "ThreadPool.Serialize", "ThreadPool.Size", "ThreadPool.SizeMax",
                                    "ThreadPool.SizeWarn", "ThreadPool.StackSize", "ThreadPool.ThreadIdleTime",
                                    "ThreadPool.ThreadPriority", "Trace.Override", "Trace.Request"})
            keys.push_back(direction + k);
        for (const auto& sub : proxy_subs) {
            keys.push_back(direction + "Locator." + sub);
            keys.push_back(direction + "Router." + sub);
        }
    }
    keys.push_back("Client.Trace.Reject");
    for (auto& k : keys) k = "Glacier2." + k;
    return keys;
}

TEST_F(config_files, ice_every_documented_glacier2_key_is_known) {
    const fs::path pw = write_passwords();
    const auto keys = documented_glacier2_keys();
    EXPECT_EQ(keys.size(), 142u);
    auto value_of = [&](const std::string& key) -> std::string {
        if (key.ends_with("Endpoints")) return "tcp -h 127.0.0.1 -p 4070";
        if (key == "Glacier2.CryptPasswords") return pw.string();
        if (key.starts_with("Glacier2.Filter.Address.")) return "127.0.0.1";
        if (key == "Glacier2.Filter.Identity.Accept") return "a/b";
        for (const char* proxy : {"PermissionsVerifier", "SessionManager", "Locator", "Router"})
            if (key.ends_with(proxy)) return "x:tcp -h 127.0.0.1 -p 1";
        return "1";
    };
    // The client adapter's id and replica group are honoured, so they need a locator (and the group an id).
    auto needs = [](const std::string& key) -> std::string {
        const std::string locator = "Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n";
        if (key == "Glacier2.Client.AdapterId") return locator;
        if (key == "Glacier2.Client.ReplicaGroupId") return locator + "Glacier2.Client.AdapterId=R1\n";
        return "";
    };
    for (const auto& key : keys) {
        config cfg = ice(client + needs(key) + key + "=" + value_of(key) + "\n");
        EXPECT_FALSE(has_warning(cfg, "unknown property")) << key << ": " << cfg.warnings.front();
    }
}

// The category filter of Glacier2 before 3.7: refused rather than silently open.
TEST_F(config_files, ice_removed_category_filter_is_refused) {
    for (const std::string key : {"Glacier2.AllowCategories", "Glacier2.AddUserToAllowCategories"}) {
        const std::string e = ice_error(client + key + "=x\n");
        EXPECT_NE(e.find(cfg_file() + ":2: " + key + ": "), std::string::npos) << e;
        EXPECT_NE(e.find("Glacier2.Filter.Category.Accept"), std::string::npos) << e;
    }
}

const std::string topics = "IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 10000\n"
                           "IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 10001\n";

TEST_F(config_files, ice_noop_icestorm_keys_are_warnings) {
    for (const std::string line :
         {"IceStorm.Flush.Timeout=500", "IceStorm.LMDB.MapSize=100",
          "IceStorm.Trace.Election=1", "IceStorm.Trace.Replication=1", "IceStorm.Election.ElectionTimeout=10",
          "IceStorm.Election.MasterTimeout=10", "IceStorm.Election.ResponseTimeout=10",
          "IceStorm.TopicManager.ThreadPool.Size=4", "IceStorm.Publish.AdapterId=p"}) {
        const std::string key = line.substr(0, line.find('='));
        config cfg = ice(client + topics + "IceStorm.Transient=1\n" + line + "\n");
        ASSERT_EQ(cfg.warnings.size(), 1u) << line;
        EXPECT_EQ(cfg.warnings[0].rfind(cfg_file() + ":5: " + key + ": accepted, has no effect in Moraine (", 0), 0u)
            << cfg.warnings[0];
    }
    EXPECT_TRUE(has_warning(ice(client + topics + "IceStorm.Tranzient=1\n"), ":4: IceStorm.Tranzient: unknown property"));
    // Trace categories are read (docs/icestorm.md §7): no warning.
    config traced = ice(client + topics + "IceStorm.Transient=1\nIceStorm.Trace.Topic=1\nIceStorm.Trace.TopicManager=2\n"
                                          "IceStorm.Trace.Subscriber=1\n");
    EXPECT_TRUE(traced.warnings.empty());
    EXPECT_EQ(traced.topics.trace.topic, 1);
    EXPECT_EQ(traced.topics.trace.topic_manager, 2);
    EXPECT_EQ(traced.topics.trace.subscriber, 1);
    // The topic database: IceStorm.LMDB.Path is its directory (default `IceStorm`, as IceStorm's),
    // unless IceStorm.Transient=1; no warning either way.
    EXPECT_EQ(ice(client + topics).topics.store_dir, "IceStorm");
    EXPECT_FALSE(ice(client + topics).topics.transient);
    EXPECT_EQ(ice(client + topics + "IceStorm.LMDB.Path=db\n").topics.store_dir, "db");
    EXPECT_TRUE(ice(client + topics + "IceStorm.LMDB.Path=db\n").warnings.empty());
    EXPECT_TRUE(ice(client + topics + "IceStorm.Transient=1\n").topics.transient);
    EXPECT_EQ(ice(client + topics + "IceStorm.Transient=1\n").topics.store_dir, "");
    EXPECT_TRUE(ice(client + topics + "IceStorm.Transient=1\n").warnings.empty());
    // Subscriber delivery keys are read (icestorm-bridge/src/config.cpp): no warning.
    EXPECT_TRUE(ice(client + topics + "IceStorm.Transient=1\nIceStorm.Send.Timeout=1000\nIceStorm.Send.QueueSizeMax=10\n"
                    "IceStorm.Send.QueueSizeMaxPolicy=DropEvents\nIceStorm.Discard.Interval=10\n")
                    .warnings.empty());
}

TEST_F(config_files, ice_icestorm_replication_is_refused) {
    for (const std::string line :
         {"IceStorm.NodeId=1", "IceStorm.Nodes.1=IceStorm1/node:tcp -p 13000", "IceStorm.Node.Endpoints=tcp -p 13000",
          "IceStorm.ReplicatedTopicManagerEndpoints=tcp -p 10000", "IceStorm.ReplicatedPublishEndpoints=tcp -p 10001"}) {
        const std::string key = line.substr(0, line.find('='));
        const std::string e = ice_error(client + topics + line + "\n");
        EXPECT_NE(e.find(cfg_file() + ":4: " + key + ": IceStorm replication is not supported"), std::string::npos) << e;
    }
}

TEST_F(config_files, yaml_trace_levels) {
    config cfg = yaml("client:\n  endpoints: \"tcp -p 4063\"\ntrace:\n  client_request: 1\n  client_override: 2\n"
                      "  client_reject: 3\n  server_request: 4\n  server_override: 5\n  routing_table: 6\n  session: 7\n");
    const auto& t = cfg.router.trace;
    EXPECT_EQ(t.client_request, 1);
    EXPECT_EQ(t.client_override, 2);
    EXPECT_EQ(t.client_reject, 3);
    EXPECT_EQ(t.server_request, 4);
    EXPECT_EQ(t.server_override, 5);
    EXPECT_EQ(t.routing_table, 6);
    EXPECT_EQ(t.session, 7);
    EXPECT_NE(yaml_error("client:\n  endpoints: \"tcp -p 4063\"\ntrace:\n  sessions: 1\n").find("trace.sessions"),
              std::string::npos);
}

TEST_F(config_files, heartbeats_on_idle_client_connections) {
    EXPECT_EQ(ice(client).router.heartbeat_interval(), 30000);  // ACM 60 s: half of it
    EXPECT_EQ(ice(client + "Glacier2.SessionTimeout=30\n").router.heartbeat_interval(), 15000);
    EXPECT_EQ(ice(client + "Glacier2.SessionTimeout=120\n").router.heartbeat_interval(), 30000);  // below Ice 3.8's 60 s
    EXPECT_EQ(ice(client + "Glacier2.Client.ACM.Timeout=0\n").router.heartbeat_interval(), 30000);
    EXPECT_EQ(ice(client + "Glacier2.Client.ACM.Heartbeat=0\n").router.heartbeat_interval(), 0);
    EXPECT_EQ(ice(client + "Glacier2.Client.ACM.Heartbeat=1\n").router.heartbeat_interval(), 0);
    EXPECT_EQ(ice(client + "Glacier2.Client.ACM.Heartbeat=3\n").router.heartbeat_interval(), 30000);
    EXPECT_TRUE(ice(client + "Glacier2.Client.ACM.Heartbeat=3\n").router.heartbeat_always);
    EXPECT_FALSE(ice(client + "Glacier2.Client.ACM.Heartbeat=2\n").router.heartbeat_always);
    EXPECT_FALSE(ice(client).router.heartbeat_always);
    EXPECT_EQ(ice(client + "Ice.ACM.Heartbeat=0\n").router.heartbeat_interval(), 0);
    EXPECT_EQ(ice(client + "Ice.ACM.Heartbeat=0\nGlacier2.Client.ACM.Heartbeat=2\n").router.heartbeat_interval(), 30000);
    EXPECT_EQ(ice(client + "Moraine.Client.HeartbeatInterval=5000\n").router.heartbeat_interval(), 5000);
    EXPECT_NE(ice_error(client + "Glacier2.Client.ACM.Heartbeat=4\n").find("Glacier2.Client.ACM.Heartbeat"),
              std::string::npos);
    EXPECT_EQ(yaml("client:\n  endpoints: \"tcp -p 4063\"\n").router.heartbeat_interval(), 30000);
    EXPECT_EQ(yaml("client:\n  endpoints: \"tcp -p 4063\"\n  heartbeat_interval_ms: 0\n").router.heartbeat_interval(), 0);
    EXPECT_TRUE(yaml("client:\n  endpoints: \"tcp -p 4063\"\n  heartbeat_always: true\n").router.heartbeat_always);
    EXPECT_EQ(yaml("client:\n  endpoints: \"tcp -p 4063\"\n  heartbeat_interval_ms: 2500\n").router.heartbeat_interval(),
              2500);
}

TEST_F(config_files, endpoint_selection) {
    EXPECT_FALSE(ice(client).runtime.endpoints_ordered);  // Ice's default: Random
    EXPECT_TRUE(ice(client + "Ice.Default.EndpointSelection=Ordered\n").runtime.endpoints_ordered);
    EXPECT_FALSE(ice(client + "Ice.Default.EndpointSelection=Random\n").runtime.endpoints_ordered);
    EXPECT_NE(ice_error(client + "Ice.Default.EndpointSelection=ordered\n").find("expected Random or Ordered"),
              std::string::npos);
    EXPECT_TRUE(yaml("client:\n  endpoints: \"tcp -p 4063\"\nlimits:\n  endpoint_selection: ordered\n")
                    .runtime.endpoints_ordered);
    EXPECT_NE(yaml_error("client:\n  endpoints: \"tcp -p 4063\"\nlimits:\n  endpoint_selection: first\n")
                  .find("limits.endpoint_selection"),
              std::string::npos);
}

TEST_F(config_files, ice_unsupported_settings_are_named) {
    config cfg = ice(client + "Glacier2.Client.SleepTime=100\nGlacier2.SSLSessionManager=s:tcp -p 1\n"
                              "Glacier2.Client.MessageSizeMax=64\n");
    EXPECT_FALSE(has_warning(cfg, "Glacier2.Client.SleepTime"));  // buffered mode is served
    EXPECT_EQ(cfg.router.client_sleep_time_ms, 100);
    EXPECT_FALSE(has_warning(cfg, "Glacier2.SSLSessionManager"));  // served since TLS landed
    EXPECT_EQ(cfg.router.ssl_session_manager, "s:tcp -p 1");
    EXPECT_TRUE(has_warning(cfg, "Glacier2.Client.MessageSizeMax: accepted, has no effect in Moraine"));
}

TEST_F(config_files, ice_buffered_mode_settings) {
    config cfg = ice(client + "Glacier2.Client.SleepTime=250\nGlacier2.Server.SleepTime=40\n"
                              "Glacier2.Server.AlwaysBatch=1\n");
    EXPECT_TRUE(cfg.router.client_buffered);  // glacier2router's default
    EXPECT_EQ(cfg.router.client_sleep_time_ms, 250);
    EXPECT_EQ(cfg.router.server_sleep_time_ms, 40);
    EXPECT_TRUE(cfg.warnings.empty()) << cfg.warnings.front();
    EXPECT_EQ(ice_error(client + "Glacier2.Server.SleepTime=600000\n"),
              cfg_file() + ":2: Glacier2.Server.SleepTime: 600000 is out of range [0, 60000]");
    // Without buffering they have nothing to act on: said, not silently dropped.
    config unbuffered = ice(client + "Glacier2.Client.Buffered=0\nGlacier2.Client.SleepTime=250\n"
                                     "Glacier2.Client.AlwaysBatch=1\nGlacier2.Server.AlwaysBatch=1\n");
    EXPECT_TRUE(has_warning(unbuffered, "Glacier2.Client.SleepTime: has no effect with Glacier2.Client.Buffered=0"));
    EXPECT_TRUE(has_warning(unbuffered, "Glacier2.Client.AlwaysBatch: has no effect with Glacier2.Client.Buffered=0"));
    EXPECT_FALSE(has_warning(unbuffered, "Glacier2.Server.AlwaysBatch"));
    config y = yaml("client:\n  endpoints: \"tcp -h 127.0.0.1 -p 4063\"\n  buffered: true\n  sleep_time_ms: 30\n");
    EXPECT_TRUE(y.router.client_buffered);
    EXPECT_EQ(y.router.client_sleep_time_ms, 30);
}

TEST_F(config_files, ice_shipped_glacier2_cfg_loads) {
    fs::path old = fs::current_path();
    fs::current_path(source_dir);  // its password path is relative to the repository root
    config cfg = load_ice_config("conf/glacier2.cfg");
    fs::current_path(old);
    EXPECT_TRUE(cfg.warnings.empty()) << cfg.warnings.front();
    EXPECT_EQ(cfg.router.auth, auth_mode::crypt_file);
    EXPECT_EQ(fs::path(cfg.router.crypt_passwords), source_dir / "conf/passwords");
    EXPECT_TRUE(cfg.topics.enabled);
}

// ===== YAML =====================================================================================

const std::string yaml_client = "client:\n  endpoints: \"tcp -h 127.0.0.1 -p 4063\"\n";

TEST_F(config_files, yaml_minimal_file_gets_moraine_defaults) {
    config cfg = yaml(yaml_client);
    EXPECT_EQ(cfg.source, yaml_file());
    EXPECT_EQ(cfg.router.instance_name, "Glacier2");
    EXPECT_EQ(cfg.router.client_endpoints.at(0).port, 4063);
    EXPECT_FALSE(cfg.router.client_buffered);  // Moraine forwards unbuffered unless asked
    EXPECT_FALSE(cfg.router.server_buffered);
    EXPECT_EQ(cfg.router.auth, auth_mode::none);
    EXPECT_EQ(cfg.router.session_timeout_s, 0);
    EXPECT_EQ(cfg.router.acm_timeout_s, 60);
    EXPECT_EQ(cfg.router.routing_table_max, 1000u);
    EXPECT_EQ(cfg.runtime.message_size_max, 1024u * 1024u);
    EXPECT_FALSE(cfg.topics.enabled);
    EXPECT_TRUE(cfg.warnings.empty());
}

TEST_F(config_files, yaml_client_adapter_id_and_replica_group) {
    const std::string locator = "locator:\n  proxy: \"IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\"\n";
    config cfg = yaml(yaml_client + "  adapter_id: R2\n  replica_group_id: RouterGroup\n" + locator);
    EXPECT_EQ(cfg.router.client_adapter_id, "R2");
    EXPECT_EQ(cfg.router.client_replica_group_id, "RouterGroup");
    EXPECT_EQ(yaml_error(yaml_client + "  adapter_id: R2\n"),
              yaml_file() + ": client.adapter_id: 'R2': the client endpoints are registered with a locator, and "
                            "none is configured (Ice.Default.Locator, YAML locator.proxy)");
    EXPECT_NE(yaml_error(yaml_client + "  replica_group_id: RouterGroup\n" + locator).find(
                  "client.replica_group_id: a replica group is joined by an adapter: set client.adapter_id too"),
              std::string::npos);
}

TEST_F(config_files, yaml_shipped_moraine_yaml) {
    config cfg = load_yaml_config(source_dir / "conf/moraine.yaml");
    EXPECT_EQ(endpoints_string(cfg.router.client_endpoints), "tcp -h 127.0.0.1 -p 4063 -t 60000");
    EXPECT_EQ(endpoints_string(cfg.router.server_endpoints), "tcp -h 127.0.0.1 -p 4064 -t 60000");
    EXPECT_TRUE(cfg.router.server_published_endpoints.empty());
    EXPECT_EQ(cfg.router.auth, auth_mode::crypt_file);
    EXPECT_EQ(fs::path(cfg.router.crypt_passwords), source_dir / "conf/passwords");
    EXPECT_EQ(cfg.router.session_timeout_s, 30);
    EXPECT_EQ(cfg.router.acm_timeout_s, 30);
    EXPECT_FALSE(cfg.router.client_buffered);
    EXPECT_TRUE(cfg.topics.enabled);
    EXPECT_EQ(cfg.topics.instance_name, "IceStorm");
    EXPECT_EQ(endpoints_string(cfg.topics.topic_manager_endpoints), "tcp -h 127.0.0.1 -p 10000 -t 60000");
    EXPECT_EQ(endpoints_string(cfg.topics.publish_endpoints), "tcp -h 127.0.0.1 -p 10001 -t 60000");
}

TEST_F(config_files, yaml_and_ice_demo_configs_agree) {
    config y = load_yaml_config(source_dir / "conf/moraine.yaml");
    fs::path old = fs::current_path();
    fs::current_path(source_dir);
    config i = load_ice_config("conf/glacier2.cfg");
    fs::current_path(old);
    EXPECT_EQ(y.router.instance_name, i.router.instance_name);
    EXPECT_EQ(y.runtime.threads, i.runtime.threads);
    EXPECT_EQ(y.router.client_endpoints, i.router.client_endpoints);
    EXPECT_EQ(y.router.server_endpoints, i.router.server_endpoints);
    EXPECT_EQ(y.router.server_published_endpoints, i.router.server_published_endpoints);
    EXPECT_EQ(y.router.client_forward_context, i.router.client_forward_context);
    EXPECT_EQ(y.router.server_forward_context, i.router.server_forward_context);
    EXPECT_EQ(y.router.client_buffered, i.router.client_buffered);
    EXPECT_EQ(y.router.server_buffered, i.router.server_buffered);
    EXPECT_EQ(y.router.client_always_batch, i.router.client_always_batch);
    EXPECT_EQ(y.router.server_always_batch, i.router.server_always_batch);
    EXPECT_EQ(y.router.return_client_proxy, i.router.return_client_proxy);
    EXPECT_EQ(y.router.add_connection_context, i.router.add_connection_context);
    EXPECT_EQ(y.router.session_timeout_s, i.router.session_timeout_s);
    EXPECT_EQ(y.router.acm_timeout_s, i.router.acm_timeout_s);
    EXPECT_EQ(y.router.routing_table_max, i.router.routing_table_max);
    EXPECT_EQ(y.router.auth, i.router.auth);
    EXPECT_EQ(fs::path(y.router.crypt_passwords), fs::path(i.router.crypt_passwords));
    EXPECT_EQ(y.router.permissions_verifier, i.router.permissions_verifier);
    EXPECT_EQ(y.router.session_manager, i.router.session_manager);
    EXPECT_EQ(y.router.ssl_permissions_verifier, i.router.ssl_permissions_verifier);
    EXPECT_EQ(y.router.filters.category_accept, i.router.filters.category_accept);
    EXPECT_EQ(y.router.filters.identity_accept, i.router.filters.identity_accept);
    EXPECT_EQ(y.router.filters.address_accept, i.router.filters.address_accept);
    EXPECT_EQ(y.router.filters.proxy_size_max, i.router.filters.proxy_size_max);
    EXPECT_EQ(y.runtime.message_size_max, i.runtime.message_size_max);
    EXPECT_EQ(y.runtime.connection_queue_high, i.runtime.connection_queue_high);
    EXPECT_EQ(y.runtime.connection_queue_low, i.runtime.connection_queue_low);
    EXPECT_EQ(y.runtime.connection_queue_max, i.runtime.connection_queue_max);
    EXPECT_EQ(y.runtime.backend_connect_timeout_ms, i.runtime.backend_connect_timeout_ms);
    EXPECT_EQ(y.topics.enabled, i.topics.enabled);
    EXPECT_EQ(y.topics.instance_name, i.topics.instance_name);
    EXPECT_EQ(y.topics.topic_manager_endpoints, i.topics.topic_manager_endpoints);
    EXPECT_EQ(y.topics.publish_endpoints, i.topics.publish_endpoints);
    EXPECT_EQ(y.topics.subscriber_queue_bytes, i.topics.subscriber_queue_bytes);
    EXPECT_TRUE(y.topics.transient);  // the clock demo keeps its topics in memory
    EXPECT_EQ(y.topics.transient, i.topics.transient);
}

TEST_F(config_files, yaml_every_key) {
    write_passwords("sub/pw");
    config cfg = yaml("instance_name: Edge\n"
                      "threads: 4\n"
                      "return_client_proxy: true\n"
                      "add_connection_context: 1\n"
                      "client:\n"
                      "  endpoints: [\"tcp -h 127.0.0.1 -p 4063\", \"tcp -h 127.0.0.1 -p 4073\"]\n"
                      "  forward_context: true\n"
                      "  buffered: true\n"
                      "  always_batch: true\n"
                      "  acm_timeout: 20\n"
                      "server:\n"
                      "  endpoints: tcp -h 127.0.0.1 -p 4064\n"
                      "  published_endpoints: tcp -h edge.example.com -p 4064\n"
                      "  forward_context: yes\n"
                      "  buffered: true\n"
                      "  always_batch: true\n"
                      "session:\n"
                      "  timeout: 30\n"
                      "  routing_table_max: 0\n"
                      "  manager: \"sm:tcp -h 127.0.0.1 -p 10010\"\n"
                      "auth:\n"
                      "  mode: crypt_file\n"
                      "  crypt_passwords: sub/pw\n"
                      "  ssl_permissions_verifier: Edge/NullSSLPermissionsVerifier\n"
                      "filters:\n"
                      "  category_accept: [IceStorm, cb]\n"
                      "  category_accept_user: 1\n"
                      "  identity_accept: [hello, \"IceStorm/TopicManager\"]\n"
                      "  adapter_id_accept:\n"
                      "    - A\n"
                      "  address_accept: [\"127.0.0.1:[4000-5000]\", \"10.0.*.*\"]\n"
                      "  address_reject: [10.0.0.1]\n"
                      "  proxy_size_max: 512\n"
                      "limits:\n"
                      "  message_size_max: 0\n"
                      "  connection_queue_high: 128KiB\n"
                      "  connection_queue_low: 32768\n"
                      "  connection_queue_max: 8 MiB\n"
                      "  backend_connect_timeout_ms: 2500\n"
                      "topics:\n"
                      "  enabled: true\n"
                      "  instance_name: Events\n"
                      "  topic_manager_endpoints: tcp -h 127.0.0.1 -p 10000\n"
                      "  topic_manager_published_endpoints: tcp -h tm.example.com -p 10000\n"
                      "  publish_endpoints: tcp -h 127.0.0.1 -p 10001\n"
                      "  publish_published_endpoints: tcp -h pub.example.com -p 10001\n"
                      "  subscriber_queue_bytes: 2MiB\n"
                      "  store: sub/topics-db\n");
    EXPECT_EQ(cfg.router.instance_name, "Edge");
    EXPECT_FALSE(cfg.topics.transient);
    EXPECT_EQ(cfg.topics.store_dir, (dir_ / "sub/topics-db").string());
    EXPECT_EQ(cfg.runtime.threads, 4u);
    EXPECT_TRUE(cfg.router.return_client_proxy);
    EXPECT_EQ(cfg.router.add_connection_context, 1);
    ASSERT_EQ(cfg.router.client_endpoints.size(), 2u);
    EXPECT_EQ(cfg.router.client_endpoints[1].port, 4073);
    EXPECT_TRUE(cfg.router.client_forward_context);
    EXPECT_TRUE(cfg.router.client_buffered);
    EXPECT_TRUE(cfg.router.client_always_batch);
    EXPECT_EQ(cfg.router.acm_timeout_s, 20);
    EXPECT_EQ(cfg.router.server_endpoints.at(0).port, 4064);
    EXPECT_EQ(cfg.router.server_published_endpoints.at(0).host, "edge.example.com");
    EXPECT_TRUE(cfg.router.server_forward_context);
    EXPECT_TRUE(cfg.router.server_buffered);
    EXPECT_TRUE(cfg.router.server_always_batch);
    EXPECT_EQ(cfg.router.session_timeout_s, 30);
    EXPECT_EQ(cfg.router.routing_table_max, 0u);
    EXPECT_EQ(cfg.router.session_manager, "sm:tcp -h 127.0.0.1 -p 10010");
    EXPECT_EQ(cfg.router.auth, auth_mode::crypt_file);
    EXPECT_EQ(cfg.router.crypt_passwords, (dir_ / "sub/pw").string());
    EXPECT_EQ(cfg.router.ssl_permissions_verifier, "Edge/NullSSLPermissionsVerifier");
    EXPECT_EQ(cfg.router.filters.category_accept, (std::vector<std::string>{"IceStorm", "cb"}));
    EXPECT_EQ(cfg.router.filters.category_accept_user, 1);
    EXPECT_EQ(cfg.router.filters.identity_accept,
              (std::vector<moraine::protocol::identity>{{"hello", ""}, {"TopicManager", "IceStorm"}}));
    EXPECT_EQ(cfg.router.filters.adapter_id_accept, std::vector<std::string>{"A"});
    EXPECT_EQ(cfg.router.filters.address_accept, "127.0.0.1:[4000-5000] 10.0.*.*");
    EXPECT_EQ(cfg.router.filters.address_reject, "10.0.0.1");
    EXPECT_EQ(cfg.router.filters.proxy_size_max, 512u);
    EXPECT_EQ(cfg.runtime.message_size_max, 0u);
    EXPECT_EQ(cfg.runtime.connection_queue_high, 128u * 1024u);
    EXPECT_EQ(cfg.runtime.connection_queue_low, 32768u);
    EXPECT_EQ(cfg.runtime.connection_queue_max, 8u << 20);
    EXPECT_EQ(cfg.runtime.backend_connect_timeout_ms, 2500);
    EXPECT_TRUE(cfg.topics.enabled);
    EXPECT_EQ(cfg.topics.instance_name, "Events");
    EXPECT_EQ(cfg.topics.topic_manager_published_endpoints.at(0).host, "tm.example.com");
    EXPECT_EQ(cfg.topics.publish_published_endpoints.at(0).host, "pub.example.com");
    EXPECT_EQ(cfg.topics.subscriber_queue_bytes, 2u << 20);
}

TEST_F(config_files, yaml_relative_password_path_is_relative_to_the_yaml_file) {
    write_passwords("conf/pw");
    fs::path yaml_path = write("conf/moraine.yaml", yaml_client + "auth:\n  mode: crypt_file\n  crypt_passwords: pw\n");
    fs::path old = fs::current_path();
    fs::current_path(fs::temp_directory_path());  // anywhere but the config's directory
    config cfg = load_yaml_config(yaml_path);
    fs::current_path(old);
    EXPECT_EQ(cfg.router.crypt_passwords, (dir_ / "conf/pw").string());
}

TEST_F(config_files, yaml_unknown_keys_are_errors) {
    EXPECT_EQ(yaml_error(yaml_client + "sesion:\n  timeout: 3\n"),
              yaml_file() + ":3: sesion: unknown key (expected one of: instance_name, return_client_proxy, "
                            "add_connection_context, session, client, server, auth, filters, trace, threads, drain_timeout_ms, "
                            "log_level, limits, tls, locator, takeover, metrics, topics)");
    EXPECT_EQ(yaml_error("client:\n  endpoints: tcp -p 4063\n  endpoint: tcp -p 4064\n"),
              yaml_file() + ":3: client.endpoint: unknown key (expected one of: endpoints, forward_context, buffered, "
                            "always_batch, sleep_time_ms, acm_timeout, heartbeat_interval_ms, heartbeat_always, reuse_port, "
                            "adapter_id, replica_group_id)");
    EXPECT_NE(yaml_error(yaml_client + "filters:\n  category_acept: [a]\n").find(":4: filters.category_acept: unknown key"),
              std::string::npos);
}

TEST_F(config_files, operations_keys_from_yaml_and_properties) {
    auto c = yaml(yaml_client + "metrics:\n  listen: \"127.0.0.1:9464\"\ndrain_timeout_ms: 500\nlog_level: debug\n"
                                     "limits:\n  connections_per_address: 7\n"
                                     "session:\n  max_sessions: 9\n  setups_per_second_per_address: 4\n"
                                     "  login_backoff:\n    free_failures: 1\n    initial_ms: 200\n    max_ms: 800\n");
    EXPECT_TRUE(c.runtime.metrics.enabled);
    EXPECT_EQ(c.runtime.metrics.host, "127.0.0.1");
    EXPECT_EQ(c.runtime.metrics.port, 9464);
    EXPECT_EQ(c.runtime.drain_timeout_ms, 500);
    EXPECT_EQ(c.runtime.log_level, "debug");
    EXPECT_EQ(c.runtime.connections_per_address, 7u);
    EXPECT_EQ(c.router.admission.sessions_max, 9u);
    EXPECT_EQ(c.router.admission.setups_per_second, 4.0);
    EXPECT_EQ(c.router.admission.backoff_free_failures, 1u);
    EXPECT_EQ(c.router.admission.backoff_initial.count(), 200);
    EXPECT_EQ(c.router.admission.backoff_max.count(), 800);
    EXPECT_FALSE(yaml(yaml_client).runtime.metrics.enabled);  // off unless asked for
    EXPECT_EQ(yaml(yaml_client + "metrics:\n  listen: 9999\n").runtime.metrics.host, "127.0.0.1");  // loopback by default

    auto p = ice(client + "Moraine.Metrics.Listen=[::1]:0\nMoraine.Drain.Timeout=100\n"
                        "Moraine.Log.Level=warn\nMoraine.Limits.ConnectionsPerAddress=3\nMoraine.Limits.Sessions=2\n"
                        "Moraine.Limits.SessionSetupsPerSecond=5\nMoraine.LoginBackoff.FreeFailures=0\n"
                        "Moraine.LoginBackoff.Initial=0\nMoraine.LoginBackoff.Max=10\n");
    EXPECT_EQ(p.runtime.metrics.host, "::1");
    EXPECT_EQ(p.runtime.metrics.port, 0);
    EXPECT_EQ(p.runtime.drain_timeout_ms, 100);
    EXPECT_EQ(p.runtime.log_level, "warn");
    EXPECT_EQ(p.runtime.connections_per_address, 3u);
    EXPECT_EQ(p.router.admission.sessions_max, 2u);
    EXPECT_EQ(p.router.admission.setups_per_second, 5.0);
    EXPECT_FALSE(p.router.admission.backoff_enabled());
}

TEST_F(config_files, operations_keys_refused_with_the_key) {
    EXPECT_NE(yaml_error(yaml_client + "metrics:\n  listen: \"metrics.example:9464\"\n")
                  .find("metrics.listen: 'metrics.example:9464': the host must be an IP address"),
              std::string::npos);
    EXPECT_NE(yaml_error(yaml_client + "metrics:\n  listen: \"127.0.0.1:99999\"\n").find("expected HOST:PORT"), std::string::npos);
    EXPECT_NE(yaml_error(yaml_client + "log_level: loud\n").find("log_level: 'loud': expected trace"), std::string::npos);
    EXPECT_NE(yaml_error(yaml_client + "session:\n  login_backoff:\n    initial: 5\n").find("session.login_backoff.initial: unknown key"),
              std::string::npos);
}

TEST_F(config_files, yaml_type_errors_name_the_key_path) {
    EXPECT_EQ(yaml_error(yaml_client + "session:\n  timeout: thirty\n"),
              yaml_file() + ":4: session.timeout: expected an integer, got 'thirty'");
    EXPECT_EQ(yaml_error(yaml_client + "session:\n  timeout: -1\n"),
              yaml_file() + ":4: session.timeout: -1 is out of range [0, 2147483647]");
    EXPECT_EQ(yaml_error(yaml_client + "session:\n  timeout: [1]\n"), yaml_file() + ":4: session.timeout: expected an integer");
    EXPECT_EQ(yaml_error("client:\n  endpoints: tcp -p 4063\n  buffered: maybe\n"),
              yaml_file() + ":3: client.buffered: expected true or false, got 'maybe'");
    EXPECT_EQ(yaml_error(yaml_client + "filters:\n  category_accept: IceStorm\n"),
              yaml_file() + ":4: filters.category_accept: expected a list of strings");
    EXPECT_EQ(yaml_error(yaml_client + "limits:\n  message_size_max: 1XB\n"),
              yaml_file() + ":4: limits.message_size_max: expected a size in bytes such as 65536, 64KiB or 16MiB");
    EXPECT_EQ(yaml_error(yaml_client + "session: 5\n"), yaml_file() + ":3: session: expected a mapping of keys to values");
    EXPECT_EQ(yaml_error(yaml_client + "instance_name: {a: b}\n"), yaml_file() + ":3: instance_name: expected a string");
    EXPECT_EQ(yaml_error(yaml_client + "add_connection_context: 3\n"),
              yaml_file() + ":3: add_connection_context: 3 is out of range [0, 2]");
}

TEST_F(config_files, yaml_syntax_and_file_errors) {
    // The reason is yaml-cpp's own wording; file, line and "syntax" are ours.
    EXPECT_EQ(yaml_error("client:\n  endpoints: [unclosed\n").rfind(yaml_file() + ":3: syntax: end of sequence", 0), 0u);
    EXPECT_EQ(yaml_error(yaml_client + "client:\n  endpoints: tcp -p 1\n"), yaml_file() + ":3: client: duplicate key");
    EXPECT_EQ(error_of([&] { load_yaml_config(dir_ / "none.yaml"); }),
              (dir_ / "none.yaml").string() + ": open: No such file or directory");
    EXPECT_EQ(yaml_error("- a\n- b\n"), yaml_file() + ":1: (top): expected a mapping of keys to values");
}

TEST_F(config_files, yaml_endpoints) {
    EXPECT_EQ(yaml_error("instance_name: X\n"), yaml_file() + ": client.endpoints: required (the endpoints clients connect to)");
    EXPECT_EQ(yaml_error(""), yaml_file() + ": client.endpoints: required (the endpoints clients connect to)");
    EXPECT_EQ(yaml_error("client:\n  endpoints: tcp -p fortytwo\n"),
              yaml_file() + ":2: client.endpoints: not a valid Ice endpoint list: 'tcp -p fortytwo'");
    config cfg = yaml("client:\n  endpoints: tcp -h 127.0.0.1 -p 4063:tcp -h 127.0.0.1 -p 4073\n");
    EXPECT_EQ(cfg.router.client_endpoints.size(), 2u);
}

TEST_F(config_files, yaml_acm_timeout_defaults_to_session_timeout) {
    EXPECT_EQ(yaml(yaml_client + "session:\n  timeout: 30\n").router.acm_timeout_s, 30);
    EXPECT_EQ(yaml(yaml_client + "session:\n  timeout: 0\n").router.acm_timeout_s, 60);
    EXPECT_EQ(yaml("client:\n  endpoints: tcp -p 1\n  acm_timeout: 0\nsession:\n  timeout: 30\n").router.acm_timeout_s, 0);
}

TEST_F(config_files, yaml_auth_modes) {
    EXPECT_EQ(yaml(yaml_client + "auth:\n  mode: allow_all\n").router.auth, auth_mode::allow_all);
    EXPECT_EQ(yaml(yaml_client + "auth:\n  mode: none\n").router.auth, auth_mode::none);
    EXPECT_EQ(yaml(yaml_client + "auth:\n").router.auth, auth_mode::none);
    config v = yaml(yaml_client + "auth:\n  mode: verifier\n  permissions_verifier: \"v:tcp -p 10020\"\n");
    EXPECT_EQ(v.router.auth, auth_mode::verifier);
    EXPECT_EQ(v.router.permissions_verifier, "v:tcp -p 10020");
    EXPECT_EQ(yaml(yaml_client + "auth:\n  mode: verifier\n  permissions_verifier: Glacier2/NullPermissionsVerifier\n").router.auth,
              auth_mode::allow_all);
}

TEST_F(config_files, yaml_auth_errors) {
    write_passwords();
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  crypt_passwords: passwords\n"),
              yaml_file() + ": auth.mode: required (none, crypt_file, verifier or allow_all)");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: everyone\n"),
              yaml_file() + ":4: auth.mode: expected one of none, crypt_file, verifier, allow_all, got 'everyone'");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: allow_all\n  crypt_passwords: passwords\n"),
              yaml_file() + ":5: auth.crypt_passwords: only used with mode crypt_file");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: crypt_file\n  permissions_verifier: v:tcp -p 1\n"),
              yaml_file() + ":5: auth.permissions_verifier: only used with mode verifier");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: crypt_file\n"),
              yaml_file() + ": auth.crypt_passwords: required with mode crypt_file");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: verifier\n"),
              yaml_file() + ": auth.permissions_verifier: required with mode verifier");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: crypt_file\n  crypt_passwords: missing\n"),
              yaml_file() + ":5: auth.crypt_passwords: " + (dir_ / "missing").string() +
                  ": cannot open: No such file or directory");
    write("broken", "x y z\n");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: crypt_file\n  crypt_passwords: broken\n"),
              yaml_file() + ":5: auth.crypt_passwords: " + (dir_ / "broken").string() +
                  ":1: expected 'userId hash', found 3 fields");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: verifier\n  permissions_verifier: \"v:tcp -p x\"\n"),
              yaml_file() + ":5: auth.permissions_verifier: not a valid proxy: 'v:tcp -p x'");
    EXPECT_EQ(yaml_error(yaml_client + "auth:\n  mode: allow_all\n  extra: 1\n"),
              yaml_file() + ":5: auth.extra: unknown key (expected one of: mode, crypt_passwords, permissions_verifier, "
                            "ssl_permissions_verifier)");
}

TEST_F(config_files, yaml_filter_errors) {
    EXPECT_EQ(yaml_error(yaml_client + "filters:\n  address_reject: [\"127.0.0.1:*\"]\n"),
              yaml_file() + ":4: filters.address_reject: rule '127.0.0.1:*': expected number");
    EXPECT_EQ(yaml_error(yaml_client + "filters:\n  address_accept: [\"10.0.0.1 10.0.0.2\"]\n"),
              yaml_file() + ":4: filters.address_accept: one rule per list item, without spaces: '10.0.0.1 10.0.0.2'");
    EXPECT_EQ(yaml_error(yaml_client + "filters:\n  identity_accept: [\"a/b/c\"]\n"),
              yaml_file() + ":4: filters.identity_accept: not a valid identity: 'a/b/c'");
    EXPECT_EQ(yaml_error(yaml_client + "filters:\n  category_accept_user: 5\n"),
              yaml_file() + ":4: filters.category_accept_user: 5 is out of range [0, 2]");
}

TEST_F(config_files, yaml_limits_must_be_ordered) {
    EXPECT_EQ(yaml_error(yaml_client + "limits:\n  connection_queue_low: 1MiB\n"),
              yaml_file() + ": limits.connection_queue_low: must be below limits.connection_queue_high");
    EXPECT_EQ(yaml_error(yaml_client + "limits:\n  connection_queue_max: 100KiB\n"),
              yaml_file() + ": limits.connection_queue_high: must not exceed limits.connection_queue_max");
    EXPECT_EQ(yaml_error(yaml_client + "limits:\n  backend_connect_timeout_ms: 0\n"),
              yaml_file() + ":4: limits.backend_connect_timeout_ms: 0 is out of range [1, 2147483647]");
}

TEST_F(config_files, yaml_topics) {
    EXPECT_EQ(yaml_error(yaml_client + "topics:\n  enabled: true\n  publish_endpoints: tcp -p 10001\n"),
              yaml_file() + ": topics.topic_manager_endpoints: required when topics.enabled is true");
    EXPECT_EQ(yaml_error(yaml_client + "topics:\n  enabled: true\n  topic_manager_endpoints: tcp -p 10000\n"),
              yaml_file() + ": topics.publish_endpoints: required when topics.enabled is true");
    config off = yaml(yaml_client + "topics:\n  enabled: false\n  topic_manager_endpoints: tcp -p 10000\n");
    EXPECT_FALSE(off.topics.enabled);
    EXPECT_TRUE(off.topics.transient);  // moraine-topics serving such a file keeps topics in memory
    EXPECT_FALSE(yaml(yaml_client + "topics:\n  store: db\n").topics.transient);
    // Kept in a database unless transient, as IceStorm: the directory must be named.
    const std::string on = "topics:\n  enabled: true\n  topic_manager_endpoints: tcp -p 10000\n  publish_endpoints: tcp -p 10001\n";
    EXPECT_EQ(yaml_error(yaml_client + on),
              yaml_file() + ": topics.store: required unless topics.transient is true: the directory where topics, "
                            "subscribers and links are kept across restarts");
    EXPECT_EQ(yaml(yaml_client + on + "  transient: true\n  trace:\n    topic: 1\n    subscriber: 2\n").topics.trace.subscriber, 2);
    config mem = yaml(yaml_client + on + "  transient: true\n  store: ignored\n");
    EXPECT_TRUE(mem.topics.transient);
    EXPECT_EQ(mem.topics.store_dir, "");
    EXPECT_EQ(yaml(yaml_client + on + "  store: /var/lib/moraine/topics\n").topics.store_dir, "/var/lib/moraine/topics");
}

TEST_F(config_files, yaml_topics_upstream) {
    const std::string topics = "topics:\n  enabled: true\n  topic_manager_endpoints: tcp -h 127.0.0.1 -p 10000\n"
                               "  publish_endpoints: tcp -h 127.0.0.1 -p 10001\n  transient: true\n";
    config cfg = yaml(yaml_client + topics +
                      "  upstream:\n    topic_manager: \"Backbone/TopicManager:tcp -h 198.18.0.2 -p 10000\"\n"
                      "    topics: [time, news]\n    link_category: edge1\n"
                      "    endpoints: tcp -h 198.18.1.1 -p 10000\n    cost: 3\n    check_interval_ms: 500\n");
    const auto& u = cfg.topics.upstream;
    ASSERT_TRUE(u.topic_manager);
    EXPECT_EQ(u.topic_manager->id.category, "Backbone");
    EXPECT_EQ(u.topic_manager->endpoints.at(0).port, 10000);
    EXPECT_EQ(u.topics, (std::vector<std::string>{"time", "news"}));
    EXPECT_EQ(u.link_category, "edge1");
    EXPECT_EQ(u.endpoints.at(0).host, "198.18.1.1");
    EXPECT_EQ(u.cost, 3);
    EXPECT_EQ(u.check_interval_ms, 500u);

    EXPECT_FALSE(yaml(yaml_client + topics).topics.upstream.topic_manager);
    EXPECT_NE(yaml_error(yaml_client + topics + "  upstream:\n    topic_manager: \":tcp -p 1\"\n    topics: [t]\n")
                  .find("topics.upstream.topic_manager: expected a proxy"),
              std::string::npos)
        << "no identity";

    // A replicated IceStorm under IceGrid: its well-known TopicManager, found through the locator.
    const std::string indirect = "  upstream:\n    topic_manager: \"IceStorm/TopicManager\"\n    topics: [t]\n";
    EXPECT_NE(yaml_error(yaml_client + topics + indirect)
                  .find("topics.upstream.topic_manager: an indirect proxy (no endpoints: IceStorm/TopicManager"),
              std::string::npos);
    config via_locator = yaml(yaml_client + "locator:\n  proxy: \"IceGrid/Locator:tcp -h 198.18.0.2 -p 4061\"\n" + topics +
                              indirect);
    ASSERT_TRUE(via_locator.topics.upstream.topic_manager);
    EXPECT_TRUE(via_locator.topics.upstream.topic_manager->endpoints.empty());
    EXPECT_EQ(via_locator.topics.upstream.topic_manager->id.name, "TopicManager");
    EXPECT_EQ(via_locator.topics.upstream.topic_manager->id.category, "IceStorm");
    config replicas = yaml(yaml_client + topics +
                           "  upstream:\n    topic_manager: \"IceStorm/TopicManager:tcp -h 198.18.0.11 -p 10000:"
                           "tcp -h 198.18.0.12 -p 10000:tcp -h 198.18.0.13 -p 10000\"\n    topics: [t]\n");
    EXPECT_EQ(replicas.topics.upstream.topic_manager->endpoints.size(), 3u) << "one endpoint per replica";
    EXPECT_FALSE(replicas.topics.upstream.federated) << "replicas of one IceStorm unless said otherwise";
    // A federation of separate topic services: the topics are linked from each member.
    config members = yaml(yaml_client + topics +
                          "  upstream:\n    topic_manager: \"IceStorm/TopicManager:tcp -h 198.18.0.11 -p 10000:"
                          "tcp -h 198.18.0.12 -p 10000\"\n    topics: [t]\n    federated: true\n");
    EXPECT_TRUE(members.topics.upstream.federated);
    EXPECT_NE(yaml_error(yaml_client + "locator:\n  proxy: \"IceGrid/Locator:tcp -h 198.18.0.2 -p 4061\"\n" + topics +
                         indirect + "    federated: true\n")
                  .find("topics.upstream.federated: a federated upstream needs a TopicManager proxy with one endpoint "
                        "per member"),
              std::string::npos)
        << "a replica group names no members";
    EXPECT_NE(yaml_error(yaml_client + topics + "  upstream:\n    topic_manager: \"I/TopicManager:tcp -p 1\"\n")
                  .find("topics.upstream.topics: an upstream needs at least one topic"),
              std::string::npos);
    EXPECT_NE(yaml_error(yaml_client + topics + "  upstream:\n    topics: [t]\n    cost: -1\n").find("topics.upstream.cost"),
              std::string::npos);
    EXPECT_NE(yaml_error(yaml_client + topics + "  upstream:\n    topic: [t]\n").find("unknown key"), std::string::npos);
    EXPECT_NE(yaml_error(yaml_client + "topics:\n  upstream:\n    topic_manager: \"I/TopicManager:tcp -p 1\"\n"
                                       "    topics: [t]\n")
                  .find("topics.upstream: needs topics.enabled: true"),
              std::string::npos);
}

TEST_F(config_files, ice_topics_upstream) {
    const std::string topics = client + "IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 10000\n"
                                        "IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 10001\n";
    config cfg = ice(topics + "Moraine.Topics.Upstream.TopicManager=IceStorm/TopicManager:tcp -h 10.0.0.2 -p 10000\n"
                              "Moraine.Topics.Upstream.Topics=time news\nMoraine.Topics.Upstream.LinkCategory=edge2\n"
                              "Moraine.Topics.Upstream.CheckInterval=250\n");
    const auto& u = cfg.topics.upstream;
    ASSERT_TRUE(u.topic_manager);
    EXPECT_EQ(u.topics, (std::vector<std::string>{"time", "news"}));
    EXPECT_EQ(u.link_category, "edge2");
    EXPECT_EQ(u.check_interval_ms, 250u);
    EXPECT_TRUE(u.endpoints.empty());
    EXPECT_FALSE(u.federated);
    EXPECT_TRUE(ice(topics + "Moraine.Topics.Upstream.TopicManager=IceStorm/TopicManager:tcp -h 10.0.0.2 -p 10000:"
                             "tcp -h 10.0.0.3 -p 10000\nMoraine.Topics.Upstream.Topics=time\n"
                             "Moraine.Topics.Upstream.Federated=1\n")
                    .topics.upstream.federated);
    EXPECT_NE(ice_error(topics + "Moraine.Topics.Upstream.TopicManager=IceStorm/TopicManager:tcp -p 1\n")
                  .find("Moraine.Topics.Upstream.Topics: an upstream needs at least one topic"),
              std::string::npos);
    EXPECT_NE(ice_error(client + "Moraine.Topics.Upstream.TopicManager=IceStorm/TopicManager:tcp -p 1\n"
                                 "Moraine.Topics.Upstream.Topics=t\n")
                  .find("needs the topic service"),
              std::string::npos);
    const std::string indirect = "Moraine.Topics.Upstream.TopicManager=IceStorm/TopicManager@IceStorm.TopicManagerReplicaGroup\n"
                                 "Moraine.Topics.Upstream.Topics=t\n";
    EXPECT_NE(ice_error(topics + indirect)
                  .find("Moraine.Topics.Upstream.TopicManager: an indirect proxy (no endpoints: IceStorm/TopicManager"),
              std::string::npos);
    config via_locator = ice(topics + indirect + "Ice.Default.Locator=IceGrid/Locator:tcp -h 10.0.0.2 -p 4061\n");
    ASSERT_TRUE(via_locator.topics.upstream.topic_manager);
    EXPECT_EQ(via_locator.topics.upstream.topic_manager->adapter_id, "IceStorm.TopicManagerReplicaGroup");
}

TEST_F(config_files, yaml_null_values_take_defaults) {
    config cfg = yaml(yaml_client + "instance_name:\nsession:\n  timeout:\nserver:\n  endpoints:\n");
    EXPECT_EQ(cfg.router.instance_name, "Glacier2");
    EXPECT_EQ(cfg.router.session_timeout_s, 0);
    EXPECT_TRUE(cfg.router.server_endpoints.empty());
}

}  // namespace

// ===== Endpoints Moraine does not serve stop start-up ===========================================

TEST_F(config_files, unserved_endpoint_types_are_refused_naming_the_key) {
    EXPECT_NE(ice_error("Glacier2.Client.Endpoints=udp -h 127.0.0.1 -p 4063\n")
                  .find("Glacier2.Client.Endpoints: 'udp -h 127.0.0.1 -p 4063': udp endpoints are not served"),
              std::string::npos);
    // Why, on the client side: no datagram carries a session (docs/glacier2.md "udp").
    EXPECT_NE(ice_error("Glacier2.Client.Endpoints=tcp -p 4063:udp -p 4063\n").find("a datagram carries no session"),
              std::string::npos);
    EXPECT_NE(ice_error(client + "Glacier2.Server.Endpoints=ssl -h 127.0.0.1 -p 4064\n")
                  .find("an ssl or wss endpoint in Glacier2.Server.Endpoints needs a certificate"),
              std::string::npos);
    // wss is served, but only with a certificate: without one, start-up stops naming the key.
    EXPECT_NE(ice_error(client + "IceStorm.TopicManager.Endpoints=tcp -p 10000\nIceStorm.Publish.Endpoints=wss -p 10001\n")
                  .find("IceSSL.CertFile: an ssl or wss endpoint in IceStorm.Publish.Endpoints needs a certificate"),
              std::string::npos);
    EXPECT_NE(yaml_error("client:\n  endpoints: \"udp -h 127.0.0.1 -p 4063\"\n").find("client.endpoints: 'udp"),
              std::string::npos);
}

TEST_F(config_files, a_udp_server_endpoint_is_served_for_datagram_callbacks) {
    const config cfg = ice(client + "Glacier2.Server.Endpoints=tcp -h 127.0.0.1 -p 4064:udp -h 127.0.0.1 -p 4064\n");
    ASSERT_EQ(cfg.router.server_endpoints.size(), 2u);
    EXPECT_TRUE(cfg.router.server_endpoints[1].is_udp());
    EXPECT_EQ(yaml("server:\n  endpoints: \"udp -h 127.0.0.1 -p 4064\"\n" + std::string(yaml_client))
                  .router.server_endpoints.size(),
              1u);
}

// ===== TLS (IceSSL.* / tls:) ====================================================================

TEST_F(config_files, ice_tls_keys) {
    config cfg = ice(client + "Ice.Plugin.IceSSL=IceSSL:createIceSSL\nIceSSL.DefaultDir=certs\nIceSSL.CAs=ca.pem\n"
                              "IceSSL.CertFile=server.pem\nIceSSL.KeyFile=server.key\nIceSSL.Password=pw\n"
                              "IceSSL.VerifyPeer=1\nIceSSL.CheckCertName=1\nIceSSL.Protocols=tls1_2, tls1_3\n"
                              "IceSSL.Ciphers=HIGH\nIceSSL.Trace.Security=1\n"
                              "Glacier2.SSLPermissionsVerifier=Glacier2/NullSSLPermissionsVerifier\n");
    const auto& t = cfg.runtime.tls;
    EXPECT_TRUE(t.configured);
    EXPECT_FALSE(t.yaml);
    EXPECT_EQ(t.default_dir, "certs");
    EXPECT_EQ(t.cas, "ca.pem");
    EXPECT_EQ(t.cert_file, "server.pem");
    EXPECT_EQ(t.key_file, "server.key");
    EXPECT_EQ(t.password, "pw");
    EXPECT_EQ(t.verify_peer, 1);
    EXPECT_TRUE(t.check_cert_name);
    EXPECT_EQ(t.protocols, (std::vector<std::string>{"tls1_2", "tls1_3"}));
    EXPECT_EQ(t.ciphers, "HIGH");
    EXPECT_TRUE(cfg.router.ssl_allow_all);
    EXPECT_FALSE(ice(client).runtime.tls.configured);
}

TEST_F(config_files, ice_tls_keys_moraine_cannot_honour_stop_startup) {
    EXPECT_NE(ice_error(client + "IceSSL.TrustOnly=CN=bob\n").find("IceSSL.TrustOnly: not supported by Moraine"),
              std::string::npos);
    EXPECT_NE(ice_error(client + "IceSSL.VerifyPeer=3\n").find("IceSSL.VerifyPeer: 3 is out of range"), std::string::npos);
}

TEST_F(config_files, ssl_endpoint_without_certificate_is_refused) {
    EXPECT_NE(ice_error("Glacier2.Client.Endpoints=ssl -h 127.0.0.1 -p 4063\n")
                  .find("IceSSL.CertFile: an ssl or wss endpoint in Glacier2.Client.Endpoints needs a certificate"),
              std::string::npos);
    EXPECT_NE(yaml_error("client:\n  endpoints: \"ssl -h 127.0.0.1 -p 4063\"\n")
                  .find("tls.cert_file: an ssl or wss endpoint in client.endpoints needs a certificate"),
              std::string::npos);
    EXPECT_EQ(ice_error("Glacier2.Client.Endpoints=ssl -h 127.0.0.1 -p 4063\nIceSSL.CertFile=server.pem\n"), "no error");
}

TEST_F(config_files, yaml_tls_section_paths_are_relative_to_the_file) {
    config cfg = yaml("client:\n  endpoints: \"ssl -p 4063\"\ntls:\n  cert_file: server.pem\n  verify_peer: 0\n"
                      "  protocols: [tls1_3]\n  handshake_timeout_ms: 2500\n  handshake_threads: 3\n");
    const auto& t = cfg.runtime.tls;
    EXPECT_TRUE(t.configured);
    EXPECT_TRUE(t.yaml);
    EXPECT_EQ(fs::path(t.default_dir), dir_.lexically_normal() / "");
    EXPECT_EQ(t.verify_peer, 0);
    EXPECT_EQ(t.protocols, std::vector<std::string>{"tls1_3"});
    EXPECT_EQ(t.handshake_timeout_ms, 2500);
    EXPECT_EQ(t.handshake_threads, 3);
    EXPECT_NE(yaml_error("client:\n  endpoints: \"tcp -p 1\"\ntls:\n  handshake_threads: 65\n").find("handshake_threads"),
              std::string::npos);
    EXPECT_EQ(ice("Glacier2.Client.Endpoints=tcp -p 1\nMoraine.TLS.HandshakeThreads=0\n").runtime.tls.handshake_threads, 0);
    EXPECT_NE(yaml_error("client:\n  endpoints: \"tcp -p 1\"\ntls:\n  cert: x\n").find("tls.cert: unknown key"),
              std::string::npos);
}
