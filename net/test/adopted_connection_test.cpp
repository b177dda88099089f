// A connected socket handed over by descriptor becomes asio's again; anything else is refused
// with a reason and closed.
#include <moraine/net/adopted_connection.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>

using namespace moraine;

namespace {

net::unique_fd duplicate(int fd) { return net::unique_fd(::fcntl(fd, F_DUPFD_CLOEXEC, 0)); }

}  // namespace

TEST(adopted_connection, a_connected_tcp_socket_carries_on) {
    net::asio::io_context io;
    net::tcp::acceptor acceptor(io, {net::asio::ip::make_address("127.0.0.1"), 0});
    net::tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    net::tcp::socket accepted = acceptor.accept();
    // What a takeover does: a copy goes to the new owner, the old one lets go of its own.
    auto copy = duplicate(accepted.native_handle());
    ASSERT_TRUE(copy);
    accepted.close();
    auto adopted = net::adopt_connected_socket(io, std::move(copy));
    EXPECT_TRUE(adopted.is_open());
    EXPECT_TRUE(adopted.local_endpoint().address().is_v4());
    const std::array<char, 3> sent{'I', 'c', 'e'};
    net::asio::write(adopted, net::asio::buffer(sent));
    std::array<char, 3> got{};
    net::asio::read(client, net::asio::buffer(got));
    EXPECT_EQ(got, sent);
}

TEST(adopted_connection, other_descriptors_are_refused) {
    net::asio::io_context io;
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    ::close(pair[1]);
    EXPECT_THROW(net::adopt_connected_socket(io, net::unique_fd(pair[0])), std::invalid_argument);  // not TCP

    net::tcp::acceptor listening(io, {net::asio::ip::make_address("127.0.0.1"), 0});
    EXPECT_THROW(net::adopt_connected_socket(io, duplicate(listening.native_handle())), std::invalid_argument)
        << "a listening socket is no connection";

    int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(udp, 0);
    EXPECT_THROW(net::adopt_connected_socket(io, net::unique_fd(udp)), std::invalid_argument);
}
