// unique_fd: a descriptor closed exactly once by whoever owns it last.
#include <moraine/net/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace net = moraine::net;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

int new_descriptor() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    ::close(fds[1]);
    return fds[0];
}

}  // namespace

TEST(unique_fd, closes_what_it_holds_when_destroyed_or_reset) {
    const int a = new_descriptor();
    { net::unique_fd f(a); EXPECT_TRUE(f); }
    EXPECT_FALSE(is_open(a));
    const int b = new_descriptor(), c = new_descriptor();
    net::unique_fd f(b);
    f.reset(c);
    EXPECT_FALSE(is_open(b)) << "reset closes the old descriptor";
    EXPECT_TRUE(is_open(c));
    f.reset();
    EXPECT_FALSE(is_open(c));
    EXPECT_FALSE(f);
}

TEST(unique_fd, a_move_hands_ownership_over_and_release_gives_it_up) {
    const int a = new_descriptor();
    net::unique_fd first(a);
    net::unique_fd second(std::move(first));
    EXPECT_FALSE(first);
    EXPECT_EQ(second.get(), a);
    net::unique_fd third;
    third = std::move(second);
    EXPECT_TRUE(is_open(a)) << "moved, not closed";
    const int released = third.release();
    EXPECT_FALSE(third);
    EXPECT_TRUE(is_open(released)) << "the caller owns it now";
    ::close(released);
}
