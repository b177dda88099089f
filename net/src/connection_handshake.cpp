#include <moraine/net/connection_handshake.hpp>

#include <moraine/net/handshake_pool.hpp>
#include <moraine/net/tls_context.hpp>
#include <moraine/transport/client_handshake.hpp>
#include <moraine/transport/tls_engine.hpp>
#include <moraine/transport/ws_client_upgrade.hpp>

#include <optional>

namespace moraine::net {

namespace tp = moraine::transport;

/// The stream's sink while handshaking: Ice bytes behind the handshake are kept for the
/// connection (it dispatches them once it has its stream), answers go out at once.
struct connection_handshake::early_sink {
    connection_handshake& h;
    bool stream(std::span<const std::byte> ice) {
        h.early_.insert(h.early_.end(), ice.begin(), ice.end());
        return true;
    }
    bool send(protocol::byte_view wire) { return h.send_(wire); }
    bool upgraded() { return true; }  // the stream knows: upgrading() is false from now on
};

connection_handshake::connection_handshake(tcp::socket& socket, tp::tls_engine* engine, tp::layered_stream stream)
    : socket_(socket), engine_(engine), stream_(std::move(stream)) {}

connection_handshake::~connection_handshake() = default;

bool connection_handshake::ready() const noexcept {
    return (!engine_ || engine_->established()) && !stream_.upgrading();
}

const char* connection_handshake::timeout_text() const noexcept {
    if (engine_ && stream_.websocket()) return "TLS handshake or WebSocket upgrade timed out";
    return stream_.websocket() ? "WebSocket upgrade timed out" : "TLS handshake timed out";
}

void connection_handshake::start_accepted(send_fn send, std::chrono::milliseconds timeout,
                                          std::function<void(const char*)> on_timeout) {
    send_ = std::move(send);
    if (stream_.websocket()) stream_.expect_upgrade();
    // A peer that stalls is closed at the deadline, before any Ice byte, and never delays
    // other connections. The handler holds no pointer to this object: it may be gone by then.
    deadline_.emplace(socket_.get_executor());
    deadline_->expires_after(timeout);
    deadline_->async_wait(
        [on_timeout = std::move(on_timeout), what = timeout_text()](const boost::system::error_code& e) {
            if (!e) on_timeout(what);
        });
}

connection_handshake::state connection_handshake::fail(close_reason reason, std::string why) {
    failure_ = {reason, std::move(why)};
    return state::failed;
}

connection_handshake::state connection_handshake::on_readable(const boost::system::error_code& wait_error,
                                                              std::span<std::byte> scratch, handshake_pool* pool,
                                                              std::function<void()> resume) {
    if (wait_error) return fail(close_reason::handshake, "handshake failed: " + wait_error.message());
    boost::system::error_code ec;
    const std::size_t n = socket_.read_some(asio::buffer(scratch.data(), scratch.size()), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return state::want_read;
    const bool in_tls = engine_ && !engine_->established();
    if (ec == asio::error::eof && !in_tls)
        return fail(close_reason::peer_closed, "peer closed before its WebSocket upgrade");  // a port probe
    if (ec) {
        return fail(close_reason::handshake,
                    (in_tls ? "TLS handshake failed: " : "WebSocket upgrade failed: ") +
                        (ec == asio::error::eof ? std::string("the peer closed the connection") : ec.message()));
    }
    const auto data = scratch.first(n);
    if (!in_tls) return feed(data);
    if (pool) {
        // The step's public-key work runs on the pool; nothing else touches the engine
        // meanwhile (the connection arms no read until `resume` is back on its shard).
        step_input_.assign(data.begin(), data.end());
        asio::post(pool->executor(), [this, resume = std::move(resume)]() mutable {
            step_ = engine_->handshake(step_input_, step_flight_);
            asio::post(socket_.get_executor(), std::move(resume));
        });
        return state::stepping;
    }
    protocol::byte_buffer flight;
    const auto step = engine_->handshake(data, flight);
    return after_tls_step(step, flight, data);
}

connection_handshake::state connection_handshake::after_pool_step() {
    // The step's buffers leave with this call: a connection past its handshake keeps none.
    auto input = std::move(step_input_);
    const auto flight = std::move(step_flight_);
    return after_tls_step(step_, flight, input);
}

connection_handshake::state connection_handshake::after_tls_step(const tp::tls_step& step, protocol::byte_view flight,
                                                                 std::span<std::byte> input) {
    if (!flight.empty() && !send_(flight)) return state::failed;  // the server's flight, or a failure's alert
    if (step.status == tp::tls_status::want_read) return state::want_read;
    if (step.status != tp::tls_status::ok)
        return fail(close_reason::handshake, "TLS handshake failed: " + engine_->error());
    return feed(input.subspan(step.consumed));  // an eager peer's records, the upgrade request
}

connection_handshake::state connection_handshake::feed(std::span<std::byte> data) {
    if (!data.empty()) {
        early_sink sink{*this};
        end_ = stream_.feed(data, sink);
        if (end_ == tp::layered_end::stopped) return state::failed;  // send found the connection closed
    }
    if (ready()) return state::done;  // with an end to close for, if one came behind the upgrade
    return end_ == tp::layered_end::need_more ? state::want_read : state::failed;
}

namespace {
/// How the connecting side's handshake failed, in the words backend_connection puts behind
/// "SSL error occurred for new outgoing connection: " (tls_failed) or "WebSocket upgrade
/// failed: ".
client_handshake_result failure_of(const tp::handshake_outcome& o, bool websocket) {
    using f = tp::handshake_failure;
    switch (o.failure) {
    case f::tls_failed:
    case f::tls_closed: {
        const std::string why = o.why.empty() ? std::string("closed") : o.why;  // close_notify has no reason
        if (o.in_tls || !websocket) return {true, why};
        return {false, "TLS: " + why};  // the server's alert or close instead of its 101
    }
    case f::peer_closed:
        if (o.in_tls) return {true, "the server closed the connection in the TLS handshake"};
        return {false, "the server closed the connection in the upgrade"};
    case f::seal_failed:
    case f::refused:
    case f::none:
        break;
    }
    return {false, o.why};
}
}  // namespace

asio::awaitable<client_handshake_result> connection_handshake::connect(const tls_config* cfg,
                                                                       const protocol::endpoint& ep) {
    if (engine_) {
        if (auto ec = prepare_client(engine_->native(), *cfg, ep.host))
            co_return client_handshake_result{true, ec.message()};
    }
    std::optional<tp::ws_client_upgrade> upgrade;
    if (stream_.websocket()) upgrade.emplace(ep.host, static_cast<std::uint16_t>(ep.port), ep.resource);
    // The steps are transport's; this loop only writes each flight and reads once.
    tp::client_handshake hs(engine_, std::move(upgrade), stream_);
    protocol::byte_buffer flight, in(16 * 1024);
    auto step = hs.start(flight);
    for (;;) {
        if (!flight.empty()) {  // a flight, the upgrade request, or a failure's alert
            auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(flight), nothrow_awaitable);
            if (ec) co_return client_handshake_result{hs.in_tls(), ec.message()};
            flight.clear();
        }
        if (step.status == tp::handshake_status::done) co_return client_handshake_result{};
        if (step.status == tp::handshake_status::failed) co_return failure_of(step, stream_.websocket());
        auto [ec, n] = co_await socket_.async_read_some(asio::buffer(in), nothrow_awaitable);
        if (ec == asio::error::eof) {
            step = hs.on_peer_closed();
            continue;
        }
        if (ec == asio::error::operation_aborted) co_return client_handshake_result{hs.in_tls(), "connection closed"};
        if (ec) co_return client_handshake_result{hs.in_tls(), ec.message()};
        step = hs.on_bytes(protocol::byte_view(in.data(), n), flight);
    }
}

}  // namespace moraine::net
