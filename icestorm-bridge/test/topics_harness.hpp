#pragma once
// Shared by the topic service's unit tests: a transient topic_service on shards run by the test
// thread (nothing bound: the published endpoints only go into the proxies it returns), a
// stand-in router whose one session is a probe connection, catalog calls whose replies come
// back on a probe connection, and subscribers on loopback back ends
// (net/test/loop_harness.hpp has the rest).
#include "../../net/test/loop_harness.hpp"

#include <moraine/icestorm_bridge/topic_connection.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/session_directory.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace moraine::test {

/// The router's stand-in: proxies at 127.0.0.1:4064 are session servants; the session whose
/// category is `category` lives on shard `owner`, and its client connection is `sink`.
class stand_in_router final : public net::session_directory {
public:
    std::string category = "sess";
    unsigned owner = 0;
    std::shared_ptr<probe_connection> sink;
    std::vector<unsigned> delivered_on;  ///< the shard of each deliver() call
    /// Each note_subscription() call: the shard it ran on and the category.
    std::vector<std::pair<unsigned, std::string>> subscriptions_noted;
    /// The categories of sessions that moved away (session_here answers false for them).
    std::set<std::string> moved_away;

    bool hosts(const protocol::proxy& p) const override {
        for (const auto& e : p.endpoints)
            if (e.is_tcp() && e.host == "127.0.0.1" && e.port == 4064) return true;
        return false;
    }
    unsigned owner_of(std::string_view) const noexcept override { return owner; }
    bool forwards_context() const noexcept override { return false; }
    bool session_here(net::shard&, std::string_view cat) const override { return !moved_away.contains(std::string(cat)); }
    void note_subscription(net::shard& sh, std::string_view cat) override {
        subscriptions_noted.emplace_back(sh.index(), std::string(cat));
    }
    delivery deliver(net::shard& sh, std::string_view cat, session_cache&, std::size_t queue_limit, frame_source make,
                     bool, reply_done) override {
        delivered_on.push_back(sh.index());
        if (!sink || sink->closed() || cat != category) return delivery::no_session;
        if (sink->queued_bytes() >= queue_limit) return delivery::queue_full;
        return sink->enqueue(make()) == net::enqueue_result::over_limit ? delivery::over_limit : delivery::queued;
    }
};

inline icestorm_bridge::topics_config topics_config() {
    icestorm_bridge::topics_config c;
    c.enabled = true;
    c.topic_manager_published_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 10000");
    c.publish_published_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 10001");
    return c;
}

/// A topic service on `threads` owned shards, with a stand-in router.
class topics {
public:
    explicit topics(unsigned threads = 2, const std::function<void(icestorm_bridge::topics_config&)>& tweak = {},
                    const std::function<void(net::runtime_config&)>& runtime_tweak = {},
                    icestorm_bridge::store_opening opening = icestorm_bridge::store_opening::now)
        : shards_(owned_shards(threads, runtime_tweak)) {
        auto c = topics_config();
        if (tweak) tweak(c);
        svc_ = std::make_unique<icestorm_bridge::topic_service>(*shards_, std::move(c), &router_, opening);
        replies_ = std::make_unique<probed>(shards_->at(0));
        replies_->conn->start_plain();
        settle(*shards_);
    }
    ~topics() {
        for (auto& c : conns_) c->close(net::close_reason::shutdown, "test over");
        replies_->conn->close(net::close_reason::shutdown, "test over");
        if (router_.sink) router_.sink->close(net::close_reason::shutdown, "test over");
        finish(*shards_);
    }

    net::shard_set& shards() noexcept { return *shards_; }
    icestorm_bridge::topic_service& svc() noexcept { return *svc_; }
    stand_in_router& router() noexcept { return router_; }

    /// Serves `message` (a twoway request to the TopicManager or a topic) on the catalog and
    /// returns its reply, as a TopicManager connection would.
    protocol::byte_buffer catalog_call(std::int32_t id, protocol::identity_view target, std::string_view operation,
                                       const protocol::byte_buffer& params,
                                       const std::function<void()>& pump = {}) {
        auto message = request_message(id, target, operation, params);
        const std::size_t before = replies_->peer().frames().size();
        shards_->invoke_on(0, [this, id, message = std::move(message)](net::shard&) mutable {
            svc_->cat().dispatch(std::move(message), net::callback_route{0, replies_->conn, id});
        });
        run_until(*shards_, [&] {
            if (pump) pump();
            return replies_->peer().frames().size() > before;
        });
        return replies_->peer().frames().size() > before ? replies_->peer().frames()[before] : protocol::byte_buffer{};
    }

