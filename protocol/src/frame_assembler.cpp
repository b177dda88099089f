// Whole messages out of a stream read in arbitrary pieces (docs/ice-wire.md §2, §3).
#include <moraine/protocol/frame_assembler.hpp>

#include "detail/little_endian.hpp"

#include <algorithm>

namespace moraine::protocol {
namespace {

// The size field of a header parse_frame has accepted: at least header_size, within the limit.
std::size_t message_size(byte_view checked_header) noexcept {
    return static_cast<std::size_t>(detail::load_le<std::int32_t>(checked_header.data() + 10));
}

}  // namespace

void frame_assembler::hold(byte_view tail, const limits& lim) {
    // parse_frame accepted this tail's header if it has one; an unlimited peer (limit 0) could
    // name 2 GiB, so reserve only what a limit bounds.
    if (tail.size() >= header_size && lim.max_message_bytes != 0) held_.reserve(message_size(tail));
    held_.assign(tail.begin(), tail.end());
}

std::size_t frame_assembler::top_up(byte_view data, const limits& lim, bool& complete,
                                    boost::system::error_code& ec) {
    std::size_t used = 0;
    if (held_.size() < header_size) {
        used = std::min(header_size - held_.size(), data.size());
        held_.insert(held_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(used));
        // Magic is checked on every byte received, the rest once all 14 bytes are in.
        complete = parse_frame(held_, lim, ec).has_value();  // a header-only message is whole now
        if (ec || held_.size() < header_size || complete) return used;
        if (lim.max_message_bytes != 0) held_.reserve(message_size(held_));
    }
    const std::size_t missing = message_size(held_) - held_.size();
    const std::size_t take = std::min(missing, data.size() - used);
    held_.insert(held_.end(), data.begin() + static_cast<std::ptrdiff_t>(used),
                 data.begin() + static_cast<std::ptrdiff_t>(used + take));
    complete = take == missing;
    return used + take;
}

frame_view frame_assembler::whole_frame(const byte_buffer& whole) noexcept {
    // top_up checked this header against the caller's limits; no limit applies twice.
    boost::system::error_code ignored;
    return *parse_frame(whole, limits{0}, ignored);
}

}  // namespace moraine::protocol
