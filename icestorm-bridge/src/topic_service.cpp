#include <moraine/icestorm_bridge/topic_service.hpp>

#include <moraine/icestorm_bridge/topic_connection.hpp>
#include <moraine/icestorm_bridge/upstream_link.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/metrics.hpp>
#include <moraine/net/published_endpoints.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>

namespace moraine::icestorm_bridge {

namespace {

/// What proxies carry: the configured published endpoints, else the bound ones with a wildcard
/// host expanded to this machine's addresses (as an Ice object adapter publishes them).
std::vector<protocol::endpoint> published(const std::vector<protocol::endpoint>& bound,
                                          const std::vector<protocol::endpoint>& configured) {
    return configured.empty() ? net::published_endpoints(bound) : configured;
}

protocol::proxy proxy_at(std::string name, const std::string& category, const std::vector<protocol::endpoint>& eps) {
    protocol::proxy p;
    p.id = {std::move(name), category};
    p.endpoints = eps;
    return p;
}

/// IceStorm::EventDataSeq with one event, as TopicLink::forward takes it (1.1 encapsulation).
protocol::byte_buffer event_data_params(const event& ev) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_size(1);
    os.write_string(ev.operation);
    os.write_size(ev.mode);  // Ice::OperationMode: an enum, a size in 1.1
    os.write_size(static_cast<std::int32_t>(ev.params->size()));
    os.write_bytes(*ev.params);
    os.write_bytes(ev.context);
    os.end_encapsulation(start);
    return os.take();
}

constexpr net::metric_family delivered{"moraine_events_delivered_total", "counter",
                                       "Topic events written to a subscriber (one per subscriber per event)."};
constexpr net::metric_family dropped{"moraine_events_dropped_total", "counter",
                                     "Topic events a subscriber missed: its queue was full, or it was offline after a failure."};
constexpr net::metric_family link_lost{"moraine_link_events_lost_total", "counter",
                                       "Events not forwarded over a link while the linked topic was unreachable, or "
                                       "forwarded without a reply."};
constexpr net::metric_family subscribers{"moraine_subscribers", "gauge", "Subscribers of the topic service."};
constexpr net::metric_family topics{"moraine_topics", "gauge", "Topics of the topic service."};
constexpr net::metric_family upstream_links{"moraine_upstream_links", "gauge",
                                            "Topics whose link from the upstream IceStorm (topics.upstream) is in place."};

}  // namespace

topic_service::topic_service(net::shard_set& shards, topics_config cfg, net::session_directory* sessions,
                             store_opening opening)
    : shards_(shards), cfg_(std::move(cfg)), sessions_(sessions) {
    for (unsigned i = 0; i < shards_.size(); ++i) {
        locals_.push_back(std::make_unique<local_topics>(*this, shards_.at(i), delivery_limits_of(cfg_)));
        shards_.at(i).add_collector([local = locals_.back().get(), first = i == 0](net::metric_sink& s) {
            s.add(delivered, static_cast<double>(local->events_delivered()));
            s.add(dropped, static_cast<double>(local->events_dropped()));
            s.add(link_lost, static_cast<double>(local->link_events_lost()));
            s.add(subscribers, static_cast<double>(local->subscriber_count()));
            if (first) s.add(topics, static_cast<double>(local->topics().size()));  // every shard knows them all
        });
    }
    catalog_ = std::make_unique<icestorm_bridge::catalog>(*this);
    const auto& c = cfg_;
    if (!c.transient) open_store(opening);
    auto bound_manager = shards_.listen("IceStorm.TopicManager", c.topic_manager_endpoints, [this](net::shard& sh, net::transport s) {
        std::make_shared<topic_connection>(sh, std::move(s), *this, false)->start();
    });
    auto bound_publish = listen_publish(c.publish_endpoints);
    manager_endpoints_ = published(bound_manager, c.topic_manager_published_endpoints);
    publish_endpoints_ = published(bound_publish, c.publish_published_endpoints);
    start_upstream_links();
}

