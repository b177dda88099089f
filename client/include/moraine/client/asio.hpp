#pragma once
// Asio aliases and the error-as-value completion token of the client library (docs/style.md §4).
#include <boost/asio.hpp>

namespace moraine::client {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// Completion token: `auto [ec, n] = co_await op(..., nothrow_awaitable);` never throws for I/O errors.
inline constexpr auto nothrow_awaitable = asio::as_tuple(asio::use_awaitable);

}  // namespace moraine::client
