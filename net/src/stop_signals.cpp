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

}  // namespace moraine::net
