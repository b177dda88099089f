#pragma once
// An in-process fake Glacier2 router on loopback for the session_client tests: it answers the
// session set-up calls itself and whatever a test scripts, records what it received, and can
// drop its connections and stop or resume listening (reconnection tests).
#include <moraine/client/params.hpp>
#include <moraine/client/session_client.hpp>
#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace moraine::client::test {

using namespace std::chrono_literals;
using protocol::byte_buffer;

/// Answers for one request: whole messages to send back (none = the default answer of
/// router_answers, or none at all: never answered). `nth_of_op` counts per connection.
using script = std::function<std::vector<byte_buffer>(const protocol::request_view&, int nth_of_op)>;

inline byte_buffer ok_reply(std::int32_t id, byte_buffer encaps) {
    byte_buffer out;
    protocol::write_reply_ok(out, id, encaps);
    return out;
}

/// The answers of Glacier2/router to the session set-up calls; "" category = no server endpoints.
inline std::vector<byte_buffer> router_answers(const protocol::request_view& r) {
    if (r.operation == "createSession" || r.operation == "createSessionFromSecureConnection")
        return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) { o.write_short(0); }))};
    if (r.operation == "getCategoryForClient") return {ok_reply(r.request_id, encode_string_params(""))};
    if (r.operation == "getACMTimeout")
        return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) { o.write_int(30); }))};
    if (r.operation == "addProxies")
        return {ok_reply(r.request_id, encode_params([](protocol::output_stream& o) { o.write_size(0); }))};
    if (r.operation == "destroySession") return {ok_reply(r.request_id, empty_params())};
    return {};
}

/// The body of every fake router's run(): a session_client with `so` on `ioc`, `test` on it,
/// `finished` called when the test coroutine has ended; `ioc` runs for at most `limit`.
inline void run_client_test(asio::io_context& ioc,
                            std::function<asio::awaitable<void>(std::shared_ptr<session_client>)> test,
                            session_options so, std::function<void()> finished, std::chrono::steady_clock::duration limit) {
    auto s = session_client::create(ioc.get_executor(), std::move(so));
    bool done = false;
    asio::co_spawn(ioc, test(s), [&](std::exception_ptr e) {
        done = true;
        if (e) std::rethrow_exception(e);
        finished();
    });
    ioc.run_for(limit);
    EXPECT_TRUE(done) << "test coroutine did not finish";
}

struct fake_router {
    /// A router with its own event loop (run() runs it).
    fake_router() : ioc(own_ioc) {}
    /// A router on `shared`'s event loop: several routers and their clients on one thread.
    explicit fake_router(asio::io_context& shared) : ioc(shared) {}
    fake_router(const fake_router&) = delete;
    fake_router& operator=(const fake_router&) = delete;

    asio::io_context own_ioc{1};
    asio::io_context& ioc;
    tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
    std::uint16_t port = acceptor.local_endpoint().port();
    std::vector<std::string> ops;  // operations received, in order
    std::vector<int> compression;  // each request's compression status byte, in order
    std::vector<protocol::context> contexts;  // each request's context, in order
    std::vector<std::pair<std::int32_t, protocol::reply_status>> replies;  // the client's replies to callbacks
    int accepted = 0;              // connections accepted so far
    script answer;
    byte_buffer greeting{protocol::validate_connection_message.begin(), protocol::validate_connection_message.end()};
    std::vector<std::weak_ptr<tcp::socket>> conns;  // for drop_all

    router_address address() const { return {"127.0.0.1", port}; }

    /// Accepts one connection and serves it until it closes.
    asio::awaitable<void> serve() {
        auto [aec, sock] = co_await acceptor.async_accept(nothrow_awaitable);
        if (aec) co_return;
        ++accepted;
        co_await serve_connection(std::make_shared<tcp::socket>(std::move(sock)));
    }

