#include <moraine/app/app_config.hpp>
#include <moraine/app/ice_arguments.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace app = moraine::app;
namespace fs = std::filesystem;

TEST(ice_arguments, property_options_are_taken_out) {
    auto a = app::split_ice_arguments({"moraine-router", "--Ice.Config=a.cfg, b.cfg", "--threads", "1",
                                       "--Glacier2.Client.Endpoints=tcp -p 4063", "--Ice.Trace.Network",
                                       "--IceSSL.Password=", "--log-level=debug", "--Unknown.Key=1", "--Moraine.Log.Level=warn"});
    EXPECT_EQ(a.config_files, (std::vector<std::string>{"a.cfg", "b.cfg"}));
    EXPECT_EQ(a.rest, (std::vector<std::string>{"moraine-router", "--threads", "1", "--log-level=debug", "--Unknown.Key=1"}));
    ASSERT_EQ(a.overrides.size(), 4u);
    EXPECT_EQ(a.overrides.at("Glacier2.Client.Endpoints").value, "tcp -p 4063");
    EXPECT_EQ(a.overrides.at("Ice.Trace.Network").value, "1");  // a bare --P.Key is "1", as in Ice
    EXPECT_EQ(a.overrides.at("IceSSL.Password").value, "");     // kept: it unsets the file's
    EXPECT_EQ(a.overrides.at("Moraine.Log.Level").origin, "command line (--Moraine.Log.Level)");
    EXPECT_TRUE(a.any());
    EXPECT_FALSE(app::split_ice_arguments({"moraine-router", "--config", "x.yaml"}).any());
}

TEST(ice_arguments, command_line_wins_over_files_and_unsets) {
    const auto dir = fs::temp_directory_path() / ("moraine_ice_args_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto write = [&](const char* name, const char* text) {
        std::ofstream(dir / name) << text;
        return dir / name;
    };
    const auto a = write("a.cfg", "Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p 4063\nGlacier2.SessionTimeout=10\n"
                                  "Glacier2.Filter.Category.Accept=one\n");
    const auto b = write("b.cfg", "Glacier2.SessionTimeout=20\n");
    auto args = app::split_ice_arguments({"x", "--Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p 5000",
                                          "--Glacier2.Filter.Category.Accept="});
    auto cfg = app::load_ice_config({a, b}, args.overrides);
    EXPECT_EQ(cfg.router.client_endpoints.at(0).port, 5000);
    EXPECT_EQ(cfg.router.session_timeout_s, 20);  // the later file wins
    EXPECT_TRUE(cfg.router.filters.category_accept.empty());

    // No file at all: the options are the whole configuration, and errors name the option.
    auto only = app::load_ice_config({}, app::split_ice_arguments({"x", "--Glacier2.Client.Endpoints=tcp -p 5001"}).overrides);
    EXPECT_EQ(only.router.client_endpoints.at(0).port, 5001);
    try {
        app::load_ice_config({}, app::split_ice_arguments({"x", "--Glacier2.Client.Endpoints=tcp -p x"}).overrides);
        ADD_FAILURE() << "a bad endpoint was accepted";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("command line (--Glacier2.Client.Endpoints)"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}
