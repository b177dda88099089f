#pragma once
// Collects an HTTP head up to its blank line, bounded: the first step of either side of a
// WebSocket opening handshake (RFC 6455 §4; docs/transports.md §1.1-1.2).
#include <moraine/protocol/bytes.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace moraine::transport {

/// An upgrade request is a few hundred bytes (Chromium's: about 600); 8 KiB bounds a hostile one.
inline constexpr std::size_t http_head_max = 8 * 1024;

/** The bytes of one HTTP head, fed in pieces, kept until its blank line ("\r\n\r\n") arrives;
    only then is it parsed, once (a head trickled a byte at a time costs O(size), not O(size²)).
    The bytes after the blank line are not taken. */
class http_head {
public:
    /// Where the head stands.
    enum class state { need_more, complete, too_long };

    /** Takes what `data` adds to the head (never beyond its blank line, nor beyond 8 KiB in all).
        @return complete once the blank line is in; too_long when 8 KiB came without it; else
                need_more. `used` = bytes of `data` taken (the rest follow the head). */
    state add(protocol::byte_view data, std::size_t& used) {
        const std::size_t old = text_.size();
        const std::size_t room = http_head_max - old;
        const std::size_t take = data.size() < room ? data.size() : room;
        text_.append(protocol::as_chars(data.first(take)));
        const std::size_t from = old < 3 ? 0 : old - 3;  // the blank line may begin in an earlier piece
        const std::size_t at = text_.find("\r\n\r\n", from);
        if (at != std::string::npos) {
            text_.resize(at + 4);
            used = at + 4 - old;
            return state::complete;
        }
        used = take;
        return text_.size() >= http_head_max ? state::too_long : state::need_more;
    }

    /// The head, ending with its blank line, once add() said complete.
    std::string_view text() const noexcept { return text_; }
    /// Frees the bytes (the handshake is over).
    void clear() noexcept { std::string().swap(text_); }

private:
    std::string text_;
};

}  // namespace moraine::transport
