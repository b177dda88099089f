#include <moraine/transport/ws_frame_decoder.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

namespace moraine::transport {

namespace {
constexpr std::uint8_t fin_bit = 0x80;
constexpr std::uint8_t rsv_bits = 0x70;
constexpr std::uint8_t opcode_bits = 0x0f;
constexpr std::uint8_t mask_bit = 0x80;
constexpr std::uint8_t length_bits = 0x7f;
constexpr std::uint8_t len_16bit = 126;
constexpr std::uint8_t len_64bit = 127;
constexpr std::uint16_t close_no_status = 1005;  // RFC 6455 §7.4.1: a close without a code
constexpr std::uint16_t close_normal = 1000;

// A result without payload or reply (designated initializers would trip -Wmissing-field-initializers).
ws_decoded event(ws_input what, std::size_t consumed = 0) noexcept {
    ws_decoded d;
    d.what = what;
    d.consumed = consumed;
    return d;
}

bool is_control(std::uint8_t op) noexcept { return (op & 0x08) != 0; }

// Header bytes before the mask key: 2, then the extended length (RFC 6455 §5.2).
std::size_t length_end(std::uint8_t len7) noexcept { return len7 == len_16bit ? 4 : len7 == len_64bit ? 10 : 2; }
}  // namespace

ws_frame_decoder::ws_frame_decoder(ws_role role, std::uint64_t max_message_bytes) noexcept
    : max_message_bytes_(max_message_bytes), role_(role) {}

ws_decoded ws_frame_decoder::decode(std::span<std::byte> input, boost::system::error_code& ec) noexcept {
    ec.clear();
    std::size_t used = 0;
    while (true) {
        const auto rest = input.subspan(used);
        switch (state_) {
        case state::done:
            ec = failed_ == ws_errc{} ? make_error_code(ws_errc::closed) : make_error_code(failed_);
            return event(ws_input::error, used);
        case state::header: {
            if (rest.empty()) return event(ws_input::need_more, used);
            used += take_header(rest, ec);
            if (ec) return fail(static_cast<ws_errc>(ec.value()), used, ec);
            break;  // state_ moved on once the header was whole
        }
        case state::data: {
            if (frame_left_ == 0) {  // an empty frame, or the end of one
                state_ = state::header;
                break;
            }
            if (rest.empty()) return event(ws_input::need_more, used);
            ws_decoded d = data_bytes(rest);
            d.consumed += used;
            return d;
        }
        case state::control: {
            ws_decoded d = control_bytes(rest, ec);
            used += d.consumed;
            if (d.what == ws_input::need_more && state_ == state::header) break;  // a pong: skipped
            d.consumed = used;
            return d;
        }
        }
    }
}

std::size_t ws_frame_decoder::take_header(std::span<const std::byte> input, boost::system::error_code& ec) noexcept {
    std::size_t used = 0;
    auto need = [this] {
        if (head_size_ < 2) return std::size_t{2};
        const std::uint8_t b1 = head_byte(1);
        return length_end(b1 & length_bits) + ((b1 & mask_bit) ? 4 : 0);
    };
    while (used < input.size() && head_size_ < need()) {
        const std::size_t n = std::min(need() - head_size_, input.size() - used);
        std::memcpy(head_.data() + head_size_, input.data() + used, n);
        head_size_ = static_cast<std::uint8_t>(head_size_ + n);
        used += n;
        if (head_size_ == 2) {  // refuse a bad frame before waiting for the rest of its header
            ec = check_start();
            if (ec) return used;
        }
    }
    if (head_size_ == need()) ec = finish_header();
    return used;
}

boost::system::error_code ws_frame_decoder::check_start() const noexcept {
    const std::uint8_t b0 = head_byte(0), b1 = head_byte(1);
    const std::uint8_t op = b0 & opcode_bits;
    if (b0 & rsv_bits) return ws_errc::reserved_bits;
    if (op == static_cast<std::uint8_t>(ws_opcode::text)) return ws_errc::text_frame;
    const bool known = op == 0x0 || op == 0x2 || op == 0x8 || op == 0x9 || op == 0xA;
    if (!known) return ws_errc::bad_opcode;
    const bool masked = (b1 & mask_bit) != 0;
    if (role_ == ws_role::server && !masked) return ws_errc::unmasked_frame;
    if (role_ == ws_role::client && masked) return ws_errc::masked_frame;
    if (is_control(op)) {
        if (!(b0 & fin_bit) || (b1 & length_bits) > ws_max_control_payload) return ws_errc::bad_control_frame;
        return {};
    }
    if (op == static_cast<std::uint8_t>(ws_opcode::continuation) && !in_message_) return ws_errc::bad_continuation;
    if (op == static_cast<std::uint8_t>(ws_opcode::binary) && in_message_) return ws_errc::bad_continuation;
    return {};
}

boost::system::error_code ws_frame_decoder::finish_header() noexcept {
    const std::uint8_t b0 = head_byte(0), b1 = head_byte(1);
    const std::uint8_t len7 = b1 & length_bits;
    std::uint64_t len = len7;
    const std::size_t end = length_end(len7);
    if (end > 2) {
        len = 0;
        for (std::size_t i = 2; i < end; ++i) len = (len << 8) | head_byte(i);  // network order
        const bool smallest = len7 == len_16bit ? len > ws_max_control_payload : len > 0xffff;
        if (!smallest || (len >> 63) != 0) return ws_errc::bad_length;
    }
    if (b1 & mask_bit) std::memcpy(mask_.data(), head_.data() + end, 4);
    head_size_ = 0;
    frame_left_ = len;
    phase_ = 0;
    const std::uint8_t op = b0 & opcode_bits;
    if (is_control(op)) {
        state_ = state::control;
        control_size_ = 0;
        return {};
    }
    if (max_message_bytes_ != 0 && len > max_message_bytes_ - std::min(message_bytes_, max_message_bytes_))
        return ws_errc::message_too_big;
    message_bytes_ += len;
    const bool fin = (b0 & fin_bit) != 0;
    in_message_ = !fin;
    if (fin) message_bytes_ = 0;  // the limit counts from the next message on
    state_ = state::data;
    return {};
}

ws_decoded ws_frame_decoder::data_bytes(std::span<std::byte> input) noexcept {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(frame_left_, input.size()));
    const auto out = input.first(n);
    if (role_ == ws_role::server) phase_ = static_cast<std::uint8_t>(apply_mask(out, mask_, phase_));
    frame_left_ -= n;
    if (frame_left_ == 0) state_ = state::header;
    ws_decoded d = event(ws_input::payload, n);
    d.payload = out;
    return d;
}

