#include <moraine/icestorm_bridge/local_topics.hpp>

#include <moraine/icestorm_bridge/catalog.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/icestorm_bridge/topic_store.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/datagram_pool.hpp>
#include <moraine/net/locator_resolver.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <algorithm>

namespace moraine::icestorm_bridge {

std::string topic_name_of(const protocol::proxy& topic) {
    std::string_view n = topic.id.name;
    if (constexpr std::string_view prefix = "topic."; n.starts_with(prefix)) n.remove_prefix(prefix.size());
    return std::string(n);
}

namespace {
/// How many subscribers ahead deliver() prefetches: far enough for a miss to be served before
/// the loop gets there (~100 ns here), near enough to stay in the L1 cache.
constexpr std::size_t prefetch_ahead = 4;

std::string health_key(const std::string& topic, const std::string& linked) { return topic + '\n' + linked; }
}  // namespace

void local_topics::topic_destroyed(const std::string& name) {
    topics_.erase(name);
    set_links(name, {});
    subscribers_.erase(name);
}

void local_topics::set_links(const std::string& topic, std::vector<link_info> links) {
    // Forget the health of links that went; those that stay keep their outage state.
    std::erase_if(link_health_, [&](const auto& entry) {
        if (!entry.first.starts_with(topic + '\n')) return false;
        return std::none_of(links.begin(), links.end(),
                            [&](const link_info& l) { return entry.first == health_key(topic, l.key()); });
    });
    if (links.empty())
        links_.erase(topic);
    else
        links_[topic] = std::move(links);
}

link_backoff& local_topics::link_health(const std::string& topic, const std::string& linked) {
    const std::chrono::milliseconds discard{limits_.discard_interval_s * 1000};
    return link_health_.try_emplace(health_key(topic, linked), discard).first->second;
}

const std::vector<link_info>* local_topics::links(const std::string& topic) const {
    auto it = links_.find(topic);
    return it == links_.end() ? nullptr : &it->second;
}

void local_topics::add(const std::string& topic, subscriber s) {
    s.delivery = delivery_state(s.qos, s.twoway);
    subscribers_[topic].push_back(std::make_shared<subscriber>(std::move(s)));
}

void local_topics::remove(const std::string& topic, const std::string& key) {
    auto it = subscribers_.find(topic);
    if (it == subscribers_.end()) return;
    std::erase_if(it->second, [&](const sub_ptr& s) { return s->key == key; });
    if (it->second.empty()) subscribers_.erase(it);
}

std::size_t local_topics::deliveries_in_flight() const noexcept {
    std::size_t n = 0;
    for (const auto& [topic, subs] : subscribers_)
        for (const auto& s : subs) n += s->delivery.queued() + s->delivery.outstanding();
    return n;
}

void local_topics::export_subscribers(std::vector<stored_subscriber>& out) const {
    for (const auto& [topic, subs] : subscribers_) {
        for (const auto& s : subs) {
            stored_subscriber st{topic, {}, qos_entries(s->qos), s->session_local};
            if (s->proxy) {
                st.proxy = *s->proxy;
            } else {
                // A session-local subscriber keeps only its encoded identity and facet.
                protocol::input_stream in(protocol::byte_view(s->target.data(), s->target.size()));
                in.read_identity();  // s->id
                st.proxy.id = s->id;
                st.proxy.facet = std::string(in.read_facet());
                st.proxy.mode = static_cast<std::uint8_t>(s->twoway ? protocol::proxy_mode::twoway : protocol::proxy_mode::oneway);
            }
            out.push_back(std::move(st));
        }
    }
}

std::size_t local_topics::subscriber_count() const noexcept {
    std::size_t n = 0;
    for (const auto& [topic, subs] : subscribers_) n += subs.size();
    return n;
}

namespace {

/// IceStorm's reading of a delivery's outcome: any answer, a user exception included, is a
/// success; ObjectNotExist a hard failure; everything else (no reply too) a transient one.
delivery_outcome outcome_of(const protocol::reply_view* r) noexcept {
    if (!r) return delivery_outcome::transient;
    switch (r->status) {
    case protocol::reply_status::ok:
    case protocol::reply_status::user_exception:
        return delivery_outcome::ok;
    case protocol::reply_status::object_not_exist:
        return delivery_outcome::hard;
    default:
        return delivery_outcome::transient;
    }
}

}  // namespace

void local_topics::deliver(const event_ptr& ev) {
    auto it = subscribers_.find(ev->topic);
    if (it == subscribers_.end()) return;
    const auto now = delivery_state::clock::now();
    delivering_ = true;
    const auto& subs = it->second;
    for (std::size_t i = 0; i < subs.size(); ++i) {
        // Memory latency, not work, bounds a large fan-out: ask for the subscribers ahead now.
        if (i + prefetch_ahead < subs.size()) subs[i + prefetch_ahead]->prefetch();
        if (i + 1 < subs.size()) __builtin_prefetch(subs[i + 1]->target.data());
        const auto& s = subs[i];
        if (!ev->only_subscriber.empty() && s->key != ev->only_subscriber) continue;
        check_oneway_link(*s, now);
        // The usual case: nothing waits for this subscriber, so the event goes without queueing.
        if (!s->pumping) {
            if (auto token = s->delivery.offer_now(now, limits_)) {
                send(ev->topic, s, *ev, *token, now);
                continue;
            }
        }
        switch (s->delivery.offer(ev, now, limits_)) {
        case delivery_state::offer_result::queued:
            break;
        case delivery_state::offer_result::discarded:
        case delivery_state::offer_result::dropped:
            missed(*s);
            break;
        case delivery_state::offer_result::dead:
            drop(ev->topic, s->key);
            continue;
        }
        pump(ev->topic, s, now);
    }
    delivering_ = false;
    reap();
}

void local_topics::pump(const std::string& topic, const sub_ptr& s, delivery_state::clock::time_point now) {
    if (s->pumping) return;  // a send failed synchronously inside the loop below, which goes on
    s->pumping = true;
    while (auto out = s->delivery.next(now)) send(topic, s, *out->ev, out->token, now);
    s->pumping = false;
}

void local_topics::send(const std::string& topic, const sub_ptr& s, const event& ev, std::uint64_t token,
                        delivery_state::clock::time_point now) {
    if (s->session_local)
        send_to_session(topic, s, ev, token, now);
    else
        send_external(topic, s, ev, token, now);
}

void local_topics::check_oneway_link(subscriber& s, delivery_state::clock::time_point now) {
    if (!s.oneway_via) return;
    if (s.oneway_via->failed_unconnected()) s.delivery.completed(0, delivery_outcome::transient, now, limits_);
    if (s.oneway_via->closed()) s.oneway_via.reset();
}

void local_topics::missed(subscriber& s) noexcept {
    ++s.dropped;
    ++events_dropped_;
}

void local_topics::send_to_session(const std::string& topic, const sub_ptr& s, const event& ev, std::uint64_t token,
                                   delivery_state::clock::time_point now) {
    using delivery = net::session_directory::delivery;
    auto* sessions = svc_.sessions();
    net::session_directory::reply_done done;
    if (token != 0) {
        done = [this, topic, w = std::weak_ptr(s), token](const protocol::reply_view* r) {
            on_result(topic, w, token, r);
        };
    }
    auto build = [&] { return frame_for(ev, s->target, sessions->forwards_context()); };
    switch (sessions->deliver(home_, s->id.category, s->session, limits_.queue_bytes,
                              net::session_directory::frame_source(build), s->twoway, std::move(done))) {
    case delivery::queued:
        ++s->delivered;
        ++events_delivered_;
        return;
    case delivery::no_session:
        // The session is gone: Glacier2 would answer ObjectNotExist, a hard error for IceStorm.
        s->delivery.completed(token, delivery_outcome::hard, now, limits_);
        return;
    case delivery::queue_full:
        // Not a failure: the event is missed and its window slot freed.
        missed(*s);
        s->delivery.release(token);
        return;
    case delivery::over_limit:
        s->delivery.completed(token, delivery_outcome::transient, now, limits_);
        return;
    }
}

void local_topics::send_external(const std::string& topic, const sub_ptr& s, const event& ev, std::uint64_t token,
                                 delivery_state::clock::time_point now) {
    if (net::datagram_mode(*s->proxy)) return send_datagram(*s, ev, now);
    std::string failure;
    auto backend = s->qos.connection_cached ? home_.backends().get(*s->proxy, failure)
                                            : home_.backends().get(one_endpoint_of(*s->proxy), failure);
    if (!backend) {
        s->delivery.completed(token, delivery_outcome::transient, now, limits_);
        return;
    }
    if (backend->queued_bytes() >= limits_.queue_bytes) {
        missed(*s);
        s->delivery.release(token);
        return;
    }
    net::reply_handler done;
    if (token != 0) {
        done = [this, topic, w = std::weak_ptr(s), token](const protocol::reply_view* r, std::string_view) {
            on_result(topic, w, token, r);
        };
    }
    if (token == 0) s->oneway_via = backend;
    backend->send(frame_for(ev, s->target, true), std::move(done));
    ++s->delivered;
    ++events_delivered_;
}

void local_topics::send_datagram(subscriber& s, const event& ev, delivery_state::clock::time_point now) {
    // A datagram subscriber (`-d`, `-D`) gets each event as one oneway request in one datagram;
    // a batch datagram one too: a batch of one needs no flush timer (IceStorm.Flush.Timeout).
    const auto frame = frame_for(ev, s.target, true);
    datagram_.clear();
    datagram_.insert(datagram_.end(), frame.head.begin(), frame.head.end());
    if (frame.tail) datagram_.insert(datagram_.end(), frame.tail->begin(), frame.tail->end());
    std::string failure;
    if (!home_.datagrams().send(*s.proxy, datagram_, failure)) {
        // No udp endpoint, or an event too large for a datagram: the send fails, as in IceStorm.
        s.delivery.completed(0, delivery_outcome::transient, now, limits_);
        return;
    }
    ++s.delivered;
    ++events_delivered_;
}

protocol::proxy local_topics::one_endpoint_of(const protocol::proxy& p) {
    // connectionCached=0: a fresh pick per event among the stream endpoints, so events spread
    // over one connection per endpoint (backend_pool keeps a connection per single endpoint).
    std::vector<const protocol::endpoint*> stream;
    for (const auto& e : p.endpoints)
        if (e.stream()) stream.push_back(&e);
    if (stream.size() < 2) return p;
    std::uniform_int_distribution<std::size_t> pick(0, stream.size() - 1);
    return net::with_endpoints(p, {*stream[pick(random_)]});
}

void local_topics::on_result(const std::string& topic, const std::weak_ptr<subscriber>& w, std::uint64_t token,
                             const protocol::reply_view* r) {
    auto s = w.lock();
    if (!s) return;  // unsubscribed or removed meanwhile
    const auto now = delivery_state::clock::now();
    s->delivery.completed(token, outcome_of(r), now, limits_);
    // The freed slot lets the next queued event go (ordered: the next one in publish order).
    pump(topic, s, now);
}

void local_topics::drop(const std::string& topic, const std::string& key) {
    dead_.emplace_back(topic, key);
    if (!delivering_) reap();
}

void local_topics::reap() {
    auto dead = std::move(dead_);
    dead_.clear();
    for (auto& [topic, key] : dead) {
        remove(topic, key);
        // Init-captures: clang before 16 cannot capture structured bindings (P1091).
        svc_.shards().invoke_on(0, [svc = &svc_, topic = topic, key = key](net::shard&) { svc->cat().forget(topic, key); });
    }
}

}  // namespace moraine::icestorm_bridge
