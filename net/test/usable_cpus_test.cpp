#include <moraine/net/usable_cpus.hpp>

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace net = moraine::net;

TEST(usable_cpus, cgroup_v2_cpu_max) {
    EXPECT_EQ(net::cpus_from_cpu_max("200000 100000\n"), 2u);
    EXPECT_EQ(net::cpus_from_cpu_max("150000 100000"), 2u);  // 1.5 CPUs: a second shard still has work
    EXPECT_EQ(net::cpus_from_cpu_max("50000 100000"), 1u);
    EXPECT_FALSE(net::cpus_from_cpu_max("max 100000\n"));
    EXPECT_FALSE(net::cpus_from_cpu_max("garbage"));
    EXPECT_FALSE(net::cpus_from_cpu_max(""));
}

TEST(usable_cpus, cgroup_v1_quota) {
    EXPECT_EQ(net::cpus_from_quota(300000, 100000), 3u);
    EXPECT_FALSE(net::cpus_from_quota(-1, 100000));
    EXPECT_FALSE(net::cpus_from_quota(100000, 0));
}

TEST(usable_cpus, cgroup_paths) {
    const char* v1 = "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n";
    EXPECT_EQ(net::cgroup_path(v1, "cpu"), "/docker/abc");
    EXPECT_EQ(net::cgroup_path(v1, "cpuacct"), "/docker/abc");
    EXPECT_EQ(net::cgroup_path(v1, ""), "/");
    EXPECT_FALSE(net::cgroup_path(v1, "cpuset"));
    EXPECT_EQ(net::cgroup_path("0::/system.slice/moraine-router.service\n", ""), "/system.slice/moraine-router.service");
    EXPECT_FALSE(net::cgroup_path("", ""));
}

TEST(usable_cpus, follows_the_affinity_mask) {
    // sched_getaffinity(0) reads the calling thread's mask: narrow it to one CPU, as taskset does.
    cpu_set_t before;
    ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    EXPECT_LE(net::usable_cpus(), std::max(1u, std::thread::hardware_concurrency()));
    EXPECT_GE(net::usable_cpus(), 1u);
    int first = 0;
    while (!CPU_ISSET(first, &before)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_EQ(net::usable_cpus(), 1u);
    ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}
