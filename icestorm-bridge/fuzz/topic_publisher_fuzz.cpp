// libFuzzer target: a connection of the topic service (on the Publish endpoint, or on the
// TopicManager endpoint) fed the input as a byte stream, chunk by chunk, through its own read
// loop, over a socketpair whose other end is drained and checked (net/fuzz/
// connection_harness.hpp describes the input layout and the harness). Byte 0 selects the mode:
//   bit 0  the connection is on the Publish endpoint (else on the TopicManager endpoint)
//   bit 1  topic "clock" exists with four subscribers: two servants of a router session
//          (twoway and oneway, delivered onto that session's connection) and two external
//          ones (oneway, and twoway with retryCount 1, reached through back-end connections)
//   bit 2  topic "clock" exists, without subscribers (when bit 1 is clear)
//   bit 3  "clock" is linked to another service's topic (events go over the link too)
//   bit 4  the peer never reads its replies
//   bit 5  the connection is on shard 1 (the catalog is on shard 0: replies cross shards)
//   bit 6  the router beside the service forwards contexts to session servants
// Each input gets a fresh topic_service on a fresh set of two shards run by this thread; the
// session "router" is a stand-in net::session_directory whose session connection keeps what it
// is sent (bounded by the queue limits) and checks each frame; back ends never resolve (no
// network). After the input everything is closed and the shards run dry; the connection must
// then be freed. Build and run: scripts/fuzz [SECONDS]. By hand: build-fuzz/bin/topic_publisher_fuzz
// -max_len=65536 NEW_DIR icestorm-bridge/fuzz/corpus (new inputs go to the first directory);
// net/fuzz/make_corpus.py writes the seeds.
#include "connection_harness.hpp"

#include <moraine/icestorm_bridge/topic_connection.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/callback_route.hpp>
#include <moraine/net/session_directory.hpp>
#include <moraine/protocol/proxy.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace moraine;
namespace fz = moraine::net::fuzz;

namespace {

enum : std::uint8_t {
    mode_publish_side = 1,
    mode_subscribers = 2,
    mode_topic = 4,
    mode_linked = 8,
    mode_stalled = 16,
    mode_shard_1 = 32,
    mode_forward_context = 64,
};

constexpr std::string_view topic_name = "clock";
constexpr std::string_view session_category = "fuzzsession";
constexpr std::string_view session_endpoint = "tcp -h 127.0.0.1 -p 4064";  // the stand-in router's server endpoint

/// The client connection of a session, as far as the topic service sees one: it only queues
/// what it is given (no socket), so its limits apply (slow consumer) and nothing is written.
class session_sink final : public net::ice_connection {
public:
    explicit session_sink(net::shard& home) : ice_connection(home, net::transport(net::tcp::socket(home.executor()),
                                                                                  net::transport_kind::tcp, nullptr, true)) {}

private:
    bool on_frame(const protocol::frame_view&) override { return true; }
    void on_closed(std::string_view) override {}
};

/// A router beside the topic service with one session, `session_category`, on shard 0.
class stand_in_router final : public net::session_directory {
public:
    std::shared_ptr<session_sink> sink;
    bool forward_context = false;

    bool hosts(const protocol::proxy& p) const override {
        for (const auto& e : p.endpoints)
            if (e.is_tcp() && e.host == "127.0.0.1" && e.port == 4064) return true;
        return false;
    }
    unsigned owner_of(std::string_view) const noexcept override { return 0; }
    bool forwards_context() const noexcept override { return forward_context; }
    bool session_here(net::shard&, std::string_view) const override { return true; }
    void note_subscription(net::shard& sh, std::string_view) override {
        fz::check(sh.index() == 0, "a subscription was noted on a shard that does not own its session");
    }
    /// Looks the session up every time: the cache is the router's optimisation, not part of the contract.
    delivery deliver(net::shard& sh, std::string_view category, session_cache&, std::size_t queue_limit,
                     frame_source make, bool, reply_done) override {
        fz::check(sh.index() == 0, "a session servant was reached from a shard that does not own its session");
        if (!sink || sink->closed() || category != session_category) return delivery::no_session;
        if (sink->queued_bytes() >= queue_limit) return delivery::queue_full;
        auto f = make();
        // The frame must be one whole, well-formed request: head and shared tail as one message.
        protocol::byte_buffer whole(f.head);
        if (f.tail) whole.insert(whole.end(), f.tail->begin(), f.tail->end());
        boost::system::error_code ec;
        const auto frame = protocol::parse_frame(whole, protocol::limits{0}, ec);
        fz::check(frame && frame->size() == whole.size(), "an event frame is not one whole Ice message");
        fz::check(frame->header.type == protocol::message_type::request, "an event frame is not a request");
        fz::output_checker::check_message(*frame);
        return sink->enqueue(std::move(f)) == net::enqueue_result::over_limit ? delivery::over_limit : delivery::queued;
    }
};

std::shared_ptr<const net::runtime_config> runtime() {
    static const auto rt = [] {
        net::runtime_config c;
        c.threads = 2;
        c.connection_queue_high = 8 * 1024;
        c.connection_queue_low = 2 * 1024;
        c.connection_queue_max = 64 * 1024;
        return std::make_shared<const net::runtime_config>(c);
    }();
    return rt;
}

icestorm_bridge::topics_config topics_cfg() {
    icestorm_bridge::topics_config c;
    c.enabled = true;
    // Nothing is bound: the published endpoints only go into the proxies the service returns.
    c.topic_manager_published_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 10000");
    c.publish_published_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 10001");
    c.subscriber_queue_bytes = 4096;
    return c;
}

protocol::byte_buffer encaps(auto&& write) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    write(os);
    os.end_encapsulation(start);
    return os.take();
}

