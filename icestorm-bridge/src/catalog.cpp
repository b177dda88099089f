#include <moraine/icestorm_bridge/catalog.hpp>

#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/local_reply.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

namespace moraine::icestorm_bridge {

namespace {

constexpr std::array<std::string_view, 2> manager_ids{"::Ice::Object", "::IceStorm::TopicManager"};
constexpr std::array<std::string_view, 3> topic_ids{"::Ice::Object", "::IceStorm::Topic", "::IceStorm::TopicInternal"};
constexpr std::string_view topic_prefix = "topic.";

}  // namespace

/// One request being served. The view borrows `message`, which copies of the call share (they
/// travel in std::function completions), so the view stays valid in every copy.
struct catalog::call {
    topic_service& svc;
    std::shared_ptr<const protocol::byte_buffer> message;
    protocol::request_view r;
    net::callback_route route;

    bool twoway() const noexcept { return r.request_id != 0; }
    protocol::encoding_version enc() const noexcept { return r.params.encoding; }
    protocol::input_stream params() const { return protocol::input_stream(r.params.payload(), enc()); }
    void send(protocol::byte_buffer reply) {
        if (twoway()) net::send_callback_reply(svc.shards(), 0, route, std::move(reply));
    }
    template <class Fn>
    void ok(Fn&& write_results) {
        if (twoway()) send(net::reply_ok(r.request_id, enc(), std::forward<Fn>(write_results)));
    }
    void ok_void() { send(net::reply_void(r.request_id, enc())); }
    /// IceStorm's exceptions use the compact format, one optional string member.
    void raise(std::string_view type_id, std::optional<std::string_view> member) {
        send(net::reply_user_exception(r.request_id, enc(), type_id, member, false));
    }
    void not_exist(protocol::reply_status status) { send(net::reply_not_exist(r, status)); }
    /// A change the topic database could not store is refused as a local failure.
    void database_failure(const std::string& error) {
        send(net::reply_unknown_local(r.request_id, "topic database: " + error));
    }
    /// The answer to a void operation once its change was stored (`error` empty) or not.
    void ok_void_if_stored(const std::string& error) {
        if (!error.empty()) return database_failure(error);
        ok_void();
    }
    bool malformed(const protocol::input_stream& in) {
        if (in.ok()) return false;
        send(net::reply_unknown_local(r.request_id, "::Ice::MarshalException:\nprotocol error: " + in.error().message()));
        return true;
    }
};

bool catalog::has_subscriber(const std::string& topic, const std::string& key) const {
    const auto it = topics_.find(topic);
    return it != topics_.end() && it->second.subscribers.contains(key);
}

void catalog::dispatch(protocol::byte_buffer message, net::callback_route route) {
    auto owned = std::make_shared<const protocol::byte_buffer>(std::move(message));
    auto decoded = protocol::decode_request(protocol::byte_view(*owned).subspan(protocol::header_size));
    if (!decoded) return;
    call k{svc_, std::move(owned), *decoded, std::move(route)};
    k.r.request_id = k.route.request_id;
    if (!k.r.facet.empty()) return k.not_exist(protocol::reply_status::facet_not_exist);
    if (k.r.id.name == "TopicManager") return manager_op(k);
    if (k.r.id.name.starts_with(topic_prefix)) {
        const std::string name(k.r.id.name.substr(topic_prefix.size()));
        if (topics_.contains(name)) return topic_op(k, name);
    }
    k.not_exist(protocol::reply_status::object_not_exist);
}

void catalog::manager_op(call& k) {
    bool malformed = false;
    if (auto reply = net::answer_object_op(k.r, manager_ids, manager_ids[1], malformed)) return k.send(std::move(*reply));
    auto in = k.params();
    const auto op = k.r.operation;
    if (op == "create" || op == "retrieve" || op == "createOrRetrieve") {
        const std::string name(in.read_string());
        if (k.malformed(in)) return;
        if (op == "create") return create(k, name);
        // createOrRetrieve (Ice 3.8's IceStorm.ice): the topic, made if needed; never TopicExists.
        if (op == "createOrRetrieve" && !topics_.contains(name)) return create(k, name);
        if (!topics_.contains(name)) return k.raise("::IceStorm::NoSuchTopic", name);  // retrieve
        const auto p = svc_.topic_proxy(name);
        return k.ok([&](protocol::output_stream& os) { protocol::write_proxy(os, p); });
    }
    if (op == "retrieveAll") {
        return k.ok([&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(topics_.size()));
            for (const auto& [name, t] : topics_) {
                os.write_string(name);
                protocol::write_proxy(os, svc_.topic_proxy(name));
            }
        });
    }
    if (op == "getSliceChecksums") return k.ok([](protocol::output_stream& os) { os.write_size(0); });
    k.not_exist(protocol::reply_status::operation_not_exist);
}

