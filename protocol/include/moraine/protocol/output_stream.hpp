#pragma once
// Writing Ice-encoded values into an owned buffer (docs/ice-wire.md §1).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/identity.hpp>

#include <cstdint>
#include <string_view>

namespace moraine::protocol {

/// Appends encoded values to a byte_buffer it owns (or to one lent with `attach`).
class output_stream {
public:
    explicit output_stream(encoding_version enc = encoding_1_1) : enc_(enc) {}

    void write_byte(std::uint8_t v) { buf_.push_back(std::byte{v}); }
    void write_bool(bool v) { write_byte(v ? 1 : 0); }
    void write_short(std::int16_t v);
    void write_int(std::int32_t v);
    void write_long(std::int64_t v);
    void write_float(float v);
    void write_double(double v);
    void write_size(std::int32_t v);
    void write_string(std::string_view s);
    void write_bytes(byte_view b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
    void write_identity(identity_view id);
    /// Facet as a sequence of 0 (empty facet) or 1 string.
    void write_facet(std::string_view facet);
    void write_context(const context& ctx);

    /// Starts a message: a 14-byte header with size 0; `end_message` patches the size.
    void start_message(message_type type, compression_status c = compression_status::none);
    /// Patches the size of the message started at offset 0. @return the message size in bytes.
    std::size_t end_message();
    /// Starts an encapsulation of encoding `e` (size placeholder, version); also switches the
    /// stream's encoding to `e` until end_encapsulation. @return the position to pass to end_encapsulation.
    std::size_t start_encapsulation(encoding_version e);
    void end_encapsulation(std::size_t start);
    /// Writes an empty encapsulation (`06000000 01 0x`).
    void write_empty_encapsulation(encoding_version e);

    void patch_int(std::size_t pos, std::int32_t v) noexcept;
    std::size_t size() const noexcept { return buf_.size(); }
    byte_view view() const noexcept { return buf_; }
    byte_buffer& buffer() noexcept { return buf_; }
    /// Moves the bytes out; the stream is empty afterwards.
    byte_buffer take() noexcept { return std::move(buf_); }
    encoding_version encoding() const noexcept { return enc_; }
    void set_encoding(encoding_version e) noexcept { enc_ = e; }

private:
    byte_buffer buf_;
    encoding_version enc_;
    encoding_version saved_enc_ = encoding_1_1;
};

}  // namespace moraine::protocol
