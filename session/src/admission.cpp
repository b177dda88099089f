#include <moraine/session/admission.hpp>

#include <moraine/protocol/backoff_policy.hpp>

#include <algorithm>
#include <vector>

namespace moraine::session {

namespace {
std::string address_key(std::string_view a) { return "a:" + std::string(a); }
std::string user_key(std::string_view u) { return "u:" + std::string(u); }
std::string known_key(std::string_view a, std::string_view u) { return "g:" + std::string(u) + '\n' + std::string(a); }
constexpr auto known_for = std::chrono::hours(24);
}  // namespace

std::chrono::milliseconds admission::wait_after(unsigned failures) const noexcept {
    if (!limits_.backoff_enabled() || failures <= limits_.backoff_free_failures) return std::chrono::milliseconds(0);
    // Doubling per failure past the free ones, no jitter: a guesser must not learn when to try.
    const protocol::backoff_policy schedule{.initial_delay = limits_.backoff_initial,
                                            .max_delay = limits_.backoff_max,
                                            .multiplier = 2.0,
                                            .jitter = 0.0};
    return schedule.ceiling(failures - limits_.backoff_free_failures);
}

admission::record& admission::at(const std::string& key, clock::time_point now) {
    auto& r = records_[key];
    r.touched = now;
    return r;
}

void admission::prune(clock::time_point now) {
    const auto idle = std::max<std::chrono::milliseconds>(limits_.backoff_max * 2, std::chrono::seconds(10));
    std::erase_if(records_, [&](const auto& kv) {
        if (kv.second.checking > 0) return false;  // its outcome is still to come
        return now - kv.second.touched > (kv.first.starts_with("g:") ? std::chrono::milliseconds(known_for) : idle);
    });
    if (records_.size() <= max_entries_) return;
    // Still too many (a flood of addresses): drop the least recently touched.
    std::vector<std::pair<clock::time_point, std::string>> by_age;
    by_age.reserve(records_.size());
    for (const auto& [key, r] : records_) by_age.emplace_back(r.touched, key);
    std::sort(by_age.begin(), by_age.end());
    for (std::size_t i = 0; records_.size() > max_entries_ && i < by_age.size(); ++i) records_.erase(by_age[i].second);
}

admission_refusal admission::check(std::string_view address, std::string_view user, clock::time_point now,
                                   bool password_check) {
    std::lock_guard lock(mutex_);
    if (records_.size() >= max_entries_) prune(now);
    auto& a = at(address_key(address), now);
    if (limits_.setups_per_second > 0) {
        const double burst = std::max(1.0, limits_.setups_per_second * 2);
        if (a.tokens < 0) {
            a.tokens = burst;
        } else {
            const std::chrono::duration<double> dt = now - a.refilled;
            a.tokens = std::min(burst, a.tokens + dt.count() * limits_.setups_per_second);
        }
        a.refilled = now;
        if (a.tokens < 1) {
            const auto ms = static_cast<long long>((1 - a.tokens) / limits_.setups_per_second * 1000) + 1;
            return {admission_refusal::kind::rate, std::chrono::milliseconds(ms)};
        }
        a.tokens -= 1;
    }
    if (!password_check || !limits_.backoff_enabled()) return {};
    const bool known = records_.contains(known_key(address, user));
    std::pair<std::string, admission_refusal::kind> keys[] = {{address_key(address), admission_refusal::kind::backoff_address},
                                                              {user_key(user), admission_refusal::kind::backoff_user}};
    for (const auto& [key, kind] : keys) {
        if (kind == admission_refusal::kind::backoff_user && known) continue;
        auto it = records_.find(key);
        if (it == records_.end()) continue;
        const auto& r = it->second;
        if (r.failures > 0) {
            const auto until = r.last_failure + wait_after(r.failures);
            if (now < until)
                return {kind, std::chrono::duration_cast<std::chrono::milliseconds>(until - now) + std::chrono::milliseconds(1)};
        }
        // Once a login has failed, checks in flight could all fail too: they may not take the
        // count past the free failures. Without a failure, parallel logins (many sessions of one
        // user at start-up) are not held back; a first burst of guesses is bounded by the
        // set-up rate and connections-per-address limits instead.
        if (r.failures > 0 && r.checking > 0 && r.failures + r.checking >= std::max(1u, limits_.backoff_free_failures))
            return {admission_refusal::kind::checking, limits_.backoff_initial};
    }
    for (const auto& [key, kind] : keys) ++at(key, now).checking;  // both: failed()/succeeded() undo both
    return {};
}

void admission::failed(std::string_view address, std::string_view user, clock::time_point now) {
    std::lock_guard lock(mutex_);
    for (const auto& key : {address_key(address), user_key(user)}) {
        auto& r = at(key, now);
        if (r.checking > 0) --r.checking;
        ++r.failures;
        r.last_failure = now;
    }
}

void admission::succeeded(std::string_view address, std::string_view user, clock::time_point now) {
    std::lock_guard lock(mutex_);
    for (const auto& key : {address_key(address), user_key(user)})
        if (auto it = records_.find(key); it != records_.end()) {
            it->second.failures = 0;
            if (it->second.checking > 0) --it->second.checking;
        }
    at(known_key(address, user), now);
}

void admission::set_limits(admission_limits limits) {
    std::lock_guard lock(mutex_);
    limits_ = limits;
}

std::size_t admission::entries() const {
    std::lock_guard lock(mutex_);
    return records_.size();
}

}  // namespace moraine::session