namespace {

/// Logs one line under `[IceStorm.Trace.<category>]` when that category's level is at least 1.
template <class... Args>
void trace(int level, std::string_view category, fmt::format_string<Args...> f, Args&&... args) {
    if (level < 1) [[likely]] return;
    spdlog::info("[IceStorm.Trace.{}] {}", category, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace

void catalog::persist(write_fn write, topic_store::done_fn then) {
    if (auto* store = svc_.store()) return write(*store, std::move(then));
    then({});
}

bool catalog::refuse_long_key(call& k, const std::string& topic, const protocol::identity& subscriber) {
    if (!svc_.store()) return false;  // transient: nothing is stored, no bound (as IceStorm)
    const auto bytes = icestorm_key_bytes(svc_.cfg().instance_name, topic, subscriber);
    if (bytes <= icestorm_key_bytes_max) return false;
    k.database_failure("key of " + std::to_string(bytes) + " bytes for topic '" + topic.substr(0, 64) +
                       (topic.size() > 64 ? "...'" : "'") + ": over IceStorm's bound of " +
                       std::to_string(icestorm_key_bytes_max) + " bytes (topic name plus subscriber identity)");
    return true;
}

void catalog::create(call& k, const std::string& name) {
    if (topics_.contains(name)) return k.raise("::IceStorm::TopicExists", name);
    if (refuse_long_key(k, name, {})) return;
    trace(svc_.cfg().trace.topic_manager, "TopicManager", "creating topic '{}'", name);
    topics_[name];  // taken now: a second create while this one is being stored gets TopicExists
    persist([name](topic_store& st, topic_store::done_fn done) { st.put_topic(name, std::move(done)); },
            [this, k, name](const std::string& error) mutable {
                if (!error.empty()) {
                    topics_.erase(name);
                    return k.database_failure(error);
                }
                // Answer once every shard knows the topic, so a publish right after the reply is accepted anywhere.
                auto reply = net::reply_ok(k.r.request_id, k.enc(), [&](protocol::output_stream& os) {
                    protocol::write_proxy(os, svc_.topic_proxy(name));
                });
                svc_.broadcast([name](local_topics& l) { l.topic_created(name); },
                               [k, reply = std::move(reply)]() mutable { k.send(std::move(reply)); });
            });
}

void catalog::ensure_topic(const std::string& name, std::function<void()> done) {
    if (topics_.contains(name)) return done();
    topics_[name];
    persist([name](topic_store& st, topic_store::done_fn d) { st.put_topic(name, std::move(d)); },
            [this, name, done = std::move(done)](const std::string&) mutable {
                // Kept in memory even if not stored: configured topics are made again at each start.
                svc_.broadcast([name](local_topics& l) { l.topic_created(name); }, std::move(done));
            });
}

void catalog::restore(stored_catalog stored) {
    const unsigned shards = svc_.shards().size();
    for (const auto& name : stored.topics) {
        topics_[name];
        for (unsigned i = 0; i < shards; ++i) svc_.local(i).topic_created(name);
    }
    for (auto& st : stored.subscribers) {
        auto it = topics_.find(st.topic);
        if (it == topics_.end()) continue;
        auto made = make_subscriber(std::move(st.proxy), st.qos);
        if (auto* reason = std::get_if<std::string>(&made)) {
            spdlog::warn("topic database: a subscriber of '{}' is skipped: {}", st.topic, *reason);
            continue;
        }
        auto& s = std::get<subscriber>(made);
        if (s.session_local) continue;  // its session ended with the process that stored it
        const unsigned shard = svc_.delivery_shard(s);
        it->second.subscribers[s.key] = subscription{s.id, shard};
        svc_.local(shard).add(st.topic, std::move(s));
    }
    for (auto& l : stored.links) {
        if (auto it = topics_.find(l.topic); it != topics_.end()) it->second.links.push_back(std::move(l.link));
    }
    for (const auto& [name, t] : topics_) {
        if (t.links.empty()) continue;
        for (unsigned i = 0; i < shards; ++i) svc_.local(i).set_links(name, t.links);
    }
}

void catalog::export_to(stored_catalog& out) const {
    for (const auto& [name, t] : topics_) {
        out.topics.push_back(name);
        for (const auto& l : t.links) out.links.push_back({name, l});
    }
}

std::map<std::string, std::vector<link_info>> catalog::adopt(const std::vector<std::string>& topics,
                                                             const std::vector<stored_link>& links,
                                                             const std::vector<placement>& placed, std::vector<char>& added) {
    for (const auto& name : topics) topics_[name];
    added.assign(placed.size(), 0);
    for (std::size_t i = 0; i < placed.size(); ++i) {
        const auto& p = placed[i];
        auto it = topics_.find(p.topic);
        if (it == topics_.end()) continue;
        added[i] = it->second.subscribers.emplace(p.key, subscription{p.id, p.shard}).second ? 1 : 0;
    }
    for (const auto& l : links) {
        auto it = topics_.find(l.topic);
        if (it == topics_.end()) continue;
        auto& have = it->second.links;
        if (std::none_of(have.begin(), have.end(), [&](const link_info& x) { return x.key() == l.link.key(); }))
            have.push_back(l.link);
    }
    std::map<std::string, std::vector<link_info>> all;
    for (const auto& [name, t] : topics_)
        if (!t.links.empty()) all[name] = t.links;
    return all;
}

void catalog::topic_op(call& k, const std::string& name) {
    bool malformed = false;
    if (auto reply = net::answer_object_op(k.r, topic_ids, topic_ids[1], malformed)) return k.send(std::move(*reply));
    const auto op = k.r.operation;
    auto& t = topics_[name];
    auto write_proxy_result = [&](const protocol::proxy& p) {
        k.ok([&](protocol::output_stream& os) { protocol::write_proxy(os, p); });
    };
    if (op == "getName") return k.ok([&](protocol::output_stream& os) { os.write_string(name); });
    if (op == "getPublisher" || op == "getNonReplicatedPublisher") return write_proxy_result(svc_.publisher_proxy(name));
    if (op == "getLinkProxy") return write_proxy_result(svc_.link_proxy(name));
    if (op == "subscribeAndGetPublisher") return subscribe(k, name);
    if (op == "unsubscribe") return unsubscribe(k, name);
    if (op == "link") return link(k, name);
    if (op == "unlink") return unlink(k, name);
    if (op == "destroy") return destroy(k, name);
    if (op == "reap") return k.ok_void();  // replication housekeeping: nothing to reap here
    if (op == "getLinkInfoSeq") {
        return k.ok([&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(t.links.size()));
            for (const auto& l : t.links) {
                protocol::write_proxy(os, l.topic);
                os.write_string(l.name);
                os.write_int(l.cost);
            }
        });
    }
    if (op == "getSubscribers") {
        // IceStorm delivers over a link as to a subscriber whose identity is the linked-to
        // topic's, and lists it among the subscribers (icestormadmin's `subscribers` shows it).
        return k.ok([&](protocol::output_stream& os) {
            os.write_size(static_cast<std::int32_t>(t.subscribers.size() + t.links.size()));
            for (const auto& [key, s] : t.subscribers) os.write_identity(s.id.view());
            for (const auto& l : t.links) os.write_identity(l.topic.id.view());
        });
    }
    k.not_exist(protocol::reply_status::operation_not_exist);
}

std::variant<subscriber, std::string> catalog::make_subscriber(
    protocol::proxy proxy, const std::vector<std::pair<std::string, std::string>>& entries) const {
    const bool twoway = proxy.mode == static_cast<std::uint8_t>(protocol::proxy_mode::twoway);
    auto q = parse_qos(entries, twoway);
    if (auto* reason = std::get_if<std::string>(&q)) return *reason;
    subscriber s;
    s.id = proxy.id;
    s.key = protocol::identity_to_string(proxy.id.view());
    s.target = encode_target(proxy.id, proxy.facet);
    s.session_local = svc_.is_session_subscriber(proxy);
    s.twoway = twoway;
    s.qos = std::get<qos>(q);
    // Only external subscribers are connected to: a session-local one is written to its client
    // connection, and a proxy is ~250 bytes per subscribed session.
    if (!s.session_local) s.proxy = std::make_shared<const protocol::proxy>(std::move(proxy));
    return s;
}

void catalog::subscribe(call& k, const std::string& name) {
    auto in = k.params();
    const auto n = in.read_size();
    std::vector<std::pair<std::string, std::string>> entries;
    for (std::int32_t i = 0; i < n && in.ok(); ++i) {
        std::string key(in.read_string());
        entries.emplace_back(std::move(key), std::string(in.read_string()));
    }
    auto proxy = protocol::read_proxy(in);
    if (k.malformed(in)) return;
    if (proxy.is_nil()) return k.raise("::IceStorm::InvalidSubscriber", "subscriber is a null proxy");
    auto made = make_subscriber(proxy, entries);
    if (auto* reason = std::get_if<std::string>(&made)) return k.raise("::IceStorm::BadQoS", *reason);
    auto s = std::make_shared<subscriber>(std::move(std::get<subscriber>(made)));
    auto& t = topics_[name];
    if (t.subscribers.contains(s->key)) return k.raise("::IceStorm::AlreadySubscribed", std::nullopt);
    if (!s->session_local && refuse_long_key(k, name, s->id)) return;
    const unsigned shard = svc_.delivery_shard(*s);
    trace(svc_.cfg().trace.topic, "Topic", "topic '{}': subscribe '{}'{}", name, s->key,
          s->qos.ordered ? " (reliability=ordered)" : "");
    t.subscribers[s->key] = subscription{s->id, shard};  // taken now: AlreadySubscribed while being stored
    auto reply = net::reply_ok(k.r.request_id, k.enc(), [&](protocol::output_stream& os) {
        protocol::write_proxy(os, svc_.subscriber_publisher_proxy(name, s->id));
    });
    // The delivery shard adds the subscriber first and answers: no event published after the
    // answer can miss it.
    auto add = [svc = &svc_, name, shard, route = k.route, twoway_call = k.twoway(), reply = std::move(reply), s] {
        svc->shards().invoke_on(shard, [svc, name, s, route, twoway_call, reply](net::shard& sh) mutable {
            // The session's shard: its session now has state here and stays in a takeover.
            if (s->session_local) svc->sessions()->note_subscription(sh, s->id.category);
            svc->local(sh.index()).add(name, std::move(*s));
            if (twoway_call) net::send_callback_reply(svc->shards(), sh.index(), route, std::move(reply));
        });
    };
    // A servant of one of this router's sessions ends with its session: never stored.
    if (s->session_local) return add();
    // Answered only once stored: a crash after the answer loses no acknowledged subscription.
    persist([name, proxy = std::move(proxy), entries = std::move(entries)](topic_store& st, topic_store::done_fn done) {
                st.put_subscriber(name, proxy, entries, std::move(done));
            },
            [this, k, name, key = s->key, add = std::move(add)](const std::string& error) mutable {
                auto it = topics_.find(name);
                if (!error.empty()) {
                    if (it != topics_.end()) it->second.subscribers.erase(key);
                    return k.database_failure(error);
                }
                if (it == topics_.end()) return k.not_exist(protocol::reply_status::object_not_exist);  // destroyed meanwhile
                add();
            });
}

void catalog::unsubscribe(call& k, const std::string& name) {
    auto in = k.params();
    auto proxy = protocol::read_proxy(in);
    if (k.malformed(in)) return;
    // IceStorm raises InvalidSubscriber here although unsubscribe does not declare it: an Ice
    // client then sees UnknownUserException, and so does ours.
    if (proxy.is_nil()) return k.raise("::IceStorm::InvalidSubscriber", "subscriber is a null proxy");
    auto& t = topics_[name];
    const auto key = protocol::identity_to_string(proxy.id.view());
    auto it = t.subscribers.find(key);
    if (it == t.subscribers.end()) return k.ok_void();  // IceStorm: not subscribed is not an error
    trace(svc_.cfg().trace.topic, "Topic", "topic '{}': unsubscribe '{}'", name, key);
    svc_.shards().invoke_on(it->second.shard, [svc = &svc_, name, key](net::shard& sh) {
        svc->local(sh.index()).remove(name, key);
    });
    t.subscribers.erase(it);
    persist([name, key](topic_store& st, topic_store::done_fn done) { st.erase_subscriber(name, key, std::move(done)); },
            [k](const std::string& error) mutable { k.ok_void_if_stored(error); });
}

void catalog::forget(const std::string& topic, const std::string& key) {
    auto it = topics_.find(topic);
    if (it == topics_.end() || it->second.subscribers.erase(key) == 0) return;
    trace(svc_.cfg().trace.subscriber, "Subscriber", "topic '{}': subscriber '{}' failed for good, removed", topic, key);
    persist([topic, key](topic_store& st, topic_store::done_fn done) { st.erase_subscriber(topic, key, std::move(done)); },
            [](const std::string&) {});  // a failure is logged by the store
}

void catalog::link(call& k, const std::string& name) {
    auto in = k.params();
    auto linked = protocol::read_proxy(in);
    const auto cost = in.read_int();
    if (k.malformed(in)) return;
    const std::string linked_name = topic_name_of(linked);
    const std::string linked_key = protocol::identity_to_string(linked.id.view());
    auto has_link = [&](const topic& t) {
        return std::any_of(t.links.begin(), t.links.end(), [&](const link_info& l) { return l.key() == linked_key; });
    };
    if (has_link(topics_[name])) return k.raise("::IceStorm::LinkExists", linked_name);
    // The linked topic's TopicLink object sits beside its publisher: ask for the publisher (a
    // public operation every IceStorm serves) and name its sibling `<name>.link`.
    protocol::output_stream none;
    none.write_empty_encapsulation(protocol::encoding_1_1);
    auto& home = svc_.shards().at(0);
    net::invoke(home, linked, "getPublisher", 1, none.view(),
                   [this, k = std::move(k), name, linked, linked_name, linked_key, cost](const protocol::reply_view* r,
                                                                            std::string_view failure) mutable {
                       auto publisher = net::proxy_result(r);
                       if (publisher && publisher->is_nil()) publisher.reset();
                       auto it = topics_.find(name);
                       if (it == topics_.end()) return k.not_exist(protocol::reply_status::object_not_exist);
                       if (!publisher) {
                           return k.send(net::reply_unknown_local(
                               k.r.request_id, r ? std::string_view("cannot reach the linked topic") : failure));
                       }
                       if (publisher->id.name.ends_with(".publish"))
                           publisher->id.name.replace(publisher->id.name.size() - 8, 8, ".link");
                       trace(svc_.cfg().trace.topic, "Topic", "topic '{}': link to '{}' cost {}", name, linked_key, cost);
                       it->second.links.push_back(link_info{linked, linked_name, cost, std::move(*publisher)});
                       persist([name, l = it->second.links.back()](topic_store& st, topic_store::done_fn done) {
                                   st.put_link(name, l, std::move(done));
                               },
                               [this, k, name, linked_key](const std::string& error) mutable {
                                   auto it = topics_.find(name);
                                   if (!error.empty()) {
                                       if (it != topics_.end())
                                           std::erase_if(it->second.links,
                                                         [&](const link_info& l) { return l.key() == linked_key; });
                                       return k.database_failure(error);
                                   }
                                   broadcast_links(name);
                                   k.ok_void();
                               });
                   });
}

void catalog::unlink(call& k, const std::string& name) {
    auto in = k.params();
    auto linked = protocol::read_proxy(in);
    if (k.malformed(in)) return;
    const std::string linked_name = topic_name_of(linked);
    const std::string linked_key = protocol::identity_to_string(linked.id.view());
    auto& links = topics_[name].links;
    const auto before = links.size();
    std::erase_if(links, [&](const link_info& l) { return l.key() == linked_key; });
    if (links.size() == before) return k.raise("::IceStorm::NoSuchLink", linked_name);
    trace(svc_.cfg().trace.topic, "Topic", "topic '{}': unlink '{}'", name, linked_key);
    broadcast_links(name);
    persist([name, linked_key](topic_store& st, topic_store::done_fn done) {
                st.erase_link(name, linked_key, std::move(done));
            },
            [k](const std::string& error) mutable { k.ok_void_if_stored(error); });
}

void catalog::drop_link(const std::string& name, const std::string& linked) {
    auto it = topics_.find(name);
    if (it == topics_.end()) return;
    if (std::erase_if(it->second.links, [&](const link_info& l) { return l.key() == linked; }) == 0) return;
    spdlog::info("topic '{}': link to '{}' removed, the linked topic no longer exists", name, linked);
    broadcast_links(name);
    persist([name, linked](topic_store& st, topic_store::done_fn done) { st.erase_link(name, linked, std::move(done)); },
            [](const std::string&) {});  // a failure is logged by the store
}

void catalog::broadcast_links(const std::string& name) {
    auto it = topics_.find(name);
    if (it == topics_.end()) return;
    svc_.broadcast([name, links = it->second.links](local_topics& l) { l.set_links(name, links); }, [] {});
}

void catalog::destroy(call& k, const std::string& name) {
    trace(svc_.cfg().trace.topic, "Topic", "topic '{}': destroy", name);
    topics_.erase(name);
    persist([name](topic_store& st, topic_store::done_fn done) { st.erase_topic(name, std::move(done)); },
            [this, k, name](const std::string& error) mutable {
                // Gone from memory either way; answered once every shard forgot it too.
                svc_.broadcast([name](local_topics& l) { l.topic_destroyed(name); },
                               [k, error]() mutable { k.ok_void_if_stored(error); });
            });
}

}  // namespace moraine::icestorm_bridge
