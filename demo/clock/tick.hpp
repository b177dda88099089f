#pragma once
// The clock demo's tick: what Clock::tick(string time) carries, so receivers can measure latency.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace moraine::demo {

/// One tick: its sequence number and when it was sent (steady clock, which is CLOCK_MONOTONIC
/// and so comparable between processes on one machine).
struct tick {
    std::uint64_t seq = 0;
    std::chrono::steady_clock::time_point sent;
};

/// The `time` string: wall-clock time for people, then `#<seq> @<monotonic ns>`,
/// e.g. "12:00:01 #42 @1234567890123".
std::string format_tick(const tick& t);

/// Parses format_tick's output; nullopt if `time` is not one.
std::optional<tick> parse_tick(std::string_view time);

}  // namespace moraine::demo
