#pragma once
// Value parsers every configuration reader shares, so a value means the same thing, and fails
// with the same words, whichever service reads it and whichever file it came from.
// Each throws config_error(at, key, reason).
#include <moraine/net/config_error.hpp>
#include <moraine/protocol/endpoint.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::net {

/// "FILE:LINE" for messages, or "FILE" when `line` is 0 (unknown).
std::string where(const std::string& file, std::size_t line);

/// An Ice endpoint list (`tcp -h 127.0.0.1 -p 4063:ssl -p 4064`, or just `tcp`); empty input
/// gives an empty list. No `-p` is port 0 (ephemeral), no `-h` is `default_host` (Ice.Default.Host).
std::vector<protocol::endpoint> parse_endpoints(std::string_view value, const std::string& at, const std::string& key,
                                                std::string_view default_host = {});

/// A stringified proxy (`Glacier2/router:tcp -p 4063`, `verifier@Adapter`); endpoints without
/// `-h` get `default_host` (Ice.Default.Host).
protocol::proxy parse_proxy(std::string_view value, const std::string& at, const std::string& key,
                            std::string_view default_host = {});

/// Splits on whitespace; "double" or 'single' quotes keep spaces inside one word, and inside
/// them a backslash before the quote character stands for it (as Glacier2 splits its Filter lists).
std::vector<std::string> split_words(std::string_view value, const std::string& at, const std::string& key);

}  // namespace moraine::net
