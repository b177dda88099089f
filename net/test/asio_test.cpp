// asio.hpp: the coroutine conventions. Checked: nothrow_awaitable turns an I/O error into a
// value instead of an exception, and report_bug (co_spawn's completion handler) counts an
// exception escaping a coroutine while a coroutine ending normally counts nothing.
#include <moraine/net/asio.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

using namespace moraine;

TEST(asio, nothrow_awaitable_returns_io_errors_as_values) {
    net::asio::io_context io;
    boost::system::error_code got;
    bool finished = false;
    net::asio::co_spawn(
        io,
        [&]() -> net::asio::awaitable<void> {
            net::tcp::socket s(io);  // never opened: reading fails at once
            char b[1];
            auto [ec, n] = co_await s.async_read_some(net::asio::buffer(b), net::nothrow_awaitable);
            got = ec;
            EXPECT_EQ(n, 0u);
            finished = true;
        },
        net::report_bug);
    io.run_for(std::chrono::seconds(5));
    EXPECT_TRUE(finished);
    EXPECT_TRUE(got) << "an error code, not an exception";
}

TEST(asio, report_bug_counts_escaped_exceptions_only) {
    const auto before = net::bugs_total();
    net::asio::io_context io;
    net::asio::co_spawn(io, []() -> net::asio::awaitable<void> { co_return; }, net::report_bug);
    net::asio::co_spawn(
        io, []() -> net::asio::awaitable<void> {
            throw std::runtime_error("escaped on purpose (this test expects a 'bug:' log line)");
            co_return;
        },
        net::report_bug);
    io.run_for(std::chrono::seconds(5));
    EXPECT_EQ(net::bugs_total(), before + 1);
    net::report_bug(nullptr);  // no exception: not a bug
    EXPECT_EQ(net::bugs_total(), before + 1);
}
