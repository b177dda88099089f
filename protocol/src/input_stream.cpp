// Reading Ice-encoded values (docs/ice-wire.md §1, §7).
#include <moraine/protocol/input_stream.hpp>

#include "detail/little_endian.hpp"

#include <bit>
#include <cstring>

namespace moraine::protocol {

input_stream::input_stream(byte_view data, encoding_version enc) noexcept : data_(data), enc_(enc) {}

void input_stream::fail(errc e) noexcept {
    if (!ec_) ec_ = e;
}

// Every read funnels through here: once failed, nothing more is consumed, so reads after an
// error return zero values and the first cause stays in ec_.
bool input_stream::need(std::size_t n) noexcept {
    if (ec_) return false;
    if (remaining() < n) {
        fail(errc::out_of_bounds);
        return false;
    }
    return true;
}

std::uint8_t input_stream::read_byte() noexcept {
    if (!need(1)) return 0;
    return static_cast<std::uint8_t>(data_[pos_++]);
}

bool input_stream::read_bool() noexcept { return read_byte() != 0; }

namespace {
template <class T>
T read_le(byte_view data, std::size_t& pos) noexcept {
    T v = detail::load_le<T>(data.data() + pos);
    pos += sizeof(T);
    return v;
}
}  // namespace

std::int16_t input_stream::read_short() noexcept { return need(2) ? read_le<std::int16_t>(data_, pos_) : 0; }
std::int32_t input_stream::read_int() noexcept { return need(4) ? read_le<std::int32_t>(data_, pos_) : 0; }
std::int64_t input_stream::read_long() noexcept { return need(8) ? read_le<std::int64_t>(data_, pos_) : 0; }

float input_stream::read_float() noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(read_int()));
}

double input_stream::read_double() noexcept {
    return std::bit_cast<double>(static_cast<std::uint64_t>(read_long()));
}

std::int32_t input_stream::read_size() noexcept {
    const std::uint8_t b = read_byte();
    if (b != 0xFF) return b;
    const std::int32_t v = read_int();
    if (v < 0) {
        fail(errc::negative_size);
        return 0;
    }
    return v;
}

byte_view input_stream::read_bytes(std::size_t n) noexcept {
    if (!need(n)) return {};
    byte_view v = data_.subspan(pos_, n);
    pos_ += n;
    return v;
}

std::string_view input_stream::read_string() noexcept {
    const auto n = static_cast<std::size_t>(read_size());
    return as_chars(read_bytes(n));  // read_bytes checks n against the remaining bytes
}

identity_view input_stream::read_identity() noexcept {
    identity_view id;
    id.name = read_string();  // name first, then category (spec §1)
    id.category = read_string();
    return id;
}

std::string_view input_stream::read_facet() noexcept {
    const std::int32_t n = read_size();
    if (n == 0) return {};
    if (n > 1) {
        fail(errc::bad_facet);
        return {};
    }
    return read_string();
}

context_view input_stream::read_context() {
    context_view ctx;
    const std::size_t start = pos_;
    const std::int32_t n = read_size();
    // Each pair takes at least two bytes (two empty strings): reject an impossible count
    // before reserving, so a hostile count cannot make us allocate.
    if (!ok() || static_cast<std::size_t>(n) > remaining() / 2) {
        fail(errc::out_of_bounds);
        return {};
    }
    ctx.entries.reserve(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n && ok(); ++i) {
        auto key = read_string();
        auto value = read_string();
        ctx.entries.emplace_back(key, value);
    }
    if (!ok()) return {};
    ctx.raw = data_.subspan(start, pos_ - start);
    return ctx;
}

encapsulation_view input_stream::read_encapsulation() noexcept {
    const std::size_t start = pos_;
    const std::int32_t size = read_int();
    if (!ok()) return {};
    // The size counts itself and the two version bytes (spec §7).
    if (size < 6) {
        fail(errc::bad_encapsulation);
        return {};
    }
    if (static_cast<std::size_t>(size) - 4 > remaining()) {
        fail(errc::out_of_bounds);
        return {};
    }
    encapsulation_view e;
    e.encoding.major = read_byte();
    e.encoding.minor = read_byte();
    if (e.encoding != encoding_1_0 && e.encoding != encoding_1_1) {
        fail(errc::unsupported_encoding);
        return {};
    }
    pos_ = start + static_cast<std::size_t>(size);
    e.bytes = data_.subspan(start, static_cast<std::size_t>(size));
    return e;
}

}  // namespace moraine::protocol
