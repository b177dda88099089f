// load_yaml_config: Moraine's own configuration format. conf/moraine.yaml documents every key;
// keep the two in step.
#include <moraine/router/config.hpp>

#include "config_common.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace moraine::router {
namespace {

// A YAML mapping being read. It hands out values by key and remembers which keys were read,
// so that finish() can refuse the rest: a misspelt key must stop startup, not be ignored.
class yaml_section {
public:
    yaml_section(const YAML::Node& node, std::string path, const std::string& file)
        : node_(node), path_(std::move(path)), file_(file) {
        if (node_.IsNull() || !node_.IsDefined()) return;
        if (!node_.IsMap()) fail(node_, "", "expected a mapping of keys to values");
        std::vector<std::string> seen;
        for (const auto& kv : node_) {
            if (!kv.first.IsScalar()) fail(kv.first, "", "keys must be plain strings");
            const std::string& key = kv.first.Scalar();
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) fail(kv.first, key, "duplicate key");
            seen.push_back(key);
        }
    }

    /// The value at `key`, or nullopt when absent or null (`key:` alone means "the default").
    std::optional<YAML::Node> take(std::string_view key) {
        taken_.emplace_back(key);
        if (!node_.IsMap()) return std::nullopt;
        YAML::Node v = node_[std::string(key)];
        if (!v.IsDefined() || v.IsNull()) return std::nullopt;
        return v;
    }

    yaml_section section(std::string_view key) {
        auto v = take(key);
        return yaml_section(v ? *v : YAML::Node(), path(key), file_);
    }

    /// Refuses every key that no reader asked for, naming the keys this section knows.
    void finish() const {
        if (!node_.IsMap()) return;
        for (const auto& kv : node_) {
            const std::string& key = kv.first.Scalar();
            if (std::find(taken_.begin(), taken_.end(), key) != taken_.end()) continue;
            std::string known;
            for (const auto& k : taken_) known += (known.empty() ? "" : ", ") + k;
            fail(kv.first, key, "unknown key (expected one of: " + known + ")");
        }
    }

    [[noreturn]] void fail(const YAML::Node& at, std::string_view key, const std::string& reason) const {
        const YAML::Mark m = at.Mark();
        std::size_t line = m.is_null() ? 0 : static_cast<std::size_t>(m.line) + 1;
        throw config_error(detail::where(file_, line), key.empty() ? (path_.empty() ? "(top)" : path_) : path(key),
                           reason);
    }

    /// Where a value of this section sits, for errors raised after reading it.
    std::string at(const YAML::Node& v) const {
        const YAML::Mark m = v.Mark();
        return detail::where(file_, m.is_null() ? 0 : static_cast<std::size_t>(m.line) + 1);
    }

