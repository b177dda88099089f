#include <moraine/icestorm/qos.hpp>

#include <charconv>

namespace moraine::icestorm {

namespace {

bool parse_int(std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

}  // namespace

std::variant<qos, std::string> parse_qos(const std::vector<std::pair<std::string, std::string>>& entries, bool twoway) {
    qos q;
    for (const auto& [key, value] : entries) {
        if (key == "reliability") {
            if (value == "ordered") {
                if (!twoway) return std::string("ordered reliability requires a twoway proxy");
                q.ordered = true;
            } else if (!value.empty()) {
                return "invalid reliability `" + value + "'";
            }
        } else if (key == "retryCount") {
            if (!parse_int(value, q.retry_count)) return "invalid retryCount `" + value + "'";
        } else if (key == "locatorCacheTimeout" || key == "connectionCached") {
            int ignored = 0;
            if (!parse_int(value, ignored)) return "invalid " + key + " `" + value + "'";
        }
    }
    return q;
}

}  // namespace moraine::icestorm
