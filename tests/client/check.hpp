#pragma once
// The test programs' way to report: one "ok STEP" line per passed step, "FAIL STEP: WHY" and
// exit 1 on the first failure (the Python drivers read these lines).
#include <cstdlib>
#include <iostream>
#include <string>

[[noreturn]] inline void fail(const std::string& step, const std::string& why) {
    std::cout << "FAIL " << step << ": " << why << std::endl;
    std::exit(1);
}

inline void pass(const std::string& step) { std::cout << "ok " << step << std::endl; }

inline void expect(bool cond, const std::string& step, const std::string& why) {
    if (!cond) fail(step, why);
}
