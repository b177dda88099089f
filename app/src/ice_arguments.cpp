// glacier2router's command line (see ice_arguments.hpp).
#include <moraine/app/ice_arguments.hpp>

#include <array>
#include <string_view>

namespace moraine::app {

namespace {

constexpr std::array<std::string_view, 7> prefixes{"Ice.", "IceSSL.", "IceStorm.", "Glacier2.", "IceBox.", "IceGrid.",
                                                   "Moraine."};

bool is_property_option(std::string_view name) {
    for (auto p : prefixes)
        if (name.starts_with(p) && name.size() > p.size()) return true;
    return false;
}

}  // namespace

ice_arguments split_ice_arguments(const std::vector<std::string>& args) {
    ice_arguments out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view a = args[i];
        if (i == 0 || !a.starts_with("--") || !is_property_option(a.substr(2, a.find('=') - 2))) {
            out.rest.push_back(args[i]);
            continue;
        }
        a.remove_prefix(2);
        const auto eq = a.find('=');
        const std::string key(a.substr(0, eq));
        std::string value = eq == std::string_view::npos ? "1" : std::string(a.substr(eq + 1));
        if (key == "Ice.Config") {
            std::string_view files = value;
            while (!files.empty()) {
                const auto comma = files.find(',');
                std::string_view f = files.substr(0, comma);
                while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
                while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
                if (!f.empty()) out.config_files.emplace_back(f);
                files = comma == std::string_view::npos ? std::string_view() : files.substr(comma + 1);
            }
            continue;
        }
        // An empty value stays in: it unsets the key of a file, as Ice's setProperty does.
        out.overrides[key] = net::property_value{std::move(value), 0, "command line (--" + key + ")"};
    }
    return out;
}

}  // namespace moraine::app
