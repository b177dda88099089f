// The "moraine.protocol" error category (see error.hpp).
#include <moraine/protocol/error.hpp>

#include <string>

namespace moraine::protocol {
namespace {

class protocol_category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "moraine.protocol"; }

    std::string message(int ev) const override { return describe(static_cast<errc>(ev)); }

private:
    // One line per errc, naming the Ice exception a 3.7 peer raises in the same case so logs
    // can be compared with Glacier2's.
    static const char* describe(errc e) noexcept {
        switch (e) {
        case errc::bad_magic: return "bad magic (not an Ice message; BadMagicException)";
        case errc::unsupported_protocol: return "unsupported protocol version (UnsupportedProtocolException)";
        case errc::unsupported_encoding: return "unsupported encoding version (UnsupportedEncodingException)";
        case errc::illegal_message_size: return "illegal message size (IllegalMessageSizeException)";
        case errc::message_too_large: return "message larger than the size limit (MemoryLimitException)";
        case errc::unknown_message_type: return "unknown message type (UnknownMessageException)";
        case errc::out_of_bounds: return "field runs past the end of the message (UnmarshalOutOfBoundsException)";
        case errc::negative_size: return "negative size or count";
        case errc::bad_encapsulation: return "encapsulation size inconsistent with the message";
        case errc::bad_facet: return "facet sequence with more than one element";
        case errc::bad_proxy: return "malformed proxy or endpoint";
        case errc::bad_compression: return "corrupt bzip2 stream or bad uncompressed size (CompressionException)";
        case errc::bad_reply_status: return "unknown reply status";
        case errc::bad_string: return "malformed stringified identity, proxy or endpoint";
        }
        return "unknown moraine.protocol error";
    }
};

}  // namespace

const boost::system::error_category& error_category() noexcept {
    static const protocol_category category;
    return category;
}

}  // namespace moraine::protocol
