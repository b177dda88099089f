#include <moraine/icestorm_bridge/qos.hpp>

#include <charconv>
#include <string>

namespace moraine::icestorm_bridge {

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
                return "invalid reliability: " + value;  // IceStorm 3.7.8's wording, case-sensitive
            }
        } else if (key == "retryCount") {
            // IceStorm reads it like atoi and never refuses it: anything else counts as 0.
            if (!parse_int(value, q.retry_count)) q.retry_count = 0;
        } else if (key == "locatorCacheTimeout") {
            int ignored = 0;
            if (!parse_int(value, ignored)) return "invalid locator cache timeout (numeric value required): " + value;
        } else if (key == "connectionCached") {
            int cached = 0;
            if (!parse_int(value, cached)) return "invalid connection cached setting (numeric value required): " + value;
            q.connection_cached = cached > 0;
        }
    }
    return q;
}

std::vector<std::pair<std::string, std::string>> qos_entries(const qos& q) {
    std::vector<std::pair<std::string, std::string>> out;
    if (q.ordered) out.emplace_back("reliability", "ordered");
    if (q.retry_count != 0) out.emplace_back("retryCount", std::to_string(q.retry_count));
    if (!q.connection_cached) out.emplace_back("connectionCached", "0");
    return out;
}

}  // namespace moraine::icestorm_bridge
