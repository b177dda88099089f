// handshake_pool: jobs run on its own threads, below the caller in priority.
#include <moraine/net/handshake_pool.hpp>

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

using moraine::net::handshake_pool;

namespace {
int own_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))); }
}  // namespace

TEST(handshake_pool, runs_jobs_on_its_own_threads_at_a_lower_priority) {
    handshake_pool pool(2);
    std::promise<std::pair<std::thread::id, int>> seen;
    boost::asio::post(pool.executor(), [&] { seen.set_value({std::this_thread::get_id(), own_nice()}); });
    auto f = seen.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    const auto [id, nice] = f.get();
    EXPECT_NE(id, std::this_thread::get_id());
    // Lower unless the caller already runs at the lowest priority (a build under `nice -n 19`):
    // niceness stops at 19.
    if (own_nice() < 19) EXPECT_GT(nice, own_nice()) << "handshake threads yield to the shards";
    else EXPECT_EQ(nice, 19);
}

TEST(handshake_pool, stops_with_work_still_queued) {
    std::atomic<int> ran{0};
    {
        handshake_pool pool(1);
        std::promise<void> started, release;
        auto go = release.get_future().share();
        boost::asio::post(pool.executor(), [&, go] {
            started.set_value();
            go.wait();
            ++ran;
        });
        for (int i = 0; i < 100; ++i) boost::asio::post(pool.executor(), [&] { ++ran; });
        started.get_future().wait();
        release.set_value();
    }  // the destructor joins: whatever ran, nothing runs after it
    const int after = ran.load();
    EXPECT_GE(after, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(ran.load(), after);
}
