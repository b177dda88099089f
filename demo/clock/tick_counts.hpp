#pragma once
// What a clock-demo subscriber process counts of the ticks it receives, and its per-second status
// line: shared by clock-subscriber and perf's nats-fanout, whose output the scripts parse alike.
#include "clock/latency_stats.hpp"
#include "clock/tick.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace moraine::demo {

/// Ticks received, their latency (this second's window and the whole run) and malformed ones.
struct tick_counts {
    std::uint64_t ticks = 0, ticks_window = 0, bad = 0;
    latency_stats window, all;

    /** Counts tick `t`, received now (latency from its send time, µs), by a subscriber whose last
        sequence number seen is `last_seq` (0: none yet), which it advances.
        @return the ticks skipped since `last_seq`: lost. */
    std::uint64_t received(const tick& t, std::uint64_t& last_seq);

    /** Prints the status line, `\r` first unless `final_line` (then it ends with a newline):
        `  12.0s  sessions up U (failed F, dropped D)  ticks/s N  lost L  p50 X ms  p99 Y ms`,
        then `extra`. Then starts the next second's window (its latencies join `all`). */
    void print_status(double elapsed_s, std::size_t up, std::size_t failed, std::size_t dropped, std::uint64_t lost,
                      bool final_line, std::string_view extra = {});
};

}  // namespace moraine::demo
