#pragma once
// Who may try to create a session now: login back-off and set-up rate, per address and per user.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace moraine::session {

/// The limits on session set-up (YAML `limits`, `Moraine.Limits.*`); 0 turns one off.
struct admission_limits {
    std::size_t sessions_max = 0;             ///< sessions open at once, router-wide
    double setups_per_second = 0;             ///< createSession calls per second per address (burst: 2 s worth)
    unsigned backoff_free_failures = 3;       ///< failed logins allowed before the back-off starts
    std::chrono::milliseconds backoff_initial{1000};  ///< wait after the first failure past the free ones
    std::chrono::milliseconds backoff_max{60000};     ///< the wait doubles per failure up to this
    bool backoff_enabled() const noexcept { return backoff_initial.count() > 0; }
};

/// Why admission refused a createSession, with how long to wait (ms) where that applies.
struct admission_refusal {
    enum class kind { none, rate, backoff_address, backoff_user, checking } why = kind::none;
    std::chrono::milliseconds retry_after{0};
    explicit operator bool() const noexcept { return why != kind::none; }
};

/** Rate limit and exponential back-off after failed logins, per client address and per user id.
    Guessing passwords gets slower with each failure (from `backoff_initial`, doubling, up to
    `backoff_max`). Once a login has failed, password checks still running count as
    failures-to-be, so guesses sent in parallel get no more tries than guesses sent one by one.
    (Before any failure, parallel logins pass: many sessions of one user start together.) A success clears that user's and
    that address's record and remembers the pair for a day: from an address where a user has
    logged in, that user is not held back by failures others cause for their user id (the
    per-address back-off still applies), so nobody can lock a user out from elsewhere.
    Shared by every shard: a mutex guards it, taken only on session set-up (never per message).
    Memory is bounded: records idle past twice the longest wait are pruned (remembered pairs
    after a day), and at most `max_entries` are kept (the oldest go first). */
class admission {
public:
    using clock = std::chrono::steady_clock;

    explicit admission(admission_limits limits, std::size_t max_entries = 100000)
        : limits_(limits), max_entries_(max_entries) {}

    /** Checks a createSession from `address` for `user` at `now`; counts it toward the rate.
        With `password_check`, an admitted call is a password check in progress: report its
        outcome with failed() or succeeded(), exactly once. */
    admission_refusal check(std::string_view address, std::string_view user, clock::time_point now,
                            bool password_check = true);
    /// Records the outcome of an admitted password check.
    void failed(std::string_view address, std::string_view user, clock::time_point now);
    void succeeded(std::string_view address, std::string_view user, clock::time_point now);

    /// Replaces the limits (reload); records are kept.
    void set_limits(admission_limits limits);
    std::size_t entries() const;

private:
    struct record {
        unsigned failures = 0;
        unsigned checking = 0;  ///< password checks admitted and not yet reported
        clock::time_point last_failure{};
        double tokens = -1;  ///< rate bucket; -1: not started
        clock::time_point refilled{};
        clock::time_point touched{};
    };
    std::chrono::milliseconds wait_after(unsigned failures) const noexcept;
    record& at(const std::string& key, clock::time_point now);
    void prune(clock::time_point now);

    mutable std::mutex mutex_;
    admission_limits limits_;
    std::size_t max_entries_;
    std::unordered_map<std::string, record> records_;  // "a:ADDRESS" and "u:USER"
};

}  // namespace moraine::session
