#pragma once
// Reading Moraine's YAML configuration: a section reader with typed getters that every
// service's configuration uses (conf/moraine.yaml documents every key).
#include <moraine/net/config_values.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::net {

/// A YAML mapping being read. It hands out values by key and remembers which keys were read,
/// so that finish() can refuse the rest: a misspelt key must stop startup, not be ignored.
/// Every error is a config_error naming "FILE:LINE" and the key's dotted path.
class yaml_section {
public:
    /// `file` is kept by reference (every subsection shares it): it must outlive the section,
    /// hence no temporary (the deleted overload below).
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
    yaml_section(const YAML::Node& node, std::string path, std::string&& file) = delete;

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
        throw config_error(where(file_, line), key.empty() ? (path_.empty() ? "(top)" : path_) : path(key),
                           reason);
    }

    /// Where a value of this section sits, for errors raised after reading it.
    std::string at(const YAML::Node& v) const {
        const YAML::Mark m = v.Mark();
        return where(file_, m.is_null() ? 0 : static_cast<std::size_t>(m.line) + 1);
    }

    std::string path(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
    const std::string& file() const noexcept { return file_; }
    /// True if `key` is present with a non-null value (without marking it read).
    bool has(std::string_view key) const {
        if (!node_.IsMap()) return false;
        YAML::Node v = node_[std::string(key)];
        return v.IsDefined() && !v.IsNull();
    }
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

    /// A byte count: an integer, or a number with a unit: `512KiB`, `16 MiB`, `1GiB`, `100B`;
    /// at most `max` bytes (e.g. INT_MAX where the kernel takes an int).
    void read_size(std::string_view key, std::size_t& out, std::size_t max = SIZE_MAX) {
        auto v = take(key);
        if (!v) return;
        auto n = v->IsScalar() ? parse_size(v->Scalar()) : std::nullopt;
        if (!n) fail(*v, key, "expected a size in bytes such as 65536, 64KiB or 16MiB");
        if (*n > max) fail(*v, key, std::to_string(*n) + " bytes is more than the most, " + std::to_string(max));
        out = *n;
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
        if (v->IsScalar()) return parse_endpoints(v->Scalar(), at(*v), path(key));
        if (!v->IsSequence()) fail(*v, key, "expected an Ice endpoint string or a list of them");
        for (const auto& item : *v) {
            if (!item.IsScalar()) fail(item, key, "expected an Ice endpoint string");
            auto some = parse_endpoints(item.Scalar(), at(item), path(key));
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

/// Reads and parses the YAML file at `path`. @throws config_error (open, syntax) naming the file and line.
inline YAML::Node load_yaml_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error(path.string(), "open", std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return YAML::Load(text.str());
    } catch (const YAML::Exception& e) {
        std::size_t line = e.mark.is_null() ? 0 : static_cast<std::size_t>(e.mark.line) + 1;
        throw config_error(where(path.string(), line), "syntax", e.msg);
    }
}

}  // namespace moraine::net
