#pragma once
// Reading Ice-encoded values from a byte view (docs/ice-wire.md §1).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/error.hpp>
#include <moraine/protocol/identity.hpp>

#include <cstdint>
#include <string_view>

namespace moraine::protocol {

/// A cursor over borrowed bytes. Errors are sticky: after the first failure every read returns a
/// zero value and `error()` keeps the first cause (errc::out_of_bounds, ::negative_size, ...),
/// so decoders read a whole structure and check once. Never throws, never allocates (bar
/// context_view's entry vector).
class input_stream {
public:
    explicit input_stream(byte_view data, encoding_version enc = encoding_1_1) noexcept;

    std::uint8_t read_byte() noexcept;
    bool read_bool() noexcept;
    std::int16_t read_short() noexcept;
    std::int32_t read_int() noexcept;
    std::int64_t read_long() noexcept;
    float read_float() noexcept;
    double read_double() noexcept;
    /// Ice size: 1 byte if < 255, else 0xFF + int32; negative → errc::negative_size.
    std::int32_t read_size() noexcept;
    /// A string; the view borrows the stream's bytes.
    std::string_view read_string() noexcept;
    /// The next `n` bytes, borrowed.
    byte_view read_bytes(std::size_t n) noexcept;
    identity_view read_identity() noexcept;
    /// Facet: sequence of 0 or 1 strings; empty view = default facet; >1 → errc::bad_facet.
    std::string_view read_facet() noexcept;
    context_view read_context();
    /// A whole encapsulation (size checked against the remaining bytes; version 1.0 or 1.1).
    encapsulation_view read_encapsulation() noexcept;
    /// Skips an encapsulation; same checks as read_encapsulation.
    void skip_encapsulation() noexcept { (void)read_encapsulation(); }

    bool ok() const noexcept { return !ec_; }
    boost::system::error_code error() const noexcept { return ec_; }
    /// Marks the stream failed with `e` (first error wins).
    void fail(errc e) noexcept;
    std::size_t position() const noexcept { return pos_; }
    std::size_t remaining() const noexcept { return data_.size() - pos_; }
    /// Bytes not read yet, borrowed.
    byte_view rest() const noexcept { return data_.subspan(pos_); }
    encoding_version encoding() const noexcept { return enc_; }
    void set_encoding(encoding_version e) noexcept { enc_ = e; }

private:
    bool need(std::size_t n) noexcept;
    byte_view data_;
    std::size_t pos_ = 0;
    encoding_version enc_;
    boost::system::error_code ec_;
};

}  // namespace moraine::protocol