ws_decoded ws_frame_decoder::control_bytes(std::span<std::byte> input, boost::system::error_code& ec) {
    const auto left = static_cast<std::size_t>(frame_left_);
    if (input.empty() && left != 0) return event(ws_input::need_more);
    if (!control_ && input.size() >= left) {  // whole in this read, as always in practice: no copy
        const auto payload = input.first(left);
        if (role_ == ws_role::server) apply_mask(payload, mask_, 0);
        ws_decoded d = control_event(payload, ec);
        d.consumed = left;
        return d;
    }
    // Straddles reads: keep what came (masked) until the rest arrives.
    if (!control_) control_ = std::make_unique<std::array<std::byte, ws_max_control_payload>>();
    const std::size_t n = std::min(left, input.size());
    std::memcpy(control_->data() + control_size_, input.data(), n);
    control_size_ = static_cast<std::uint8_t>(control_size_ + n);
    frame_left_ -= n;
    if (frame_left_ != 0) return event(ws_input::need_more, n);
    const auto held = std::exchange(control_, nullptr);
    const auto payload = std::span<std::byte>(held->data(), control_size_);
    if (role_ == ws_role::server) apply_mask(payload, mask_, 0);
    ws_decoded d = control_event(payload, ec);
    d.consumed = n;
    return d;  // the reply holds its own copy of the payload: `held` may go
}

ws_decoded ws_frame_decoder::control_event(std::span<const std::byte> payload, boost::system::error_code& ec) noexcept {
    const auto op = static_cast<ws_opcode>(head_byte(0) & opcode_bits);  // head_ still holds the header
    frame_left_ = 0;
    state_ = state::header;
    switch (op) {
    case ws_opcode::ping: {
        ws_decoded d = event(ws_input::ping);
        d.reply = ws_pong_frame(role_, payload);
        return d;
    }
    case ws_opcode::close: {
        if (payload.size() == 1) return fail(ws_errc::bad_control_frame, 0, ec);  // a code is 2 bytes
        const std::uint16_t code = payload.size() >= 2
                                       ? static_cast<std::uint16_t>((std::to_integer<unsigned>(payload[0]) << 8) |
                                                                    std::to_integer<unsigned>(payload[1]))
                                       : close_no_status;
        state_ = state::done;  // failed_ stays {}: later calls say ws_errc::closed
        ws_decoded d = event(ws_input::close);
        d.reply = ws_close_frame(role_, close_normal);
        d.close_code = code;
        return d;
    }
    default: return event(ws_input::need_more);  // a pong: nothing to do; decode() goes on next call
    }
}

ws_decoded ws_frame_decoder::fail(ws_errc why, std::size_t consumed, boost::system::error_code& ec) noexcept {
    ec = make_error_code(why);
    failed_ = why;
    state_ = state::done;
    control_.reset();
    return event(ws_input::error, consumed);
}

}  // namespace moraine::transport