    protocol::byte_buffer create(std::string_view name) {
        return catalog_call(1, {"TopicManager", "IceStorm"}, "create",
                            encaps([&](protocol::output_stream& os) { os.write_string(name); }));
    }

    protocol::byte_buffer subscribe(std::string_view topic, const std::string& proxy,
                                    const std::vector<std::pair<std::string, std::string>>& qos = {},
                                    const std::function<void()>& pump = {}) {
        return catalog_call(2, {"topic." + std::string(topic), "IceStorm"}, "subscribeAndGetPublisher",
                            encaps([&](protocol::output_stream& os) {
                                os.write_size(static_cast<std::int32_t>(qos.size()));
                                for (const auto& [k, v] : qos) {
                                    os.write_string(k);
                                    os.write_string(v);
                                }
                                protocol::write_proxy(os, *protocol::proxy_from_string(proxy));
                            }),
                            pump);
    }

    /// A started topic connection on shard `shard` (Publish side or TopicManager side), its
    /// validate connection read.
    socket_end& connect(unsigned shard, bool publish_side) {
        auto pair = std::make_unique<socket_pair>(shards_->at(shard));
        auto c = std::make_shared<icestorm_bridge::topic_connection>(shards_->at(shard), pair->take_transport(), *svc_,
                                                                     publish_side);
        c->start();
        EXPECT_TRUE(run_until(*shards_, [&] { return !pair->peer.frames().empty(); }));
        pair->peer.frames().clear();
        conns_.push_back(c);
        pairs_.push_back(std::move(pair));
        return pairs_.back()->peer;
    }
    const std::vector<std::shared_ptr<icestorm_bridge::topic_connection>>& connections() const { return conns_; }

    /// A session servant's client connection on shard `owner` for the stand-in router.
    probe_connection& session_sink(unsigned owner) {
        router_.owner = owner;
        sink_pair_ = std::make_unique<socket_pair>(shards_->at(owner));
        router_.sink = std::make_shared<probe_connection>(shards_->at(owner), sink_pair_->take_transport());
        router_.sink->start_plain();
        return *router_.sink;
    }
    socket_end& sink_peer() { return sink_pair_->peer; }

private:
    std::unique_ptr<net::shard_set> shards_;
    stand_in_router router_;
    std::unique_ptr<icestorm_bridge::topic_service> svc_;
    std::unique_ptr<probed> replies_;
    std::vector<std::unique_ptr<socket_pair>> pairs_;
    std::vector<std::shared_ptr<icestorm_bridge::topic_connection>> conns_;
    std::unique_ptr<socket_pair> sink_pair_;
};

/// The type id of the user exception a reply carries ("" if none).
inline std::string user_exception_type(const protocol::byte_buffer& reply_message) {
    const auto r = reply_of(reply_message);
    if (r.status != protocol::reply_status::user_exception) return "";
    auto ex = protocol::decode_user_exception(r.payload);
    return ex ? std::string(ex->type_id) : std::string("(undecodable)");
}

/// The proxy an OK reply returns.
inline protocol::proxy proxy_result(const protocol::byte_buffer& reply_message) {
    const auto r = reply_of(reply_message);
    EXPECT_EQ(r.status, protocol::reply_status::ok);
    protocol::input_stream in(r.payload);
    auto e = in.read_encapsulation();
    protocol::input_stream body(e.payload(), e.encoding);
    return protocol::read_proxy(body);
}

/// A publisher's request to `<topic>.publish`: operation `op` with one string parameter.
inline protocol::byte_buffer publish_message(std::string_view topic, std::string_view op, std::string_view text,
                                             const std::vector<std::pair<std::string, std::string>>& ctx = {}) {
    return request_message(0, {std::string(topic) + ".publish", "IceStorm"}, op,
                           encaps([&](protocol::output_stream& os) { os.write_string(text); }), 0, {}, ctx);
}

}  // namespace moraine::test
