#include <moraine/net/stop_signals.hpp>

#include <csignal>
#include <pthread.h>

namespace moraine::net {

namespace {
sigset_t stop_set() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);  // reload, for the executables that offer it
    return set;
}
}  // namespace

void block_stop_signals() {
    const sigset_t set = stop_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

int wait_for_stop_signal() {
    const sigset_t set = stop_set();
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}

int wait_for_stop_signal_for(std::chrono::milliseconds timeout) {
    const sigset_t set = stop_set();
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    const timespec limit{static_cast<time_t>(s.count()),
                         static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout - s).count())};
    const int sig = sigtimedwait(&set, nullptr, &limit);
    return sig > 0 ? sig : 0;  // -1: EAGAIN (timeout) or EINTR
}

}  // namespace moraine::net
