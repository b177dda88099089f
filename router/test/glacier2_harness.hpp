#pragma once
// Shared by the router's unit tests: a session_router on shards run by the test thread (no
// listening sockets), client connections over socketpairs, and Glacier2 calls built and read
// with the protocol/ codec (net/test/loop_harness.hpp has the rest).
#include "../../net/test/loop_harness.hpp"

#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/user_exception.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/config.hpp>
#include <moraine/router/server_connection.hpp>
#include <moraine/router/session_router.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace moraine::test {

/// An unbuffered allow-all router on 127.0.0.1 (client 4063, server 4064), as the fuzz targets use.
inline router::config glacier2_config() {
    router::config c;
    c.auth = router::auth_mode::allow_all;
    c.client_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 4063");
    c.server_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 4064");
    c.client_buffered = c.server_buffered = false;
    c.session_timeout_s = 30;
    c.acm_timeout_s = 30;
    return c;
}

constexpr protocol::identity_view router_id{"router", "Glacier2"};

/// One client of the router: its socketpair end and its client_connection.
struct glacier2_client {
    socket_pair pair;
    std::shared_ptr<router::client_connection> conn;
    std::int32_t next_id = 1;

    socket_end& peer() noexcept { return pair.peer; }
};

/// A session_router on `threads` owned shards.
class glacier2 {
public:
    explicit glacier2(const std::function<void(router::config&)>& tweak = {}, unsigned threads = 1,
                      const std::function<void(net::runtime_config&)>& runtime_tweak = {})
        : shards_(owned_shards(threads, runtime_tweak)) {
        auto c = glacier2_config();
        if (tweak) tweak(c);
        cfg_ = std::make_shared<const router::config>(std::move(c));
        router_ = std::make_unique<router::session_router>(*shards_, cfg_);
    }
    ~glacier2() {
        for (auto& c : clients_)
            if (!c->conn->closed()) c->conn->close(net::close_reason::shutdown, "test over");
        finish(*shards_);
    }

    net::shard_set& shards() noexcept { return *shards_; }
    router::session_router& router() noexcept { return *router_; }
    router::session_shard& local(unsigned i = 0) noexcept { return router_->local(i); }

    /// A started client connection on shard `shard`, its validate connection read.
    glacier2_client& connect(unsigned shard = 0) {
        auto& sh = shards_->at(shard);
        std::unique_ptr<glacier2_client> c(new glacier2_client{socket_pair(sh), nullptr, 1});
        c->conn = std::make_shared<router::client_connection>(router_->local(shard), c->pair.take_transport());
        c->conn->start();
        EXPECT_TRUE(run_until(*shards_, [&] { return !c->peer().frames().empty(); }));
        EXPECT_EQ(header_of(c->peer().frames().front()).type, protocol::message_type::validate_connection);
        c->peer().frames().clear();
        clients_.push_back(std::move(c));
        return *clients_.back();
    }

    /// Sends `message` from `c` and runs until it answered (a new message) or closed.
    /// @return the answer, or an empty buffer if the connection closed first.
    protocol::byte_buffer exchange(glacier2_client& c, const protocol::byte_buffer& message,
                                   const std::function<void()>& pump = {}) {
        const std::size_t before = c.peer().frames().size();
        c.peer().send(message);
        run_until(*shards_, [&] {
            if (pump) pump();
            return c.peer().frames().size() > before || c.conn->closed();
        });
        if (c.peer().frames().size() > before) return c.peer().frames()[before];
        return {};
    }

    /// Calls `operation` on `target` from `c` (a twoway) and returns the reply message (empty if closed).
    protocol::byte_buffer call(glacier2_client& c, protocol::identity_view target, std::string_view operation,
                               const protocol::byte_buffer& params, const std::function<void()>& pump = {},
                               const std::vector<std::pair<std::string, std::string>>& ctx = {}) {
        return exchange(c, request_message(c.next_id++, target, operation, params, 0, {}, ctx), pump);
    }

    /// createSession(user, password) on the router object.
    protocol::byte_buffer create_session(glacier2_client& c, std::string_view user = "user",
                                         std::string_view password = "pw", const std::function<void()>& pump = {}) {
        return call(c, router_id, "createSession", encaps([&](protocol::output_stream& os) {
                        os.write_string(user);
                        os.write_string(password);
                    }),
                    pump);
    }

    /// addProxies([p]) on the router object.
    protocol::byte_buffer add_proxy(glacier2_client& c, const std::string& proxy) {
        return call(c, router_id, "addProxies", encaps([&](protocol::output_stream& os) {
                        os.write_size(1);
                        protocol::write_proxy(os, *protocol::proxy_from_string(proxy));
                    }));
    }

private:
    std::unique_ptr<net::shard_set> shards_;
    std::shared_ptr<const router::config> cfg_;
    std::unique_ptr<router::session_router> router_;
    std::vector<std::unique_ptr<glacier2_client>> clients_;
};

/// The type id of the user exception a reply message carries ("" if it carries none).
inline std::string user_exception_type(const protocol::byte_buffer& reply_message) {
    const auto r = reply_of(reply_message);
    if (r.status != protocol::reply_status::user_exception) return "";
    auto ex = protocol::decode_user_exception(r.payload);
    return ex ? std::string(ex->type_id) : std::string("(undecodable)");
}

/// The string member of that user exception.
inline std::string user_exception_reason(const protocol::byte_buffer& reply_message) {
    const auto r = reply_of(reply_message);
    auto ex = protocol::decode_user_exception(r.payload);
    if (!ex) return "";
    protocol::input_stream in(ex->members);
    return std::string(in.read_string());
}

/// The results of an OK reply message as a stream.
inline protocol::input_stream results_of(const protocol::byte_buffer& reply_message) {
    const auto r = reply_of(reply_message);
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    protocol::input_stream in(r.payload);
    auto e = in.read_encapsulation();
    return protocol::input_stream(e.payload(), e.encoding);
}

/// A back end's connection to the router's server endpoint, on shard `shard` of `g`: started,
/// its validate connection read and cleared.
struct back_end {
    back_end(glacier2& g, unsigned shard)
        : pair(g.shards().at(shard)),
          conn(std::make_shared<router::server_connection>(g.local(shard), pair.take_transport())) {
        conn->start();
        EXPECT_TRUE(run_until(g.shards(), [&] { return !pair.peer.frames().empty(); }));
        EXPECT_EQ(header_of(pair.peer.frames()[0]).type, protocol::message_type::validate_connection);
        pair.peer.frames().clear();
    }
    ~back_end() { conn->close(net::close_reason::shutdown, "test over"); }
    socket_pair pair;
    std::shared_ptr<router::server_connection> conn;
};

}  // namespace moraine::test