void topic_service::start_upstream_links() {
    auto& home = shards_.at(0);
    for (auto& member : upstream_members(cfg_.upstream)) {
        auto link = upstream_.emplace_back(std::make_shared<upstream_link>(*this, home, std::move(member)));
        // Queued until the shards run; the catalog it uses is shard 0's.
        boost::asio::post(home.io(), [w = std::weak_ptr(link)] {
            if (auto u = w.lock()) u->start();
        });
    }
    if (upstream_.empty()) return;
    // One gauge: the links in place over all upstreams (topics × members when all are linked).
    home.add_collector([links = std::vector<std::weak_ptr<upstream_link>>(upstream_.begin(), upstream_.end())](
                           net::metric_sink& s) {
        std::size_t linked = 0;
        for (const auto& w : links)
            if (auto u = w.lock()) linked += u->linked();
        s.add(upstream_links, static_cast<double>(linked));
    });
}

topic_service::~topic_service() = default;

std::vector<protocol::endpoint> topic_service::listen_publish(const std::vector<protocol::endpoint>& endpoints) {
    // Stream endpoints accept publisher connections; udp ones take publishes as datagrams. The
    // bound endpoints keep the configured order: it is the order a publisher's proxy lists them.
    std::vector<protocol::endpoint> streams, datagrams;
    for (const auto& e : endpoints) (e.is_udp() ? datagrams : streams).push_back(e);
    auto bound_streams = shards_.listen("IceStorm.Publish", streams, [this](net::shard& sh, net::transport s) {
        std::make_shared<topic_connection>(sh, std::move(s), *this, true)->start();
    });
    auto bound_datagrams = shards_.listen_datagrams(
        "IceStorm.Publish", datagrams, [this](net::shard& sh, const protocol::request_view& r) { dispatch_datagram(sh, r); });
    std::vector<protocol::endpoint> bound;
    auto next_stream = bound_streams.begin();
    auto next_datagram = bound_datagrams.begin();
    for (const auto& e : endpoints) bound.push_back(e.is_udp() ? *next_datagram++ : *next_stream++);
    return bound;
}

void topic_service::open_store(store_opening opening) {
    // Before the endpoints are bound: is_session_subscriber needs no endpoints of ours, and no
    // request can reach the catalog before it holds what was stored.
    try {
        store_ = std::make_unique<topic_store>(cfg_.store_dir, shards_.at(0).io().get_executor());
    } catch (const store_held& e) {
        if (opening == store_opening::now) throw;
        // The router being taken over holds it; the takeover keeps this service's intake held
        // until it is open here.
        spdlog::info("{}; opened here once the old router lets go of it", e.what());
        store_pending_ = true;
        return;
    }
    auto stored = store_->load();
    spdlog::info("topic database {}: {} topic(s), {} subscriber(s), {} link(s) restored", store_->path(),
                 stored.topics.size(), stored.subscribers.size(), stored.links.size());
    catalog_->restore(std::move(stored));
}

protocol::proxy topic_service::topic_proxy(std::string_view name) const {
    return proxy_at("topic." + std::string(name), cfg().instance_name, manager_endpoints_);
}

protocol::proxy topic_service::publisher_proxy(std::string_view name) const {
    return proxy_at(std::string(name) + ".publish", cfg().instance_name, publish_endpoints_);
}

protocol::proxy topic_service::link_proxy(std::string_view name) const {
    return proxy_at(std::string(name) + ".link", cfg().instance_name, publish_endpoints_);
}

protocol::proxy topic_service::subscriber_publisher_proxy(std::string_view topic, const protocol::identity& sub) const {
    return proxy_at("topic." + std::string(topic) + ".publish." + protocol::identity_to_string(sub.view()),
                    cfg().instance_name, publish_endpoints_);
}

bool topic_service::is_session_subscriber(const protocol::proxy& p) const {
    return sessions_ && sessions_->hosts(p);
}

