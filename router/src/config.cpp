// Value checks shared by both configuration loaders (see config_common.hpp).
#include "config_common.hpp"

#include <moraine/session/crypt_password_file.hpp>
#include <moraine/session/filter_set.hpp>

#include <cctype>
#include <stdexcept>
#include <system_error>

namespace moraine::router::detail {

std::vector<protocol::identity> parse_identities(const std::vector<std::string>& words, const std::string& at,
                                                 const std::string& key) {
    std::vector<protocol::identity> ids;
    for (const auto& w : words) {
        auto id = protocol::identity_from_string(w);
        if (!id) throw config_error(at, key, "not a valid identity: '" + w + "'");
        ids.push_back(std::move(*id));
    }
    return ids;
}

void check_address_rules(std::string_view rules, const std::string& at, const std::string& key) {
    try {
        session::validate_address_rules(rules);
    } catch (const std::invalid_argument& e) {
        throw config_error(at, key, e.what());
    }
}

std::string check_crypt_passwords(const std::filesystem::path& file, const std::string& at, const std::string& key) {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(file, ec);
    if (ec) absolute = file;
    try {
        (void)session::crypt_password_file::load(absolute);
    } catch (const std::exception& e) {
        throw config_error(at, key, e.what());
    }
    return absolute.string();
}

void set_permissions_verifier(config& cfg, std::string_view value, const std::string& at, const std::string& key) {
    protocol::proxy p = parse_proxy(value, at, key);
    if (p.id == protocol::identity{"NullPermissionsVerifier", cfg.instance_name}) {
        cfg.auth = auth_mode::allow_all;
        return;
    }
    cfg.auth = auth_mode::verifier;
    cfg.permissions_verifier = std::string(value);
}

void set_ssl_permissions_verifier(config& cfg, std::string_view value, const std::string& at, const std::string& key) {
    protocol::proxy p = parse_proxy(value, at, key);
    cfg.ssl_permissions_verifier = std::string(value);
    cfg.ssl_allow_all = p.id == protocol::identity{"NullSSLPermissionsVerifier", cfg.instance_name};
}

}  // namespace moraine::router::detail