    std::string path(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
    const std::string& file() const noexcept { return file_; }
    /// False when the section is absent or null (`auth:` alone).
    bool present() const { return node_.IsMap(); }

    // Typed readers. Each leaves `out` unchanged when the key is absent or null.

    void read(std::string_view key, bool& out) {
        auto v = take(key);
        if (!v) return;
        if (!v->IsScalar()) fail(*v, key, "expected true or false");
        try {
            out = v->as<bool>();
        } catch (const YAML::BadConversion&) {
            fail(*v, key, "expected true or false, got '" + v->Scalar() + "'");
        }
    }

    void read(std::string_view key, std::string& out) {
        if (auto v = scalar(key, "expected a string")) out = v->text;
    }

    template <class T>
    void read_int(std::string_view key, long long min, long long max, T& out) {
        auto v = take(key);
        if (!v) return;
        long long n = 0;
        const std::string& s = v->IsScalar() ? v->Scalar() : std::string();
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (!v->IsScalar() || s.empty() || ec != std::errc{} || end != s.data() + s.size())
            fail(*v, key, "expected an integer" + (v->IsScalar() ? ", got '" + s + "'" : std::string()));
        if (n < min || n > max)
            fail(*v, key, std::to_string(n) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
        out = static_cast<T>(n);
    }

    /// A byte count: an integer, or a number with a unit: `512KiB`, `16 MiB`, `1GiB`, `100B`.
    void read_size(std::string_view key, std::size_t& out) {
        auto v = take(key);
        if (!v) return;
        if (auto n = v->IsScalar() ? parse_size(v->Scalar()) : std::nullopt) {
            out = *n;
            return;
        }
        fail(*v, key, "expected a size in bytes such as 65536, 64KiB or 16MiB");
    }

    /// A list of strings (`[a, b]` or one `- item` per line). `list_at` (optional) receives
    /// the list's "FILE:LINE" for errors the caller finds in the items.
    std::vector<std::string> read_list(std::string_view key, std::string* list_at = nullptr) {
        auto v = take(key);
        std::vector<std::string> out;
        if (list_at) *list_at = file_;
        if (!v) return out;
        if (!v->IsSequence()) fail(*v, key, "expected a list of strings");
        if (list_at) *list_at = at(*v);
        for (const auto& item : *v) {
            if (!item.IsScalar()) fail(item, key, "expected a list of strings");
            out.push_back(item.Scalar());
        }
        return out;
    }

    /// Ice endpoint strings: one string (`:`-separated list allowed), or a list of them.
    std::vector<protocol::endpoint> read_endpoints(std::string_view key) {
        auto v = take(key);
        std::vector<protocol::endpoint> out;
        if (!v) return out;
        if (v->IsScalar()) return detail::parse_endpoints(v->Scalar(), at(*v), path(key));
        if (!v->IsSequence()) fail(*v, key, "expected an Ice endpoint string or a list of them");
        for (const auto& item : *v) {
            if (!item.IsScalar()) fail(item, key, "expected an Ice endpoint string");
            auto some = detail::parse_endpoints(item.Scalar(), at(item), path(key));
            out.insert(out.end(), some.begin(), some.end());
        }
        return out;
    }

    /// A scalar's text and its "FILE:LINE", for values the caller checks further.
    struct located {
        std::string text;
        std::string at;
    };
    std::optional<located> scalar(std::string_view key, const std::string& expected) {
        auto v = take(key);
        if (!v) return std::nullopt;
        if (!v->IsScalar()) fail(*v, key, expected);
        return located{v->Scalar(), at(*v)};
    }

private:
    static std::optional<std::size_t> parse_size(const std::string& s) {
        unsigned long long n = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (ec != std::errc{} || end == s.data()) return std::nullopt;
        std::string_view unit(end, static_cast<std::size_t>(s.data() + s.size() - end));
        while (unit.starts_with(' ')) unit.remove_prefix(1);
        unsigned long long scale = unit.empty() || unit == "B" ? 1
                                   : unit == "KiB"              ? 1ull << 10
                                   : unit == "MiB"              ? 1ull << 20
                                   : unit == "GiB"              ? 1ull << 30
                                                                : 0;
        if (scale == 0 || n > SIZE_MAX / scale) return std::nullopt;
        return static_cast<std::size_t>(n * scale);
    }

    YAML::Node node_;
    std::string path_;
    const std::string& file_;
    std::vector<std::string> taken_;
};

void read_client(yaml_section s, config& cfg) {
    cfg.client_endpoints = s.read_endpoints("endpoints");
    if (cfg.client_endpoints.empty())
        throw config_error(s.file(), "client.endpoints", "required (the endpoints clients connect to)");
    s.read("forward_context", cfg.client_forward_context);
    s.read("buffered", cfg.client_buffered);
    s.read("always_batch", cfg.client_always_batch);
    // Default as in glacier2router: the session timeout when there is one, else 60 s.
    cfg.acm_timeout_s = cfg.session_timeout_s > 0 ? static_cast<int>(cfg.session_timeout_s) : 60;
    s.read_int("acm_timeout", 0, INT_MAX, cfg.acm_timeout_s);
    s.finish();
}

void read_server(yaml_section s, config& cfg) {
    cfg.server_endpoints = s.read_endpoints("endpoints");
    cfg.server_published_endpoints = s.read_endpoints("published_endpoints");
    s.read("forward_context", cfg.server_forward_context);
    s.read("buffered", cfg.server_buffered);
    s.read("always_batch", cfg.server_always_batch);
    s.finish();
}

void read_session(yaml_section s, config& cfg) {
    s.read_int("timeout", 0, INT_MAX, cfg.session_timeout_s);
    s.read_int("routing_table_max", 0, INT_MAX, cfg.routing_table_max);
    if (auto v = s.scalar("manager", "expected a proxy string")) {
        detail::parse_proxy(v->text, v->at, "session.manager");
        cfg.session_manager = v->text;
    }
    s.finish();
}

auth_mode parse_auth_mode(yaml_section& s) {
    auto mode = s.scalar("mode", "expected one of none, crypt_file, verifier, allow_all");
    if (!mode) throw config_error(s.file(), "auth.mode", "required (none, crypt_file, verifier or allow_all)");
    if (mode->text == "none") return auth_mode::none;
    if (mode->text == "crypt_file") return auth_mode::crypt_file;
    if (mode->text == "verifier") return auth_mode::verifier;
    if (mode->text == "allow_all") return auth_mode::allow_all;
    throw config_error(mode->at, "auth.mode",
                       "expected one of none, crypt_file, verifier, allow_all, got '" + mode->text + "'");
}

void read_auth(yaml_section s, config& cfg, const std::filesystem::path& config_dir) {
    if (!s.present()) return;  // no auth section: auth_mode::none, every createSession refused
    cfg.auth = parse_auth_mode(s);
    auto crypt = s.scalar("crypt_passwords", "expected a file path");
    auto verifier = s.scalar("permissions_verifier", "expected a proxy string");
    if (auto ssl = s.scalar("ssl_permissions_verifier", "expected a proxy string")) {
        detail::parse_proxy(ssl->text, ssl->at, "auth.ssl_permissions_verifier");
        cfg.ssl_permissions_verifier = ssl->text;
    }
    s.finish();

    // Each mode takes exactly its own key, so a half-edited section cannot mean two things.
    if (crypt && cfg.auth != auth_mode::crypt_file)
        throw config_error(crypt->at, "auth.crypt_passwords", "only used with mode crypt_file");
    if (verifier && cfg.auth != auth_mode::verifier)
        throw config_error(verifier->at, "auth.permissions_verifier", "only used with mode verifier");
    if (cfg.auth == auth_mode::crypt_file) {
        if (!crypt) throw config_error(s.file(), "auth.crypt_passwords", "required with mode crypt_file");
        std::filesystem::path file(crypt->text);
        if (file.is_relative()) file = config_dir / file;  // relative to the YAML file, not the cwd
        cfg.crypt_passwords = detail::check_crypt_passwords(file, crypt->at, "auth.crypt_passwords");
    }
    if (cfg.auth == auth_mode::verifier) {
        if (!verifier) throw config_error(s.file(), "auth.permissions_verifier", "required with mode verifier");
        detail::set_permissions_verifier(cfg, verifier->text, verifier->at, "auth.permissions_verifier");
    }
}

void read_filters(yaml_section s, config& cfg) {
    auto& f = cfg.filters;
    f.category_accept = s.read_list("category_accept");
    s.read_int("category_accept_user", 0, 2, f.category_accept_user);
    std::string ids_at;
    auto ids = s.read_list("identity_accept", &ids_at);
    f.identity_accept = detail::parse_identities(ids, ids_at, "filters.identity_accept");
    f.adapter_id_accept = s.read_list("adapter_id_accept");
    for (std::string_view key : {"address_accept", "address_reject"}) {
        std::string rules;
        std::string rules_at;
        for (const auto& rule : s.read_list(key, &rules_at)) {
            // One rule per item: a space would silently make it two.
            if (rule.empty() || rule.find_first_of(" \t") != std::string::npos)
                throw config_error(rules_at, s.path(key), "one rule per list item, without spaces: '" + rule + "'");
            rules += (rules.empty() ? "" : " ") + rule;
        }
        detail::check_address_rules(rules, rules_at, s.path(key));
        (key == "address_accept" ? f.address_accept : f.address_reject) = rules;
    }
    s.read_int("proxy_size_max", 0, INT_MAX, f.proxy_size_max);
    s.finish();
}

void read_limits(yaml_section s, config& cfg) {
    s.read_size("message_size_max", cfg.message_size_max);
    s.read_size("connection_queue_high", cfg.connection_queue_high);
    s.read_size("connection_queue_low", cfg.connection_queue_low);
    s.read_size("connection_queue_max", cfg.connection_queue_max);
    s.read_int("backend_connect_timeout_ms", 1, INT_MAX, cfg.backend_connect_timeout_ms);
    s.finish();
    if (cfg.connection_queue_low >= cfg.connection_queue_high)
        throw config_error(s.file(), "limits.connection_queue_low", "must be below limits.connection_queue_high");
    if (cfg.connection_queue_high > cfg.connection_queue_max)
        throw config_error(s.file(), "limits.connection_queue_high", "must not exceed limits.connection_queue_max");
}

void read_topics(yaml_section s, config& cfg) {
    auto& t = cfg.topics;
    s.read("enabled", t.enabled);
    s.read("instance_name", t.instance_name);
    t.topic_manager_endpoints = s.read_endpoints("topic_manager_endpoints");
    t.topic_manager_published_endpoints = s.read_endpoints("topic_manager_published_endpoints");
    t.publish_endpoints = s.read_endpoints("publish_endpoints");
    t.publish_published_endpoints = s.read_endpoints("publish_published_endpoints");
    s.read_size("subscriber_queue_bytes", t.subscriber_queue_bytes);
    s.finish();
    if (!t.enabled) return;
    if (t.topic_manager_endpoints.empty())
        throw config_error(s.file(), "topics.topic_manager_endpoints", "required when topics.enabled is true");
    if (t.publish_endpoints.empty())
        throw config_error(s.file(), "topics.publish_endpoints", "required when topics.enabled is true");
}

YAML::Node parse_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error(path.string(), "open", std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return YAML::Load(text.str());
    } catch (const YAML::Exception& e) {
        std::size_t line = e.mark.is_null() ? 0 : static_cast<std::size_t>(e.mark.line) + 1;
        throw config_error(detail::where(path.string(), line), "syntax", e.msg);
    }
}

}  // namespace

config load_yaml_config(const std::filesystem::path& path) {
    config cfg;
    cfg.source = path.string();
    // Moraine forwards unbuffered unless asked (glacier2router's default is buffered).
    cfg.client_buffered = false;
    cfg.server_buffered = false;

    const std::string file = path.string();
    YAML::Node doc = parse_file(path);
    yaml_section root(doc, "", file);
    root.read("instance_name", cfg.instance_name);
    if (cfg.instance_name.empty()) throw config_error(file, "instance_name", "must not be empty");
    root.read_int("threads", 0, 1024, cfg.threads);
    root.read("return_client_proxy", cfg.return_client_proxy);
    root.read_int("add_connection_context", 0, 2, cfg.add_connection_context);
    read_session(root.section("session"), cfg);  // before client: acm_timeout defaults to it
    read_client(root.section("client"), cfg);
    read_server(root.section("server"), cfg);
    read_auth(root.section("auth"), cfg, path.parent_path());
    read_filters(root.section("filters"), cfg);
    read_limits(root.section("limits"), cfg);
    read_topics(root.section("topics"), cfg);
    root.finish();
    return cfg;
}

}  // namespace moraine::router
