#include <moraine/transport/layered_stream.hpp>

#include <moraine/transport/ws_masked_frame.hpp>

#include <array>
#include <utility>

namespace moraine::transport {

namespace {
/// Per thread: small messages (and their WebSocket headers) gathered for one record write. A
/// shard encodes one connection at a time, so one buffer serves all of them.
protocol::byte_buffer& thread_staging() {
    thread_local protocol::byte_buffer staging;
    return staging;
}
}  // namespace

layered_stream::layered_stream(tls_engine* engine, bool websocket, ws_role role, std::uint64_t max_message_bytes)
    : engine_(engine), role_(role) {
    if (websocket) ws_.emplace(role, max_message_bytes);
}

layered_stream::~layered_stream() = default;
layered_stream::layered_stream(layered_stream&&) noexcept = default;
layered_stream& layered_stream::operator=(layered_stream&&) noexcept = default;

void layered_stream::hold_early(protocol::byte_view plain) {
    if (!early_) early_ = std::make_unique<protocol::byte_buffer>();
    early_->insert(early_->end(), plain.begin(), plain.end());
}

protocol::byte_buffer layered_stream::take_early() noexcept {
    if (!early_) return {};
    protocol::byte_buffer bytes = std::move(*early_);
    early_.reset();
    return bytes;
}

void layered_stream::expect_upgrade() { upgrade_ = std::make_unique<upgrade_state>(); }

boost::system::error_code layered_stream::upgrade_error() const noexcept {
    return end_ == layered_end::refused && upgrade_ ? upgrade_->ec : boost::system::error_code{};
}

ws_upgrade_result layered_stream::put_upgrade(protocol::byte_view data) {
    ws_upgrade_result r = upgrade_->request.put(data);
    if (r.status == ws_upgrade_status::refused) upgrade_->why = r.why, upgrade_->ec = r.ec;
    return r;
}

std::string layered_stream::why() const {
    switch (end_) {
    case layered_end::need_more:
    case layered_end::stopped:
        return {};
    case layered_end::tls_closed:
        return "peer closed the TLS connection";
    case layered_end::tls_failed:
    case layered_end::seal_failed:
        return "TLS error: " + engine_->error();
    case layered_end::ws_closed:
        return "peer closed the connection";
    case layered_end::ws_failed:
        if (ws_error_ == ws_errc::text_frame) return "WebSocket text frame (Ice sends binary frames only)";
        if (ws_error_ == ws_errc::message_too_big) return "WebSocket message larger than the message size limit";
        return "WebSocket protocol error: " + make_error_code(ws_error_).message();
    case layered_end::refused:
        return upgrade_ ? upgrade_->why : std::string();
    }
    return {};
}

bool layered_stream::seal(protocol::byte_view plain, protocol::byte_buffer& wire) {
    if (engine_) return engine_->write(plain, wire);
    wire.insert(wire.end(), plain.begin(), plain.end());
    return true;
}

bool layered_stream::movable() const noexcept {
    return !engine_ && ws_ && !upgrade_ && ws_->at_message_boundary() && !has_early();
}

protocol::byte_buffer& layered_stream::begin_encode() noexcept {
    auto& staging = thread_staging();
    staging.clear();
    return staging;
}

bool layered_stream::encode_message(const message_pieces& m, protocol::byte_buffer& staging,
                                    protocol::byte_buffer& wire) {
    bool ok = true;
    // Over TLS small pieces share records and a large one is sealed where it lies (no copy into
    // staging); without TLS (ws) the bytes go straight to `wire`.
    const auto emit = [&](protocol::byte_view piece) {
        if (!engine_) return wire.insert(wire.end(), piece.begin(), piece.end()), void();
        if (staging.size() + piece.size() > coalesce_bytes && !staging.empty()) {
            ok = ok && engine_->write(staging, wire);
            staging.clear();
        }
        if (piece.size() >= coalesce_bytes) ok = ok && engine_->write(piece, wire);
        else staging.insert(staging.end(), piece.begin(), piece.end());
    };
    if (ws_ && role_ == ws_role::client) {  // a client masks, so the payload is copied anyway
        thread_local protocol::byte_buffer frame;
        frame.clear();
        const std::array<protocol::byte_view, 2> pieces{m.head, m.tail};
        append_masked_frame(frame, ws_opcode::binary, pieces, random_mask_key());
        emit(frame);
        return ok;
    }
    if (ws_) emit(ws_header(ws_opcode::binary, m.head.size() + m.tail.size()).view());  // one Ice message per frame
    emit(m.head);
    if (!m.tail.empty()) emit(m.tail);
    return ok;
}

bool layered_stream::end_encode(protocol::byte_buffer& staging, protocol::byte_buffer& wire) {
    const bool ok = staging.empty() || engine_->write(staging, wire);
    staging.clear();
    if (staging.capacity() > 2 * coalesce_bytes) protocol::byte_buffer().swap(staging);  // give a burst back
    return ok;
}

}  // namespace moraine::transport
