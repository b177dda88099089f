// Takeover (docs/takeover.md "The topic service moves"): the topic service leaves the old
// process as its catalog and its connections, once nothing is in flight; the new process
// installs the catalog and serves the connections. Every function here blocks on the shards,
// so it runs on the takeover's own thread, never on a shard.
#include <moraine/icestorm_bridge/catalog_image.hpp>
#include <moraine/icestorm_bridge/topic_connection.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/icestorm_bridge/topic_store.hpp>
#include <moraine/net/adopted_connection.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>

#include <spdlog/spdlog.h>

#include <thread>

namespace moraine::icestorm_bridge {

void topic_service::hold_intake(bool held) {
    intake_held_.store(held, std::memory_order_relaxed);
    if (held) return;  // each connection sees it before its next read
    for (unsigned i = 0; i < shards_.size(); ++i)
        shards_.invoke_on(i, [this](net::shard& sh) {
            for (auto* c : local(sh.index()).connections()) c->resume_reads();
        });
}

std::size_t topic_service::deliveries_in_flight() {
    return shards_.sum_on_all([this](net::shard& sh) { return local(sh.index()).deliveries_in_flight(); });
}

std::vector<std::vector<std::byte>> topic_service::hold_for_takeover(std::chrono::milliseconds settle,
                                                                    std::size_t part_max, std::size_t& unsettled,
                                                                    const std::optional<protocol::endpoint>& stay) {
    using clock = std::chrono::steady_clock;
    hold_intake(true);
    const auto until = clock::now() + settle;
    // Two quiet rounds in a row: a publish read just before the hold reaches the other shards
    // as a message of the reading shard's turn, which the first round waits behind.
    int quiet = 0;
    for (;;) {
        unsettled = deliveries_in_flight();
        quiet = unsettled == 0 ? quiet + 1 : 0;
        if (quiet == 2 || clock::now() >= until) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(quiet ? 1 : 5));
    }
    return encode_catalog_image(snapshot(stay), part_max);
}

stored_catalog topic_service::snapshot(const std::optional<protocol::endpoint>& stay) {
    std::vector<stored_catalog> per_shard(shards_.size());
    shards_.sum_on_all([this, &per_shard, &stay](net::shard& sh) {
        auto& mine = per_shard[sh.index()];
        if (sh.index() == 0) catalog_->export_to(mine);
        local(sh.index()).export_subscribers(mine.subscribers);
        // A session servant is delivered to on its session's shard, this one: its session is
        // looked up here.
        if (stay && sessions_)
            for (auto& s : mine.subscribers)
                if (s.session_local && sessions_->session_here(sh, s.proxy.id.category)) {
                    s.session_local = false;
                    s.proxy.endpoints = {*stay};
                }
        return std::size_t{0};
    });
    stored_catalog all = std::move(per_shard[0]);
    for (std::size_t i = 1; i < per_shard.size(); ++i)
        for (auto& s : per_shard[i].subscribers) all.subscribers.push_back(std::move(s));
    return all;
}

std::size_t topic_service::install(stored_catalog moved) {
    // Made here (configuration only), placed by the catalog on shard 0, added by their shards.
    std::vector<catalog::placement> placed;
    std::vector<std::vector<std::pair<std::size_t, std::pair<std::string, subscriber>>>> per_shard(shards_.size());
    for (auto& st : moved.subscribers) {
        auto made = catalog_->make_subscriber(st.proxy, st.qos);
        if (auto* reason = std::get_if<std::string>(&made)) {
            spdlog::warn("takeover: a subscriber of '{}' is skipped: {}", st.topic, *reason);
            continue;
        }
        auto& s = std::get<subscriber>(made);
        if (st.session_local) {
            s.session_local = true;  // its session moves here too (or is lost with the old process)
            s.proxy.reset();
        }
        const unsigned shard = delivery_shard(s);
        placed.push_back({st.topic, s.key, s.id, shard});
        per_shard[shard].push_back({placed.size() - 1, {st.topic, std::move(s)}});
    }
    std::vector<char> added;
    std::map<std::string, std::vector<link_info>> links;
    shards_.call_on(0, [&](net::shard&) { links = catalog_->adopt(moved.topics, moved.links, placed, added); });
    return shards_.sum_on_all([&](net::shard& sh) {
        auto& l = local(sh.index());
        for (const auto& name : moved.topics) l.topic_created(name);
        for (const auto& [name, list] : links) l.set_links(name, list);
        std::size_t n = 0;
        for (auto& [index, entry] : per_shard[sh.index()]) {
            if (!added[index]) continue;
            l.add(entry.first, std::move(entry.second));
            ++n;
        }
        return n;
    });
}