unsigned topic_service::delivery_shard(const subscriber& s) const {
    if (s.session_local) return sessions_->owner_of(s.id.category);
    return static_cast<unsigned>(std::hash<std::string>{}(s.key) % shards_.size());
}

void topic_service::publish(unsigned from, event_ptr ev) {
    // Events in transit between shards count against the memory budget until delivered.
    const std::size_t bytes = ev->memory_bytes();
    auto& budget = shards_.budget();
    if (shards_.size() > 1) budget.sent(from, bytes * (shards_.size() - 1));
    for (unsigned s = 0; s < shards_.size(); ++s) {
        if (s == from) continue;
        shards_.invoke_on(s, [this, ev, bytes](net::shard& sh) {
            local(sh.index()).deliver(ev);
            shards_.budget().received(sh.index(), bytes);
        });
    }
    local(from).deliver(ev);  // this shard's subscribers without a hop
    if (!ev->from_link) forward_over_links(shards_.at(from), *ev);
}

void topic_service::forward_over_links(net::shard& sh, const event& ev) {
    auto& local_state = local(sh.index());
    const auto* links = local_state.links(ev.topic);
    if (!links) return;
    protocol::byte_buffer params;  // the same EventDataSeq for every link: encoded once, if needed
    const auto now = link_backoff::clock::now();
    for (const auto& l : *links) {
        // A link with cost 0 takes everything; otherwise only events that cost no more than it.
        if (l.cost != 0 && ev.cost > l.cost) continue;
        // An unreachable linked topic gets no event until its back-off is over (each counted).
        if (!local_state.link_health(ev.topic, l.name).admit(now)) {
            local_state.count_link_loss(1);
            continue;
        }
        if (params.empty()) params = event_data_params(ev);
        net::invoke(sh, l.link, "forward", 0, params,
                    [this, &sh, topic = ev.topic, linked = l.key()](const protocol::reply_view* r,
                                                                   std::string_view failure) {
                        on_forward_result(sh, topic, linked, r, failure);
                    });
    }
}

void topic_service::on_forward_result(net::shard& sh, const std::string& topic, const std::string& linked,
                                      const protocol::reply_view* r, std::string_view failure) {
    auto& local_state = local(sh.index());
    if (!local_state.links(topic)) return;  // the link (or its topic) went meanwhile
    auto& health = local_state.link_health(topic, linked);
    if (!r) {  // no reply: the linked topic's service is unreachable; keep the link, back off
        local_state.count_link_loss(1);
        if (health.failed(link_backoff::clock::now()))
            // IceStorm's words for a link in an outage ("<linked topic identity>: subscriber
            // offline"): operators' log watches and ZeroC's federation test look for them.
            spdlog::warn("topic {}: link {}: subscriber offline ({}): its events are discarded and counted "
                         "(moraine_link_events_lost_total), retried with a back-off up to {} ms",
                         topic, linked, failure,
                         health.schedule().max_delay.count());
        return;
    }
    if (const auto lost = health.succeeded())
        spdlog::info("topic {}: link to {} reachable again, {} events lost meanwhile", topic, linked, lost);
    // ObjectNotExist: the linked topic is gone (destroyed, or its service restarted without it).
    // IceStorm drops such a link at once; other answers keep it.
    if (r->status == protocol::reply_status::object_not_exist)
        shards_.invoke_on(0, [this, topic, linked](net::shard&) { cat().drop_link(topic, linked); });
}

void topic_service::broadcast(std::function<void(local_topics&)> fn, std::function<void()> then) {
    // Control path only (create, destroy, link): one countdown per broadcast is fine here.
    auto remaining = std::make_shared<std::atomic<unsigned>>(static_cast<unsigned>(shards_.size()));
    auto shared_fn = std::make_shared<std::function<void(local_topics&)>>(std::move(fn));
    auto shared_then = std::make_shared<std::function<void()>>(std::move(then));
    for (unsigned s = 0; s < shards_.size(); ++s) {
        shards_.invoke_on(s, [this, remaining, shared_fn, shared_then](net::shard& sh) {
            (*shared_fn)(local(sh.index()));
            if (remaining->fetch_sub(1) == 1)
                shards_.invoke_on(0, [shared_then](net::shard&) { (*shared_then)(); });
        });
    }
}

