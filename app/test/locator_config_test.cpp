// Ice.Default.Locator / YAML locator: read, checked, and the per-proxy keys Moraine cannot honour.
#include <moraine/app/app_config.hpp>

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using moraine::net::config_error;

const std::string client = "Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p 4063\n";
const std::string yaml_client = "client:\n  endpoints: \"tcp -h 127.0.0.1 -p 4063\"\n";

class locator_config : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "moraine_locator_XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    moraine::app::app_config ice(const std::string& text) {
        std::ofstream(dir_ / "router.cfg") << text;
        return moraine::app::load_ice_config(dir_ / "router.cfg");
    }
    moraine::app::app_config yaml(const std::string& text) {
        std::ofstream(dir_ / "moraine.yaml") << text;
        return moraine::app::load_yaml_config(dir_ / "moraine.yaml");
    }
    template <class Load>
    static std::string error_of(Load load) {
        try {
            load();
        } catch (const config_error& e) {
            return e.what();
        }
        return "no error";
    }
    fs::path dir_;
};

bool has_warning(const moraine::app::app_config& cfg, const std::string& part) {
    return std::any_of(cfg.warnings.begin(), cfg.warnings.end(),
                       [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

}  // namespace

TEST_F(locator_config, none_by_default) {
    auto cfg = ice(client);
    EXPECT_FALSE(cfg.runtime.locator);
    EXPECT_EQ(cfg.runtime.locator_cache_timeout_s, -1);
}

TEST_F(locator_config, ice_properties) {
    auto cfg = ice(client + "Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n"
                            "Ice.Default.LocatorCacheTimeout=30\n");
    ASSERT_TRUE(cfg.runtime.locator);
    EXPECT_EQ(cfg.runtime.locator->id.category, "IceGrid");
    EXPECT_EQ(cfg.runtime.locator->endpoints.at(0).port, 4061);
    EXPECT_EQ(cfg.runtime.locator_cache_timeout_s, 30);
}

TEST_F(locator_config, yaml_section) {
    auto cfg = yaml(yaml_client + "locator:\n  proxy: \"IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\"\n"
                                  "  cache_timeout_s: 0\n");
    ASSERT_TRUE(cfg.runtime.locator);
    EXPECT_EQ(cfg.runtime.locator_cache_timeout_s, 0);
    EXPECT_NE(error_of([&] { yaml(yaml_client + "locator:\n  proxy: \"x:tcp -p 1\"\n  cahce: 1\n"); }), "no error");
}

TEST_F(locator_config, the_locator_must_be_direct_and_reachable) {
    EXPECT_NE(error_of([&] { ice(client + "Ice.Default.Locator=IceGrid/Locator\n"); }).find("must be a direct proxy"),
              std::string::npos);
    EXPECT_NE(error_of([&] { ice(client + "Ice.Default.Locator=IceGrid/Locator@Registry\n"); })
                  .find("must be a direct proxy"),
              std::string::npos);
    EXPECT_NE(error_of([&] { ice(client + "Ice.Default.Locator=IceGrid/Locator:udp -h 127.0.0.1 -p 1\n"); })
                  .find("no tcp or ws endpoint"),
              std::string::npos);
    EXPECT_NE(error_of([&] { ice(client + "Ice.Default.Locator=IceGrid/Locator:tcp -p x\n"); }).find("not a valid proxy"),
              std::string::npos);
    EXPECT_NE(error_of([&] { ice(client + "Ice.Default.LocatorCacheTimeout=-2\n"); }).find("out of range"),
              std::string::npos);
}

TEST_F(locator_config, a_proxy_locator_of_its_own_stops_startup) {
    const std::string locator = "Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n";
    const std::string err = error_of([&] {
        ice(client + locator + "Glacier2.PermissionsVerifier=verifier\n"
                               "Glacier2.PermissionsVerifier.Locator=Other/Locator:tcp -h 127.0.0.1 -p 9\n");
    });
    EXPECT_NE(err.find("Glacier2.PermissionsVerifier.Locator: a locator of its own is not supported"), std::string::npos)
        << err;
    // The same locator as Ice.Default.Locator is what Moraine does anyway.
    auto same = ice(client + locator + "Glacier2.SessionManager=manager\n"
                                       "Glacier2.SessionManager.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n"
                                       "Glacier2.SessionManager.LocatorCacheTimeout=600\n");
    EXPECT_TRUE(has_warning(same, "Glacier2.SessionManager.LocatorCacheTimeout: accepted, has no effect in Moraine"));
    EXPECT_EQ(same.warnings.size(), 2u);  // that key and the .Locator, once each
}

TEST_F(locator_config, an_indirect_verifier_without_a_locator_is_warned_about) {
    EXPECT_TRUE(has_warning(ice(client + "Glacier2.PermissionsVerifier=verifier@Auth\n"),
                            "the PermissionsVerifier 'verifier@Auth' is an indirect proxy but no locator"));
    EXPECT_FALSE(has_warning(ice(client + "Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier\n"),
                             "indirect proxy"));
    EXPECT_FALSE(has_warning(ice(client + "Glacier2.SSLPermissionsVerifier=Glacier2/NullSSLPermissionsVerifier\n"),
                             "indirect proxy"));
    EXPECT_FALSE(has_warning(ice(client + "Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p 4061\n"
                                          "Glacier2.SessionManager=manager\n"),
                             "indirect proxy"));
}
