#include <moraine/transport/ws_error.hpp>

#include <string>

namespace moraine::transport {

namespace {

class category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "moraine.ws"; }

    std::string message(int ev) const override {
        switch (static_cast<ws_errc>(ev)) {
        case ws_errc::bad_http: return "not an HTTP request head of at most 8 KiB";
        case ws_errc::bad_upgrade: return "not a WebSocket version 13 upgrade";
        case ws_errc::unsupported_protocol: return "WebSocket protocol other than ice.zeroc.com";
        case ws_errc::upgrade_refused: return "the WebSocket upgrade was refused";
        case ws_errc::bad_accept_key: return "wrong Sec-WebSocket-Accept";
        case ws_errc::text_frame: return "text frames not supported";
        case ws_errc::unmasked_frame: return "invalid masking: unmasked client frame";
        case ws_errc::masked_frame: return "invalid masking: masked server frame";
        case ws_errc::reserved_bits: return "WebSocket frame with reserved bits set";
        case ws_errc::bad_opcode: return "WebSocket frame with a reserved opcode";
        case ws_errc::bad_continuation: return "WebSocket continuation out of sequence";
        case ws_errc::bad_length: return "WebSocket frame length not in its smallest form";
        case ws_errc::bad_control_frame: return "WebSocket control frame fragmented or over 125 bytes";
        case ws_errc::message_too_big: return "WebSocket message too big";
        case ws_errc::closed: return "WebSocket closed by the peer";
        }
        return "unknown WebSocket error";
    }
};

}  // namespace

const boost::system::error_category& ws_category() noexcept {
    static const category instance;
    return instance;
}

std::uint16_t ws_close_code(const boost::system::error_code& ec) noexcept {
    if (ec.category() != ws_category()) return 0;
    switch (static_cast<ws_errc>(ec.value())) {
    case ws_errc::message_too_big: return 1009;
    case ws_errc::text_frame: return 1003;
    case ws_errc::unmasked_frame:
    case ws_errc::masked_frame:
    case ws_errc::reserved_bits:
    case ws_errc::bad_opcode:
    case ws_errc::bad_continuation:
    case ws_errc::bad_length:
    case ws_errc::bad_control_frame: return 1002;
    default: return 0;
    }
}

}  // namespace moraine::transport
