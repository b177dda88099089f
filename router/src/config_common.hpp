#pragma once
// Checks shared by the YAML and Glacier2-property loaders (config_yaml.cpp, config_ice.cpp), so a
// value means the same thing, and fails with the same words, whichever file it came from.
// Private to moraine::router. Every function throws config_error(where, key, reason).
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/identity.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/config_values.hpp>
#include <moraine/router/config.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::router::detail {

using net::parse_endpoints;
using net::parse_proxy;
using net::split_words;
using net::where;

/// Stringified identities (`category/name`, escapes as in identity_to_string).
std::vector<protocol::identity> parse_identities(const std::vector<std::string>& words, const std::string& at,
                                                 const std::string& key);

/// Glacier2.Filter.Address.* syntax, checked with session::validate_address_rules.
void check_address_rules(std::string_view rules, const std::string& at, const std::string& key);

/// Loads the crypt password file once so a bad file stops startup; returns its absolute path.
std::string check_crypt_passwords(const std::filesystem::path& file, const std::string& at, const std::string& key);

/// Sets cfg.auth from a PermissionsVerifier proxy string: `<instance_name>/NullPermissionsVerifier`
/// is Glacier2's accept-everyone verifier (auth_mode::allow_all), anything else auth_mode::verifier.
void set_permissions_verifier(config& cfg, std::string_view value, const std::string& at, const std::string& key);

/// Sets cfg.ssl_permissions_verifier, and cfg.ssl_allow_all for `<instance_name>/NullSSLPermissionsVerifier`.
void set_ssl_permissions_verifier(config& cfg, std::string_view value, const std::string& at, const std::string& key);

}  // namespace moraine::router::detail
