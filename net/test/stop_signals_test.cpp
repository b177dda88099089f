// stop_signals: SIGINT / SIGTERM / SIGHUP blocked and awaited, SIGPIPE ignored. Each case runs
// in a forked child (a gtest death test), so the test process's own signal state is untouched.
#include <moraine/net/stop_signals.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <pthread.h>

using namespace moraine;

namespace {

/// In the child: blocks the stop signals, raises `sig` at itself and exits with what
/// wait_for_stop_signal() returned (a blocked signal stays pending instead of killing it).
[[noreturn]] void raise_and_wait(int sig) {
    net::block_stop_signals();
    ::raise(sig);
    std::_Exit(net::wait_for_stop_signal());
}

}  // namespace

TEST(stop_signals, each_stop_signal_is_awaited_not_fatal) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(raise_and_wait(SIGTERM), ::testing::ExitedWithCode(SIGTERM), "");
    EXPECT_EXIT(raise_and_wait(SIGINT), ::testing::ExitedWithCode(SIGINT), "");
    EXPECT_EXIT(raise_and_wait(SIGHUP), ::testing::ExitedWithCode(SIGHUP), "");
}

TEST(stop_signals, sigpipe_is_ignored_and_threads_inherit_the_mask) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            net::block_stop_signals();
            ::raise(SIGPIPE);  // ignored: the child lives on
            sigset_t inherited;
            pthread_t t;
            ::pthread_create(
                &t, nullptr,
                [](void* out) -> void* {
                    pthread_sigmask(SIG_BLOCK, nullptr, static_cast<sigset_t*>(out));
                    return nullptr;
                },
                &inherited);
            ::pthread_join(t, nullptr);
            std::_Exit(sigismember(&inherited, SIGTERM) == 1 ? 7 : 1);
        },
        ::testing::ExitedWithCode(7), "");
}

TEST(stop_signals, without_blocking_sigterm_kills) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(::raise(SIGTERM), ::testing::KilledBySignal(SIGTERM), "") << "the contrast: the blocking is what matters";
}