std::vector<std::pair<net::takeover_topic_connection, net::unique_fd>> topic_service::take_connections(bool last,
                                                                                                        std::size_t& left) {
    using taken = std::vector<std::pair<net::takeover_topic_connection, net::unique_fd>>;
    std::vector<taken> per_shard(shards_.size());
    left = shards_.sum_on_all([this, &per_shard, last](net::shard& sh) {
        // A copy: handing a connection over detaches it from the set.
        const std::vector<topic_connection*> open(local(sh.index()).connections().begin(),
                                                  local(sh.index()).connections().end());
        std::size_t stays = 0;
        for (auto* c : open) {
            auto keep = c->shared_from_this();
            if (auto m = c->hand_over()) per_shard[sh.index()].push_back(std::move(*m));
            else if (last) c->close_gracefully();
            else ++stays;
        }
        return stays;
    });
    taken all;
    for (auto& t : per_shard)
        for (auto& m : t) all.push_back(std::move(m));
    return all;
}

std::string topic_service::adopt_connection(const net::takeover_topic_connection& m, net::unique_fd fd) {
    const unsigned target = next_adopting_.fetch_add(1, std::memory_order_relaxed) % shards_.size();
    try {
        shards_.call_on(target, [&](net::shard& sh) {
            const auto kind = m.transport == net::session_transport::ws ? net::transport_kind::ws : net::transport_kind::tcp;
            net::transport t(net::adopt_connected_socket(sh.io(), std::move(fd)), kind, nullptr, true);
            auto c = std::make_shared<topic_connection>(sh, std::move(t), *this, m.publish_side);
            c->adopt(protocol::byte_view(m.pending.data(), m.pending.size()), std::chrono::milliseconds(m.idle_ms));
        });
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

bool topic_service::release_store() {
    std::unique_ptr<topic_store> closing;
    // The catalog writes through store_ on shard 0 only, so taking it there ends its use.
    shards_.call_on(0, [this, &closing](net::shard&) { closing = std::move(store_); });
    const bool had = closing != nullptr;
    closing.reset();  // here, not on shard 0: the queued writes finish, then the file's lock goes
    return had;
}

bool topic_service::open_pending_store(bool restore) {
    std::unique_ptr<topic_store> opened;
    try {
        opened = std::make_unique<topic_store>(cfg_.store_dir, shards_.at(0).io().get_executor());
    } catch (const store_held&) {
        return false;
    }
    if (restore) {
        auto stored = opened->load();
        const auto topic_count = stored.topics.size(), links = stored.links.size(), offered = stored.subscribers.size();
        const auto added = install(std::move(stored));  // install stores nothing: it is all there
        spdlog::info("topic database {}: {} topic(s), {} of {} subscriber(s), {} link(s) restored", opened->path(),
                     topic_count, added, offered, links);
    } else {
        spdlog::info("topic database {}: open here; its contents came with the takeover", opened->path());
    }
    shards_.call_on(0, [this, &opened](net::shard&) { store_ = std::move(opened); });
    store_pending_ = false;
    return true;
}

}  // namespace moraine::icestorm_bridge
