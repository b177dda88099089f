#include "clock/tick.hpp"

#include <charconv>
#include <ctime>

namespace moraine::demo {

std::string format_tick(const tick& t) {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm local{};
    localtime_r(&now, &local);
    char hms[16];
    std::strftime(hms, sizeof hms, "%H:%M:%S", &local);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.sent.time_since_epoch()).count();
    return std::string(hms) + " #" + std::to_string(t.seq) + " @" + std::to_string(ns);
}

std::optional<tick> parse_tick(std::string_view time) {
    const auto hash = time.find(" #");
    const auto at = time.find(" @");
    if (hash == std::string_view::npos || at == std::string_view::npos || at < hash) return std::nullopt;
    tick t;
    const auto seq = time.substr(hash + 2, at - hash - 2);
    const auto ns_text = time.substr(at + 2);
    std::int64_t ns = 0;
    if (std::from_chars(seq.data(), seq.data() + seq.size(), t.seq).ec != std::errc()) return std::nullopt;
    if (std::from_chars(ns_text.data(), ns_text.data() + ns_text.size(), ns).ec != std::errc()) return std::nullopt;
    t.sent = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
    return t;
}

}  // namespace moraine::demo
