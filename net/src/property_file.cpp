// Ice property file syntax (see property_file.hpp).
#include <moraine/net/property_file.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace moraine::net {
namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Characters a backslash turns into themselves; before anything else the backslash stays.
bool is_escapable(char c) noexcept { return c == '\\' || c == '#' || c == '='; }

struct parsed_line {
    std::string key;
    std::string value;
    bool has_equals = false;
};

// One pass over the line. Whitespace is held back in `pending` and only kept if more text
// follows, which trims both ends; escaped spaces are also held in `pending_escaped` because a
// value keeps those even at its ends.
parsed_line split_line(std::string_view line) {
    parsed_line out;
    std::string pending;
    std::string pending_escaped;
    auto append = [&](std::string& to, std::string_view text) {
        if (!out.has_equals) {
            to += pending;
        } else {
            to += to.empty() ? pending_escaped : pending;
        }
        pending.clear();
        pending_escaped.clear();
        to += text;
    };
    for (std::size_t i = 0; i < line.size(); ++i) {
        std::string& target = out.has_equals ? out.value : out.key;
        char c = line[i];
        if (c == '\\' && i + 1 < line.size()) {
            char next = line[++i];
            if (is_escapable(next)) {
                append(target, std::string_view(&next, 1));
            } else if (next == ' ') {
                if (out.has_equals) {
                    pending += ' ';
                    pending_escaped += ' ';
                } else if (!target.empty()) {
                    pending += ' ';
                }
            } else {
                const char both[2] = {'\\', next};
                append(target, std::string_view(both, 2));
            }
        } else if (is_space(c)) {
            if (!target.empty()) pending += c;
        } else if (c == '#') {
            break;
        } else if (c == '=' && !out.has_equals) {
            pending.clear();
            out.has_equals = true;
        } else {
            append(target, std::string_view(&c, 1));
        }
    }
    if (out.has_equals) out.value += pending_escaped;
    return out;
}

}  // namespace

property_map parse_properties(std::string_view text, const std::string& origin, std::vector<std::string>& warnings) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
    property_map props;
    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);

        parsed_line p = split_line(line);
        if (p.key.empty() && !p.has_equals) continue;  // blank or comment
        if (p.key.empty() || !p.has_equals) {
            warnings.push_back(where(origin, line_no) + ": ignored line without 'key=value': " + std::string(line));
            continue;
        }
        if (p.value.empty()) {
            props.erase(p.key);
            continue;
        }
        props[p.key] = property_value{std::move(p.value), line_no, {}};
    }
    return props;
}

property_map read_property_file(const std::filesystem::path& path, std::vector<std::string>& warnings) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error(path.string(), "open", std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return parse_properties(text.str(), path.string(), warnings);
}

}  // namespace moraine::net
