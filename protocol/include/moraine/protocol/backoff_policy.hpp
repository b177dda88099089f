#pragma once
// How long to wait before each retry: exponential back-off with a cap and optional jitter.
// Not wire codec, but pure arithmetic with no I/O, and protocol/ is the one layer that every
// user may reach: the client library (reconnection), icestorm-bridge (links), session (logins).
#include <chrono>
#include <random>

namespace moraine::protocol {

/** Delays between retries: the client library's reconnection attempts (client::session_options),
    an unreachable topic link's probes (icestorm_bridge::link_backoff), the wait after failed
    logins (session::admission). Attempt n (1-based) has the ceiling
    c(n) = min(max_delay, initial_delay × multiplier^(n−1)) and waits a delay drawn uniformly
    from [c(n) × (1 − jitter), c(n)], so that thousands of sessions that lost the same router do
    not all come back at the same instant (jitter 1 = "full jitter": [0, c(n)]; jitter 0 and
    ceiling() for a fixed schedule). An aggregate: `backoff_policy{.initial_delay = 50ms, .max_delay = 2s}`. */
struct backoff_policy {
    /// Ceiling of the first attempt's delay, ms. 0: the first attempt at once, the next ones from
    /// 1 ms × multiplier^(n−1) on (2, 4, 8 ms... by default).
    std::chrono::milliseconds initial_delay{100};
    /// Largest delay, ms: the ceiling stops growing there.
    std::chrono::milliseconds max_delay{10'000};
    /// Growth of the ceiling per attempt; values below 1 count as 1 (constant delays).
    double multiplier = 2.0;
    /// Share of the ceiling that is randomised, 0..1 (clamped): 0 = exactly c(n).
    double jitter = 0.5;

    /// c(n): the longest wait before attempt `attempt` (1-based; 0 counts as 1), ms. Never above
    /// max_delay, never negative; no overflow for any attempt number.
    std::chrono::milliseconds ceiling(unsigned attempt) const noexcept;

    /// The wait before attempt `attempt` for a uniform draw `u` in [0, 1] (clamped):
    /// c(n) × (1 − jitter × u), rounded down to whole ms. u = 0 gives the ceiling.
    std::chrono::milliseconds delay(unsigned attempt, double u) const noexcept;

    /// The wait before attempt `attempt`, drawn from `rng` (any UniformRandomBitGenerator).
    template <class Rng>
    std::chrono::milliseconds delay(unsigned attempt, Rng& rng) const {
        return delay(attempt, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    }
};

}  // namespace moraine::protocol