    /// Accepts connections until the acceptor closes, serving each alongside.
    asio::awaitable<void> serve_all() {
        for (;;) {
            auto [aec, sock] = co_await acceptor.async_accept(nothrow_awaitable);
            if (aec) co_return;
            ++accepted;
            auto s = std::make_shared<tcp::socket>(std::move(sock));
            asio::co_spawn(ioc, serve_connection(s), asio::detached);
        }
    }

    /// Closes every connection at once (a router that died: the client reads EOF).
    void drop_all() {
        for (auto& w : conns)
            if (auto s = w.lock()) {
                boost::system::error_code ignored;
                s->close(ignored);
            }
        conns.clear();
    }

    /// Stops listening: connects are refused until listen_again().
    void stop_listening() {
        boost::system::error_code ignored;
        acceptor.close(ignored);
    }

    /// Listens on the same port again and serves with serve_all().
    void listen_again() {
        acceptor = tcp::acceptor(ioc);
        const tcp::endpoint ep(asio::ip::address_v4::loopback(), port);
        acceptor.open(ep.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(ep);
        acceptor.listen();
        asio::co_spawn(ioc, serve_all(), asio::detached);
    }

    asio::awaitable<void> serve_connection(std::shared_ptr<tcp::socket> sock_ptr) {
        conns.push_back(sock_ptr);
        auto& sock = *sock_ptr;
        // As a router does: replies written one by one must not wait for the client's delayed ACK.
        boost::system::error_code ignored;
        sock.set_option(tcp::no_delay(true), ignored);
        co_await asio::async_write(sock, asio::buffer(greeting), nothrow_awaitable);
        byte_buffer in;
        std::array<std::byte, 4096> chunk;
        std::map<std::string, int> seen;
        for (;;) {
            auto [ec, n] = co_await sock.async_read_some(asio::buffer(chunk), nothrow_awaitable);
            if (ec) co_return;
            in.insert(in.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
            boost::system::error_code perr;
            while (auto f = protocol::parse_frame(in, protocol::limits{}, perr)) {
                std::vector<byte_buffer> out;
                if (f->header.type == protocol::message_type::close_connection) co_return;
                if (f->header.type == protocol::message_type::reply) {
                    if (auto r = protocol::decode_reply(f->body())) replies.emplace_back(r->request_id, r->status);
                }
                if (f->header.type == protocol::message_type::request) {
                    const auto status = static_cast<int>(f->header.compression);
                    byte_buffer plain;
                    auto body = f->body();
                    if (f->header.compression == protocol::compression_status::compressed) {
                        auto inflated = protocol::decompress_message(*f, protocol::limits{});
                        if (!inflated) co_return;
                        plain = std::move(*inflated);
                        body = protocol::byte_view(plain).subspan(protocol::header_size);
                    }
                    auto r = protocol::decode_request(body);
                    if (!r) co_return;
                    ops.emplace_back(r->operation);
                    compression.push_back(status);
                    contexts.emplace_back();
                    for (auto [k, v] : r->context.entries) contexts.back().emplace_back(std::string(k), std::string(v));
                    const int nth = seen[std::string(r->operation)]++;
                    out = answer ? answer(*r, nth) : std::vector<byte_buffer>{};
                    if (out.empty()) out = router_answers(*r);
                }
                in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(f->size()));
                for (auto& m : out) co_await asio::async_write(sock, asio::buffer(m), nothrow_awaitable);
            }
            if (perr) co_return;
        }
    }

    /// Runs `test` against this fake router (one connection, or every one with `all`) until
    /// the test finishes; at most `limit`.
    void run(std::function<asio::awaitable<void>(std::shared_ptr<session_client>)> test, session_options so = {},
             bool all = false, std::chrono::steady_clock::duration limit = 10s) {
        asio::co_spawn(ioc, all ? serve_all() : serve(), asio::detached);
        run_client_test(ioc, std::move(test), std::move(so), [this] {
            boost::system::error_code ignored;
            acceptor.close(ignored);
            drop_all();
        }, limit);
    }
};

}  // namespace moraine::client::test
