#pragma once
// Asio aliases and the error-as-value completion token used by every coroutine (docs/style.md §4).
#include <boost/asio.hpp>
#include <exception>

namespace moraine::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// Completion token: `auto [ec, n] = co_await op(..., nothrow_awaitable);` never throws for I/O errors.
inline constexpr auto nothrow_awaitable = asio::as_tuple(asio::use_awaitable);

/// Completion handler for co_spawn: an exception escaping a coroutine is a bug; it is logged at
/// critical level and counted, never silently dropped (docs/style.md §3, §8).
void report_bug(std::exception_ptr e);

/// Number of exceptions report_bug has seen (moraine_bugs_total).
unsigned long bugs_total() noexcept;

}  // namespace moraine::net
