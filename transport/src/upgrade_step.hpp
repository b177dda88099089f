#pragma once
// What both sides of the WebSocket opening handshake do with the bytes they read (private).
#include <moraine/transport/http_head.hpp>
#include <moraine/transport/ws_error.hpp>
#include <moraine/transport/ws_upgrade_result.hpp>

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include <string>
#include <string_view>

namespace moraine::transport {

/// A refused upgrade: `why` for the log, the cause, and the HTTP answer to send (none: close).
inline ws_upgrade_result ws_refusal(ws_errc ec, std::string why, std::string answer = {}) {
    ws_upgrade_result r;
    r.status = ws_upgrade_status::refused;
    r.answer = std::move(answer);
    r.why = std::move(why);
    r.ec = ec;
    return r;
}

/** Collects `data` into `head` and, once the head is complete (its blank line read), parses it
    once with Beast's `Parser` (http::request_parser or response_parser over empty_body) and
    lets `decide(message) -> ws_upgrade_result` judge it. A head over 8 KiB is refused with
    `too_long`; a parser error with `bad_http` followed by the parser's reason (both
    ws_errc::bad_http). The head is freed once decided; `consumed` says how much of `data`
    belonged to it. */
template <class Parser, class Decide>
ws_upgrade_result upgrade_step(http_head& head, protocol::byte_view data, std::string_view too_long,
                               std::string_view bad_http, Decide&& decide) {
    std::size_t used = 0;
    ws_upgrade_result r;
    switch (head.add(data, used)) {
    case http_head::state::need_more:
        r.consumed = used;
        return r;
    case http_head::state::too_long:
        head.clear();
        r = ws_refusal(ws_errc::bad_http, std::string(too_long));
        r.consumed = used;
        return r;
    case http_head::state::complete:
        break;
    }
    Parser parser;
    parser.header_limit(static_cast<std::uint32_t>(http_head_max));
    boost::beast::error_code pec;
    const std::string_view text = head.text();
    parser.put(boost::beast::net::const_buffer(text.data(), text.size()), pec);
    if (!pec && !parser.is_header_done()) pec = boost::beast::http::error::need_more;  // cannot be: the blank line is in
    r = pec ? ws_refusal(ws_errc::bad_http, std::string(bad_http) + pec.message()) : decide(parser.get());
    head.clear();
    r.consumed = used;
    return r;
}

}  // namespace moraine::transport
