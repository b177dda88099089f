// The Demo::Callback servant of the C++ interop clients: records each ping(msg) the router
// forwards, and lets the client wait for one.
#pragma once

#include <Demo.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

/// Demo::Callback::ping(string msg): keeps every message it is called with.
class CallbackRecorder : public Demo::Callback {
public:
    void ping(std::string msg, const Ice::Current&) override {
        std::lock_guard<std::mutex> lock(mutex_);
        got_.push_back(std::move(msg));
        cond_.notify_all();
    }

    /// Waits up to `timeout` for a ping carrying `msg`. @return true once it has come.
    bool waitFor(const std::string& msg, std::chrono::seconds timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cond_.wait_for(lock, timeout, [&] {
            for (const auto& m : got_) {
                if (m == msg) return true;
            }
            return false;
        });
    }

private:
    std::mutex mutex_;
    std::condition_variable cond_;
    std::vector<std::string> got_;
};
