// descriptor_passing: a message and its descriptors cross a SOCK_SEQPACKET socketpair whole;
// the receiver's descriptors name the same open files; more descriptors than allowed, a longer
// message, a closed peer, a timeout and a cancel are errors, and none of them leaks a descriptor.
#include <moraine/net/descriptor_passing.hpp>
#include <moraine/net/takeover_message.hpp>

#include "open_descriptors.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

using namespace moraine;
using namespace std::chrono_literals;

namespace {

using moraine::net::test::open_descriptors;

struct seqpacket_pair {
    net::unique_fd a, b;
    seqpacket_pair() {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
        a.reset(fds[0]);
        b.reset(fds[1]);
    }
};

std::vector<std::byte> text(std::string_view s) {
    std::vector<std::byte> out;
    for (char c : s) out.push_back(static_cast<std::byte>(c));
    return out;
}

ino_t inode(int fd) {
    struct stat st{};
    ::fstat(fd, &st);
    return st.st_ino;
}

}  // namespace

TEST(descriptor_passing, message_and_descriptors_arrive_together) {
    seqpacket_pair p;
    std::array<int, 2> pipe_fds{};
    ASSERT_EQ(::pipe(pipe_fds.data()), 0);
    net::unique_fd r(pipe_fds[0]), w(pipe_fds[1]);
    const int sent[] = {r.get(), w.get()};
    net::send_packet(p.a.get(), text("two"), sent);
    net::send_packet(p.a.get(), text("none"));

    auto got = net::receive_packet(p.b.get(), 100, 4, 1s);
    EXPECT_EQ(got.bytes, text("two"));
    ASSERT_EQ(got.fds.size(), 2u);
    EXPECT_NE(got.fds[0].get(), r.get()) << "a new descriptor...";
    EXPECT_EQ(inode(got.fds[0].get()), inode(r.get())) << "...for the same pipe";
    EXPECT_EQ(::fcntl(got.fds[0].get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    // Writing through the received end reaches the original read end.
    ASSERT_EQ(::write(got.fds[1].get(), "x", 1), 1);
    char c = 0;
    EXPECT_EQ(::read(r.get(), &c, 1), 1);

    auto second = net::receive_packet(p.b.get(), 100, 4, 1s);
    EXPECT_EQ(second.bytes, text("none")) << "message boundaries are kept";
    EXPECT_TRUE(second.fds.empty());
}

TEST(descriptor_passing, too_many_descriptors_are_refused_and_closed) {
    const int before = open_descriptors();
    {
        seqpacket_pair p;
        const int sent[] = {p.a.get(), p.a.get(), p.a.get()};
        net::send_packet(p.a.get(), text("three"), sent);
        try {
            net::receive_packet(p.b.get(), 100, 1, 1s);
            ADD_FAILURE() << "must throw";
        } catch (const net::channel_error& e) {
            EXPECT_NE(std::string(e.what()).find("more descriptors"), std::string::npos) << e.what();
        }
        // Descriptors where none are expected: refused too.
        const int one[] = {p.a.get()};
        net::send_packet(p.a.get(), text("one"), one);
        EXPECT_THROW(net::receive_packet(p.b.get(), 100, 0, 1s), net::channel_error);
    }
    EXPECT_EQ(open_descriptors(), before) << "nothing received on a refused message stays open";
}

TEST(descriptor_passing, a_longer_message_is_refused_and_its_descriptors_closed) {
    const int before = open_descriptors();
    {
        seqpacket_pair p;
        const int sent[] = {p.a.get()};
        net::send_packet(p.a.get(), text("0123456789"), sent);
        try {
            net::receive_packet(p.b.get(), 4, 1, 1s);
            ADD_FAILURE() << "must throw";
        } catch (const net::channel_error& e) {
            EXPECT_NE(std::string(e.what()).find("longer than 4"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(open_descriptors(), before);
}

TEST(descriptor_passing, closed_peer_timeout_and_cancel_are_errors) {
    seqpacket_pair p;
    try {
        net::receive_packet(p.b.get(), 10, 0, 50ms);
        ADD_FAILURE() << "must time out";
    } catch (const net::channel_error& e) {
        EXPECT_NE(std::string(e.what()).find("within 50 ms"), std::string::npos) << e.what();
    }
    std::array<int, 2> cancel{};
    ASSERT_EQ(::pipe(cancel.data()), 0);
    net::unique_fd cr(cancel[0]), cw(cancel[1]);
    ASSERT_EQ(::write(cw.get(), "x", 1), 1);
    try {
        net::receive_packet(p.b.get(), 10, 0, 10s, cr.get());
        ADD_FAILURE() << "must be cancelled at once";
    } catch (const net::channel_error& e) {
        EXPECT_STREQ(e.what(), "cancelled");
    }
    p.a.reset();
    try {
        net::receive_packet(p.b.get(), 10, 0, 1s);
        ADD_FAILURE() << "must see the close";
    } catch (const net::channel_error& e) {
        EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
    }
}

TEST(descriptor_passing, sending_more_than_a_message_may_carry_is_refused) {
    seqpacket_pair p;
    std::vector<int> many(net::max_fds_per_packet + 1, p.a.get());
    EXPECT_THROW(net::send_packet(p.a.get(), text("x"), many), net::channel_error);
}

TEST(descriptor_passing, the_largest_topic_catalog_part_fits_a_default_socket) {
    // A Unix packet is bounded by the sender's buffer: Linux's default is 208 KiB
    // (net.core.wmem_default), and setsockopt doubles what it is given. A takeover's topic
    // catalog goes in parts that must cross such a socket (a 512 KiB part did not).
    seqpacket_pair p;
    const int half_of_default = 212992 / 2;
    ASSERT_EQ(::setsockopt(p.a.get(), SOL_SOCKET, SO_SNDBUF, &half_of_default, sizeof half_of_default), 0);
    const auto bytes =
        net::encode_takeover(net::takeover_topics{std::vector<std::byte>(net::takeover_topics_part_max), true});
    net::send_packet(p.a.get(), bytes);
    const auto got = net::receive_packet(p.b.get(), net::takeover_message_max, 0, 1s);
    EXPECT_EQ(got.bytes.size(), bytes.size());
}