void topic_service::dispatch(topic_connection& c, const protocol::request_view& r, bool publish_side) {
    const bool twoway = r.request_id != 0;
    if (!publish_side && r.id.category == "IceStorm" && r.id.name == "Finder") return dispatch_finder(c, r);
    // The upstream links to `<link_category>/topic.<name>` (upstream_config): the same Topic.
    const bool link_alias = !publish_side && !cfg().upstream.link_category.empty() &&
                            r.id.category == cfg().upstream.link_category;
    if (r.id.category != cfg().instance_name && !link_alias) {
        if (twoway) c.enqueue(net::reply_not_exist(r, protocol::reply_status::object_not_exist));
        return;
    }
    if (publish_side) return dispatch_publish(c.home(), &c, r);
    if (r.id.name != "TopicManager" && !r.id.name.starts_with("topic.")) {
        if (twoway) c.enqueue(net::reply_not_exist(r, protocol::reply_status::object_not_exist));
        return;
    }
    protocol::byte_buffer message;
    protocol::write_request_message(message, 0, r, true);
    net::callback_route route{c.home().index(), c.weak_from_this(), r.request_id};
    shards_.invoke_on(0, [this, message = std::move(message), route = std::move(route)](net::shard&) mutable {
        catalog_->dispatch(std::move(message), std::move(route));
    });
}

void topic_service::dispatch_finder(topic_connection& c, const protocol::request_view& r) {
    // IceStorm::Finder, always `IceStorm/Finder` whatever the instance name: how icestormadmin
    // (IceStormAdmin.Host/Port) finds the TopicManager. Answered here, no catalog involved.
    static constexpr std::array<std::string_view, 2> ids{"::Ice::Object", "::IceStorm::Finder"};
    const bool twoway = r.request_id != 0;
    bool malformed = false;
    if (!r.facet.empty()) {
        if (twoway) c.enqueue(net::reply_not_exist(r, protocol::reply_status::facet_not_exist));
        return;
    }
    if (auto reply = net::answer_object_op(r, ids, ids[1], malformed)) {
        if (twoway) c.enqueue(std::move(*reply));
        return;
    }
    if (malformed) {
        if (twoway) c.enqueue(net::reply_unknown_local(r.request_id, "::Ice::MarshalException:\nprotocol error: bad parameters"));
        return;
    }
    if (r.operation != "getTopicManager") {
        if (twoway) c.enqueue(net::reply_not_exist(r, protocol::reply_status::operation_not_exist));
        return;
    }
    const auto manager = proxy_at("TopicManager", cfg().instance_name, manager_endpoints_);
    if (twoway)
        c.enqueue(net::reply_ok(r.request_id, r.params.encoding,
                                [&](protocol::output_stream& os) { protocol::write_proxy(os, manager); }));
}

void topic_service::dispatch_datagram(net::shard& sh, const protocol::request_view& r) {
    if (r.id.category == cfg().instance_name) dispatch_publish(sh, nullptr, r);
}

