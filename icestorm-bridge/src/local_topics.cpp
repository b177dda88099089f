#include <moraine/icestorm/local_topics.hpp>

#include <moraine/icestorm/catalog.hpp>
#include <moraine/icestorm/topic_service.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <algorithm>

namespace moraine::icestorm {

void local_topics::topic_destroyed(const std::string& name) {
    topics_.erase(name);
    links_.erase(name);
    subscribers_.erase(name);
}

void local_topics::set_links(const std::string& topic, std::vector<link_info> links) {
    if (links.empty())
        links_.erase(topic);
    else
        links_[topic] = std::move(links);
}

const std::vector<link_info>* local_topics::links(const std::string& topic) const {
    auto it = links_.find(topic);
    return it == links_.end() ? nullptr : &it->second;
}

void local_topics::add(const std::string& topic, subscriber s) { subscribers_[topic].push_back(std::move(s)); }

void local_topics::remove(const std::string& topic, const std::string& key) {
    auto it = subscribers_.find(topic);
    if (it == subscribers_.end()) return;
    std::erase_if(it->second, [&](const subscriber& s) { return s.key == key; });
    if (it->second.empty()) subscribers_.erase(it);
}

std::size_t local_topics::subscriber_count() const noexcept {
    std::size_t n = 0;
    for (const auto& [topic, subs] : subscribers_) n += subs.size();
    return n;
}

void local_topics::deliver(const event& ev) {
    auto it = subscribers_.find(ev.topic);
    if (it == subscribers_.end()) return;
    delivering_ = true;
    for (auto& s : it->second) {
        if (!ev.only_subscriber.empty() && s.key != ev.only_subscriber) continue;
        if (s.session_local)
            deliver_to_session(ev, s);
        else
            deliver_external(ev, s);
    }
    delivering_ = false;
    reap();
}

void local_topics::deliver_to_session(const event& ev, subscriber& s) {
    auto* sessions = svc_.sessions();
    auto* c = sessions->session_connection(home_, s.id.category);
    if (!c) {
        // The session is gone: Glacier2 would answer ObjectNotExist, a hard error for IceStorm.
        drop(ev.topic, s.key);
        return;
    }
    if (c->queued_bytes() >= svc_.cfg().subscriber_queue_bytes) {
        ++s.dropped;  // checked before the frame is built: a slow subscriber costs no allocation
        ++events_dropped_;
        return;
    }
    sessions->deliver(*c, frame_for(ev, s.target, sessions->forwards_context()), s.twoway);
    ++s.delivered;
    ++events_delivered_;
}

void local_topics::deliver_external(const event& ev, subscriber& s) {
    std::string failure;
    auto backend = home_.backends().get(s.proxy, failure);
    if (!backend) {
        drop(ev.topic, s.key);
        return;
    }
    if (backend->queued_bytes() >= svc_.cfg().subscriber_queue_bytes) {
        ++s.dropped;
        ++events_dropped_;
        return;
    }
    net::reply_handler done;
    if (s.twoway) {
        done = [this, topic = ev.topic, key = s.key](const protocol::reply_view* r, std::string_view) {
            on_result(topic, key, r);
        };
    }
    backend->send(frame_for(ev, s.target, true), std::move(done));
    ++s.delivered;
    ++events_delivered_;
}

void local_topics::on_result(const std::string& topic, const std::string& key, const protocol::reply_view* r) {
    auto it = subscribers_.find(topic);
    if (it == subscribers_.end()) return;
    auto s = std::find_if(it->second.begin(), it->second.end(), [&](const subscriber& x) { return x.key == key; });
    if (s == it->second.end()) return;
    using protocol::reply_status;
    if (r && (r->status == reply_status::object_not_exist || r->status == reply_status::facet_not_exist)) {
        drop(topic, key);  // hard errors remove the subscriber at once (docs/icestorm.md §3)
    } else if (!r) {
        if (s->qos.retry_count != -1 && ++s->failures > s->qos.retry_count) drop(topic, key);
    } else {
        s->failures = 0;
    }
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

}  // namespace moraine::icestorm
