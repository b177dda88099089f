#include <moraine/transport/client_handshake.hpp>

#include <span>
#include <utility>

namespace moraine::transport {

client_handshake::client_handshake(tls_engine* engine, std::optional<ws_client_upgrade> upgrade, layered_stream& stream)
    : engine_(engine), upgrade_(std::move(upgrade)), stream_(stream) {}

handshake_outcome client_handshake::start(protocol::byte_buffer& out) {
    if (!engine_) return upgrade_ ? send_request(out) : progress();
    const tls_step step = engine_->handshake({}, out);  // the ClientHello
    if (step.status == tls_status::failed) return fail(handshake_failure::tls_failed, engine_->error());
    return step.status == tls_status::ok ? established({}, out) : progress();
}

handshake_outcome client_handshake::on_bytes(protocol::byte_view input, protocol::byte_buffer& out) {
    if (!in_tls()) return engine_ ? records(input, out) : (take_plain(input) ? progress() : fail_refused());
    const tls_step step = engine_->handshake(input, out);
    if (step.status == tls_status::want_read) return progress();
    if (step.status != tls_status::ok) return fail(handshake_failure::tls_failed, engine_->error());
    return established(input.subspan(step.consumed), out);
}

handshake_outcome client_handshake::on_peer_closed() const {
    return fail(handshake_failure::peer_closed, in_tls() ? "the peer closed the connection in the TLS handshake"
                                                         : "the peer closed the connection in the upgrade");
}

handshake_outcome client_handshake::established(protocol::byte_view rest, protocol::byte_buffer& out) {
    // Records right behind the server's last flight (its validate connection over ssl, a
    // session ticket) come first: TLS's answers to them precede the upgrade request on the wire.
    if (!rest.empty()) {
        auto r = records(rest, out);
        if (r.status == handshake_status::failed) return r;
    }
    return upgrade_ && !request_sent_ ? send_request(out) : progress();
}

handshake_outcome client_handshake::records(protocol::byte_view input, protocol::byte_buffer& out) {
    const tls_step step = engine_->read(input, out, thread_plain_buffer(),
                                        [this](std::span<std::byte> plain) { return take_plain(plain); });
    if (refusal_) return fail_refused();
    if (step.status == tls_status::failed) return fail(handshake_failure::tls_failed, engine_->error());
    if (step.status == tls_status::closed) return fail(handshake_failure::tls_closed, engine_->error());
    return progress();
}

bool client_handshake::take_plain(protocol::byte_view plain) {
    if (!upgrade_ || !request_sent_) {
        if (!plain.empty()) stream_.hold_early(plain);
        return true;
    }
    ws_upgrade_result r = upgrade_->put(plain);  // keeps a partial head itself
    if (r.status == ws_upgrade_status::need_more) return true;
    if (r.status == ws_upgrade_status::refused) {
        refusal_ = std::move(r);
        return false;
    }
    upgrade_.reset();
    // The server's first frames (its validate connection) may come with the 101: framed still,
    // for the stream to decode once the connection reads.
    if (r.consumed < plain.size()) stream_.hold_early(plain.subspan(r.consumed));
    return true;
}

handshake_outcome client_handshake::send_request(protocol::byte_buffer& out) {
    if (!stream_.seal(protocol::as_bytes(upgrade_->request()), out))
        return fail(handshake_failure::seal_failed, engine_->error());
    request_sent_ = true;
    return progress();
}

handshake_outcome client_handshake::progress() const {
    handshake_outcome o;
    if (!in_tls() && !upgrade_) o.status = handshake_status::done;
    return o;
}

handshake_outcome client_handshake::fail_refused() const {
    return fail(handshake_failure::refused, refusal_->why, refusal_->ec);
}

handshake_outcome client_handshake::fail(handshake_failure f, std::string why, boost::system::error_code ec) const {
    handshake_outcome o;
    o.status = handshake_status::failed;
    o.failure = f;
    o.in_tls = in_tls();
    o.why = std::move(why);
    o.ec = ec;
    return o;
}

}  // namespace moraine::transport
