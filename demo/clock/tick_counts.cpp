#include "clock/tick_counts.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace moraine::demo {

std::uint64_t tick_counts::received(const tick& t, std::uint64_t& last_seq) {
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t.sent).count();
    window.add(static_cast<std::uint32_t>(std::max<std::int64_t>(0, micros)));
    const std::uint64_t skipped = last_seq != 0 && t.seq > last_seq + 1 ? t.seq - last_seq - 1 : 0;
    last_seq = std::max(last_seq, t.seq);
    ++ticks;
    ++ticks_window;
    return skipped;
}

void tick_counts::print_status(double elapsed_s, std::size_t up, std::size_t failed, std::size_t dropped,
                               std::uint64_t lost, bool final_line, std::string_view extra) {
    std::printf("%s%7.1fs  sessions up %zu (failed %zu, dropped %zu)  ticks/s %llu  lost %llu  p50 %.2f ms"
                "  p99 %.2f ms%.*s%s",
                final_line ? "" : "\r", elapsed_s, up, failed, dropped, static_cast<unsigned long long>(ticks_window),
                static_cast<unsigned long long>(lost), window.percentile(50) / 1000.0, window.percentile(99) / 1000.0,
                static_cast<int>(extra.size()), extra.data(), final_line ? "\n" : "   ");
    std::fflush(stdout);
    all.merge(window);
    window.clear();
    ticks_window = 0;
}

}  // namespace moraine::demo
