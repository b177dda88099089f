#include <moraine/net/connection_handshake.hpp>

#include <moraine/net/handshake_pool.hpp>
#include <moraine/net/tls_context.hpp>
#include <moraine/transport/tls_engine.hpp>
#include <moraine/transport/ws_client_upgrade.hpp>

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

asio::awaitable<client_handshake_result> connection_handshake::connect(const tls_config* cfg,
                                                                       const protocol::endpoint& ep) {
    if (engine_) {
        if (auto why = co_await tls_client(*cfg, ep.host); !why.empty()) co_return client_handshake_result{true, why};
    }
    if (stream_.websocket()) {
        if (auto why = co_await ws_client(ep); !why.empty()) co_return client_handshake_result{false, why};
    }
    co_return client_handshake_result{};
}

asio::awaitable<std::string> connection_handshake::tls_client(const tls_config& cfg, const std::string& host) {
    auto& engine = *engine_;
    if (auto ec = prepare_client(engine.native(), cfg, host)) co_return ec.message();
    protocol::byte_buffer flight, in(16 * 1024);
    auto step = engine.handshake({}, flight);
    for (;;) {
        if (!flight.empty()) {
            auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(flight), nothrow_awaitable);
            if (ec) co_return ec.message();
            flight.clear();
        }
        if (step.status == tp::tls_status::ok) co_return std::string();
        if (step.status != tp::tls_status::want_read) co_return engine.error();
        auto [ec, n] = co_await socket_.async_read_some(asio::buffer(in), nothrow_awaitable);
        if (ec == asio::error::operation_aborted) co_return "connection closed";
        if (ec == asio::error::eof) co_return "the server closed the connection in the TLS handshake";
        if (ec) co_return ec.message();
        step = engine.handshake(protocol::byte_view(in.data(), n), flight);
        if (step.status != tp::tls_status::ok || step.consumed == n) continue;
        // Records right behind the handshake: decrypted now, read once the loops start.
        protocol::byte_buffer reply;
        const auto rest = engine.read(protocol::byte_view(in.data() + step.consumed, n - step.consumed), reply,
                                      tp::thread_plain_buffer(), [this](std::span<std::byte> plain) {
                                          stream_.hold_early(plain);
                                          return true;
                                      });
        if (rest.status == tp::tls_status::failed) co_return engine.error();
        flight.insert(flight.end(), reply.begin(), reply.end());
    }
}

asio::awaitable<std::string> connection_handshake::ws_client(const protocol::endpoint& ep) {
    tp::ws_client_upgrade upgrade(ep.host, static_cast<std::uint16_t>(ep.port), ep.resource);
    protocol::byte_buffer request;
    if (!stream_.seal(protocol::as_bytes(upgrade.request()), request)) co_return engine_->error();
    if (auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(request), nothrow_awaitable); ec)
        co_return ec.message();
    protocol::byte_buffer answer = stream_.take_early(), in(16 * 1024);
    for (;;) {
        if (!answer.empty()) {
            const auto r = upgrade.put(answer);
            if (r.status == tp::ws_upgrade_status::refused) co_return r.why;
            if (r.status == tp::ws_upgrade_status::accepted) {
                // The server's first frames (its validate connection) may come with the 101.
                stream_.hold_early(protocol::byte_view(answer).subspan(r.consumed));
                co_return std::string();
            }
            answer.clear();  // kept by the upgrade
        }
        auto [ec, n] = co_await socket_.async_read_some(asio::buffer(in), nothrow_awaitable);
        if (ec == asio::error::operation_aborted) co_return "connection closed";
        if (ec) co_return ec == asio::error::eof ? "the server closed the connection in the upgrade" : ec.message();
        if (engine_) {
            protocol::byte_buffer reply;
            const auto step = engine_->read(protocol::byte_view(in.data(), n), reply, tp::thread_plain_buffer(),
                                            [&answer](std::span<std::byte> plain) {
                                                answer.insert(answer.end(), plain.begin(), plain.end());
                                                return true;
                                            });
            if (step.status == tp::tls_status::failed || step.status == tp::tls_status::closed)
                co_return "TLS: " + (engine_->error().empty() ? std::string("closed") : engine_->error());
        } else {
            answer.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
        }
    }
}

}  // namespace moraine::net