void topic_service::dispatch_publish(net::shard& sh, topic_connection* c, const protocol::request_view& r) {
    const unsigned here = sh.index();
    auto& local = this->local(here);
    const std::string_view name = r.id.name;
    const bool twoway = r.request_id != 0 && c;
    auto answer_void = [&] {
        if (twoway) c->enqueue(net::reply_void(r.request_id, r.params.encoding));
    };
    if (name.ends_with(".publish")) {
        std::string topic(name.substr(0, name.size() - 8));
        if (local.exists(topic)) {
            publish(here, make_event(std::move(topic), r));  // IceStorm publishers accept any operation
            return answer_void();
        }
    } else if (name.ends_with(".link")) {
        std::string topic(name.substr(0, name.size() - 5));
        if (local.exists(topic) && r.operation == "forward") {
            if (forward_linked(sh, c, topic, r)) answer_void();
            return;
        }
    } else if (name.starts_with("topic.")) {
        for (const auto& t : local.topics()) {  // per-subscriber publisher: topic.<t>.publish.<subscriber>
            const std::string prefix = "topic." + t + ".publish.";
            if (!name.starts_with(prefix)) continue;
            auto ev = make_event(t, r);
            ev->only_subscriber = std::string(name.substr(prefix.size()));
            return publish_to_subscriber(here, c, r, std::move(ev));
        }
    }
    if (twoway) c->enqueue(net::reply_not_exist(r, protocol::reply_status::object_not_exist));
}

void topic_service::publish_to_subscriber(unsigned here, topic_connection* c, const protocol::request_view& r,
                                          std::shared_ptr<event> ev) {
    // A oneway goes at once, in order with the connection's other publishes (a subscriber that
    // is gone simply gets nothing). A twoway is answered: the object lives as long as its
    // subscriber, which only the catalog (shard 0) knows for sure, so it goes through shard 0
    // and is answered ObjectNotExist once the subscriber is gone, as IceStorm answers it.
    const bool twoway = r.request_id != 0 && c;
    if (!twoway) return publish(here, std::move(ev));
    net::callback_route route{here, twoway ? c->weak_from_this() : std::weak_ptr<net::ice_connection>{},
                              twoway ? r.request_id : 0};
    protocol::byte_buffer done, gone;
    if (twoway) {
        done = net::reply_void(r.request_id, r.params.encoding);
        gone = net::reply_not_exist(r, protocol::reply_status::object_not_exist);
    }
    shards_.invoke_on(0, [this, ev = std::move(ev), route = std::move(route), done = std::move(done),
                          gone = std::move(gone)](net::shard&) mutable {
        const bool exists = catalog_->has_subscriber(ev->topic, ev->only_subscriber);
        if (exists) publish(0, std::move(ev));
        if (route.request_id != 0) net::send_callback_reply(shards_, 0, route, exists ? std::move(done) : std::move(gone));
    });
}

bool topic_service::forward_linked(net::shard& sh, topic_connection* c, const std::string& topic,
                                   const protocol::request_view& r) {
    // TopicLink::forward(EventDataSeq): each EventData {op, mode, data (the params encapsulation), context}.
    protocol::input_stream in(r.params.payload(), r.params.encoding);
    const auto n = in.read_size();
    std::vector<event_ptr> events;
    bool bad_data = false;
    for (std::int32_t i = 0; i < n && in.ok() && !bad_data; ++i) {
        const auto op = in.read_string();
        const auto mode = r.params.encoding == protocol::encoding_1_0 ? in.read_byte()
                                                                       : static_cast<std::uint8_t>(in.read_size());
        const auto data = in.read_bytes(static_cast<std::size_t>(std::max(0, in.read_size())));
        const auto ctx = in.read_context();
        // `data` becomes the params of the request every subscriber gets: it must be one whole
        // encapsulation, as decode_request requires of a publisher's own params.
        protocol::input_stream params(data);
        (void)params.read_encapsulation();
        bad_data = in.ok() && (!params.ok() || params.remaining() != 0);
        if (in.ok() && !bad_data) events.push_back(make_event(topic, op, mode, data, ctx.raw, event_cost(ctx)));
    }
    if (!in.ok() || bad_data) {
        if (r.request_id != 0 && c)
            c->enqueue(net::reply_unknown_local(r.request_id, "::Ice::MarshalException:\nprotocol error: bad EventDataSeq"));
        return false;
    }
    for (auto& ev : events) publish(sh.index(), std::move(ev));
    return true;
}

}  // namespace moraine::icestorm_bridge
