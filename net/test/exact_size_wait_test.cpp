// transport::exact_size under asio's waits, as ice_connection's readability wait uses it: asio
// associates its allocator, and the wait completes through it once, or is aborted.
#include <moraine/transport/exact_size_handler.hpp>

#include <gtest/gtest.h>

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <type_traits>

namespace {

namespace asio = boost::asio;
using moraine::transport::exact_allocator;
using moraine::transport::exact_size;

TEST(exact_size_wait, asio_associates_the_exact_allocator) {
    auto h = exact_size([](const boost::system::error_code&) {});
    static_assert(std::is_same_v<asio::associated_allocator_t<decltype(h)>, exact_allocator<void>>);
}

TEST(exact_size_wait, a_timer_wait_completes_through_it_once) {
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(0));
    int calls = 0;
    boost::system::error_code seen = asio::error::would_block;
    timer.async_wait(exact_size([&](const boost::system::error_code& ec) {
        ++calls;
        seen = ec;
    }));
    EXPECT_EQ(io.run(), 1u);
    EXPECT_EQ(calls, 1);
    EXPECT_FALSE(seen);
}

TEST(exact_size_wait, a_cancelled_wait_gets_operation_aborted) {
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::hours(1));
    boost::system::error_code seen;
    timer.async_wait(exact_size([&](const boost::system::error_code& ec) { seen = ec; }));
    timer.cancel();
    io.run();
    EXPECT_EQ(seen, asio::error::operation_aborted);
}

}  // namespace