/// Serves `message` (a whole request to the TopicManager or a topic) on the catalog, as if it
/// came in on a TopicManager connection that went away: the reply is dropped.
void catalog_call(icestorm_bridge::topic_service& svc, protocol::byte_buffer message) {
    svc.shards().invoke_on(0, [&svc, message = std::move(message)](net::shard&) mutable {
        svc.cat().dispatch(std::move(message), net::callback_route{0, {}, 1});
    });
}

void create_topic(icestorm_bridge::topic_service& svc) {
    const auto params = encaps([](protocol::output_stream& os) { os.write_string(topic_name); });
    catalog_call(svc, fz::request_message(1, {"TopicManager", "IceStorm"}, "create", params));
}

void subscribe(icestorm_bridge::topic_service& svc, std::string_view proxy,
               std::vector<std::pair<std::string, std::string>> qos) {
    const auto params = encaps([&](protocol::output_stream& os) {
        os.write_size(static_cast<std::int32_t>(qos.size()));
        for (const auto& [k, v] : qos) {
            os.write_string(k);
            os.write_string(v);
        }
        protocol::write_proxy(os, *protocol::proxy_from_string(proxy));
    });
    catalog_call(svc, fz::request_message(1, {"topic." + std::string(topic_name), "IceStorm"},
                                          "subscribeAndGetPublisher", params));
}

/// Links "clock" to another IceStorm's "clock-b" on every shard, as catalog::link does once the
/// linked topic has answered (here nothing answers: its host never resolves).
void link_topic(icestorm_bridge::topic_service& svc) {
    icestorm_bridge::link_info l;
    l.topic = *protocol::proxy_from_string("IceStorm/topic.clock-b:tcp -h other.fuzz -p 10000");
    l.name = "clock-b";
    l.cost = 5;
    l.link = *protocol::proxy_from_string("IceStorm/clock-b.link:tcp -h other.fuzz -p 10001");
    for (unsigned i = 0; i < svc.shards().size(); ++i)
        svc.shards().invoke_on(i, [&svc, l](net::shard& sh) { svc.local(sh.index()).set_links(std::string(topic_name), {l}); });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    fz::quiet_logs();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fz::stream_input input(data, size);
    const std::uint8_t mode = input.mode;
    const auto bugs_before = net::bugs_total();
    {
        // Fresh shards too: a topic service registers per-shard hooks (metrics collectors) for
        // its lifetime, which is the shards' in the router; here it lives for one input.
        net::shard_set set(runtime());
        fz::own_shards(set);
        stand_in_router router;
        router.forward_context = mode & mode_forward_context;
        router.sink = std::make_shared<session_sink>(set.at(0));
        icestorm_bridge::topic_service svc(set, topics_cfg(), &router);  // fresh: no topic survives an input

        if (mode & (mode_subscribers | mode_topic | mode_linked)) {
            create_topic(svc);
            fz::settle(set, nullptr);
            fz::check(svc.local(0).exists(std::string(topic_name)) && svc.local(1).exists(std::string(topic_name)),
                      "TopicManager::create did not reach every shard");
        }
        if (mode & mode_subscribers) {
            const std::string at = ":" + std::string(session_endpoint);
            subscribe(svc, std::string(session_category) + "/twoway -t" + at, {});
            subscribe(svc, std::string(session_category) + "/oneway -o" + at, {{"reliability", ""}});
            subscribe(svc, "external-oneway -o:tcp -h subscriber.fuzz -p 10002", {});
            subscribe(svc, "external-twoway -t:tcp -h subscriber.fuzz -p 10002", {{"retryCount", "1"}});
            fz::settle(set, nullptr);
            fz::check(svc.local(0).subscriber_count() + svc.local(1).subscriber_count() == 4,
                      "subscribeAndGetPublisher did not add the subscribers");
        }
        if (mode & mode_linked) {
            link_topic(svc);
            fz::settle(set, nullptr);
        }

        auto& home = set.at(mode & mode_shard_1 ? 1 : 0);
        fz::peer peer(home, mode & mode_stalled);
        auto conn = std::make_shared<icestorm_bridge::topic_connection>(home, peer.take_transport(), svc,
                                                                 mode & mode_publish_side);
        conn->start();
        fz::settle(set, &peer);
        for (const auto& chunk : input.chunks) {
            if (conn->closed() || !peer.send(chunk)) break;
            fz::settle(set, &peer);
        }
        conn->close(net::close_reason::shutdown, "end of the fuzz input");
        router.sink->close(net::close_reason::shutdown, "end of the fuzz input");
        fz::finish(set, &peer);
        std::weak_ptr<icestorm_bridge::topic_connection> weak = conn;
        conn.reset();
        fz::check(weak.expired(), "a closed topic connection outlived its input (a reference cycle or a lost handler)");
        std::weak_ptr<session_sink> weak_sink = router.sink;
        router.sink.reset();
        fz::check(weak_sink.expired(), "the topic service kept a session connection after its input");
    }
    fz::check(net::bugs_total() == bugs_before, "an exception escaped a coroutine (report_bug)");
    return 0;
}
