// client asio.hpp: the client library's completion token. nothrow_awaitable must hand I/O
// errors back as values (the library's error-as-value style), never throw them, and pass the
// result through on success.
#include <moraine/client/asio.hpp>

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

TEST(asio, nothrow_awaitable_returns_errors_and_results_as_values) {
    asio::io_context io;
    boost::system::error_code refused, accepted_ec;
    bool finished = false;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    const auto good = acceptor.local_endpoint();
    tcp::acceptor closed(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    const auto bad = closed.local_endpoint();
    closed.close();
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            tcp::socket s1(io), s2(io);
            auto [e1] = co_await s1.async_connect(bad, nothrow_awaitable);  // nothing listens: an error value
            refused = e1;
            auto [e2] = co_await s2.async_connect(good, nothrow_awaitable);
            accepted_ec = e2;
            finished = true;
        },
        asio::detached);
    io.run_for(std::chrono::seconds(5));
    ASSERT_TRUE(finished) << "an error was thrown instead of returned";
    EXPECT_EQ(refused, asio::error::connection_refused);
    EXPECT_FALSE(accepted_ec);
}

}  // namespace
}  // namespace moraine::client
