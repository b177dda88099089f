#pragma once
// An in-process WebSocket router for the session_client tests, played with moraine::transport's
// server-side codec: the upgrade, the client's masked frames one message each, the set-up
// answers of fake_router.hpp; over TLS (asio::ssl, the test PKI) for `wss` when use_tls() was
// called. Serves any number of connections on the test's own thread.
#include "fake_router.hpp"
#include "test_pki.hpp"

#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/transport/ws_frame_decoder.hpp>
#include <moraine/transport/ws_frame_header.hpp>
#include <moraine/transport/ws_server_upgrade.hpp>

#include <boost/asio/ssl.hpp>

#include <memory>
#include <string>
#include <vector>

namespace moraine::client::test {

namespace transport = moraine::transport;

// One unmasked binary frame holding `m` (what a router sends).
inline byte_buffer server_frame(const byte_buffer& m) {
    const auto h = transport::ws_header(transport::ws_opcode::binary, m.size());
    byte_buffer f(h.view().begin(), h.view().end());
    f.insert(f.end(), m.begin(), m.end());
    return f;
}

struct ws_router {
    asio::io_context ioc{1};
    tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
    std::unique_ptr<asio::ssl::context> tls;  // set: a wss router (use_tls)
    int accepted = 0;                         // connections accepted
    std::vector<std::string> tls_errors;      // failed TLS handshakes, as the router saw them
    std::vector<std::string> ops;             // operations received
    int frames = 0;                           // binary frames received
    std::vector<std::uint16_t> closes;        // close codes received
    std::function<std::vector<byte_buffer>(const protocol::request_view&)> extra;  // sent after an op's answer
    std::vector<std::function<void()>> drops;  // each closes one connection's socket, if still there

    /// Makes this a wss router: the test PKI's router certificate; a client certificate
    /// checked if sent, and required if `require_client_cert`.
    void use_tls(bool require_client_cert = false) {
        const auto& pki = test_pki::get();
        tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
        tls->use_certificate_chain_file(pki.server_cert());
        tls->use_private_key_file(pki.server_key(), asio::ssl::context::pem);
        tls->load_verify_file(pki.ca());
        tls->set_verify_mode(asio::ssl::verify_peer |
                             (require_client_cert ? asio::ssl::verify_fail_if_no_peer_cert : 0));
    }

    /// `ws` (or `wss` after use_tls) at /.
    router_address address() const {
        router_address a{"127.0.0.1", acceptor.local_endpoint().port(), tls != nullptr};
        a.websocket = true;
        return a;
    }

    asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [aec, sock] = co_await acceptor.async_accept(nothrow_awaitable);
            if (aec) co_return;
            ++accepted;
            asio::co_spawn(ioc, serve(std::move(sock)), asio::detached);
        }
    }

    asio::awaitable<void> serve(tcp::socket sock) {
        if (!tls) co_return co_await serve_ws(*tracked(std::make_shared<tcp::socket>(std::move(sock))));
        auto s = tracked(std::make_shared<asio::ssl::stream<tcp::socket>>(std::move(sock), *tls));
        auto [ec] = co_await s->async_handshake(asio::ssl::stream_base::server, nothrow_awaitable);
        if (ec) {
            tls_errors.push_back(ec.message());
            co_return;
        }
        co_await serve_ws(*s);
    }

    /// Closes every connection's socket at once, without a close frame or close_notify (a router that died).
    void drop_all() {
        for (auto& drop : drops) drop();
        drops.clear();
    }

    /// `s`, which drop_all() may close while it lives.
    template <class Stream>
    std::shared_ptr<Stream> tracked(std::shared_ptr<Stream> s) {
        drops.push_back([w = std::weak_ptr<Stream>(s)] {
            if (auto p = w.lock()) {
                boost::system::error_code ignored;
                p->lowest_layer().close(ignored);
            }
        });
        return s;
    }

    /// The upgrade, then frames until the client's close frame or the connection's end.
    template <class Stream>
    asio::awaitable<void> serve_ws(Stream& sock) {
        std::array<std::byte, 4096> buf;
        transport::ws_server_upgrade up;
        for (;;) {
            auto [ec, got] = co_await sock.async_read_some(asio::buffer(buf), nothrow_awaitable);
            if (ec) co_return;
            const auto r = up.put(protocol::byte_view(buf.data(), got));
            if (r.status == transport::ws_upgrade_status::need_more) continue;
            EXPECT_EQ(r.status, transport::ws_upgrade_status::accepted) << r.why;
            EXPECT_EQ(r.consumed, got) << "the client waits for the 101";
            // The 101 and the validate frame in one write, as glacier2router often does.
            std::string first = r.answer;
            const auto v = server_frame({protocol::validate_connection_message.begin(), protocol::validate_connection_message.end()});
            first.append(protocol::as_chars(v));
            co_await asio::async_write(sock, asio::buffer(first), nothrow_awaitable);
            break;
        }
        transport::ws_frame_decoder frames_in(transport::ws_role::server);
        protocol::frame_assembler messages;
        for (;;) {
            auto [ec, got] = co_await sock.async_read_some(asio::buffer(buf), nothrow_awaitable);
            if (ec) co_return;
            std::span<std::byte> data(buf.data(), got);
            std::vector<byte_buffer> out;
            bool closed = false;
            while (!closed) {
                boost::system::error_code dec;
                const auto d = frames_in.decode(data, dec);
                data = data.subspan(d.consumed);
                if (d.what == transport::ws_input::need_more) break;
                if (d.what == transport::ws_input::close) {
                    closes.push_back(d.close_code);
                    closed = true;
                    break;
                }
                if (d.what != transport::ws_input::payload) {
                    ADD_FAILURE() << "unexpected frame: " << dec.message();
                    co_return;
                }
                if (frames_in.done()) break;
                boost::system::error_code perr;
                messages.feed(d.payload, protocol::limits{}, perr, [&](const protocol::frame_view& f) {
                    if (f.header.type != protocol::message_type::request) return true;
                    auto r = protocol::decode_request(f.body());
                    if (!r) return false;
                    ops.emplace_back(r->operation);
                    for (auto& m : test::router_answers(*r)) out.push_back(server_frame(m));
                    if (extra)
                        for (auto& f2 : extra(*r)) out.push_back(std::move(f2));
                    return true;
                });
                ++frames;
            }
            for (auto& m : out) co_await asio::async_write(sock, asio::buffer(m), nothrow_awaitable);
            if (closed) co_return;
        }
    }

    void run(std::function<asio::awaitable<void>(std::shared_ptr<session_client>)> test, session_options so = {}) {
        asio::co_spawn(ioc, accept_loop(), asio::detached);
        run_client_test(ioc, std::move(test), std::move(so), [this] {
            boost::system::error_code ignored;
            acceptor.close(ignored);
        }, 10s);
    }
};

}  // namespace moraine::client::test
