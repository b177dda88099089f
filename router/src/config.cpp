// Value checks shared by both configuration loaders (see config_common.hpp).
#include "config_common.hpp"

#include <moraine/session/crypt_password_file.hpp>
#include <moraine/session/filter_set.hpp>

#include <cctype>
#include <stdexcept>
#include <system_error>

namespace moraine::router::detail {

std::string where(const std::string& file, std::size_t line) {
    return line == 0 ? file : file + ":" + std::to_string(line);
}

std::vector<protocol::endpoint> parse_endpoints(std::string_view value, const std::string& at, const std::string& key) {
    bool blank = true;
    for (char c : value) blank = blank && std::isspace(static_cast<unsigned char>(c));
    if (blank) return {};
    auto endpoints = protocol::endpoints_from_string(value);
    if (!endpoints || endpoints->empty())
        throw config_error(at, key, "not a valid Ice endpoint list: '" + std::string(value) + "'");
    return *endpoints;
}

protocol::proxy parse_proxy(std::string_view value, const std::string& at, const std::string& key) {
    auto p = protocol::proxy_from_string(value);
    if (!p || p->is_nil()) throw config_error(at, key, "not a valid proxy: '" + std::string(value) + "'");
    return *p;
}

std::vector<std::string> split_words(std::string_view value, const std::string& at, const std::string& key) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < value.size()) {
        if (std::isspace(static_cast<unsigned char>(value[i]))) {
            ++i;
            continue;
        }
        std::string word;
        while (i < value.size() && !std::isspace(static_cast<unsigned char>(value[i]))) {
            char c = value[i++];
            if (c != '"' && c != '\'') {
                word += c;
                continue;
            }
            std::size_t close = value.find(c, i);
            if (close == std::string_view::npos) throw config_error(at, key, std::string("unmatched ") + c);
            word.append(value.substr(i, close - i));
            i = close + 1;
        }
        words.push_back(std::move(word));
    }
    return words;
}

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

}  // namespace moraine::router::detail
