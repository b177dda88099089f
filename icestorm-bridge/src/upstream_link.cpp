// Keeping topics linked from an upstream IceStorm (see upstream_link.hpp).
#include <moraine/icestorm_bridge/upstream_link.hpp>

#include <moraine/icestorm_bridge/catalog.hpp>
#include <moraine/icestorm_bridge/topic_service.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/proxy.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <spdlog/spdlog.h>

namespace moraine::icestorm_bridge {

namespace {

using mode = protocol::operation_mode;

/// One string parameter in a 1.1 encapsulation (TopicManager::retrieve / create).
protocol::byte_buffer string_params(const std::string& s) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string(s);
    os.end_encapsulation(start);
    return os.take();
}

/// Topic::link(Topic* linkTo, int cost).
protocol::byte_buffer link_params(const protocol::proxy& topic, std::int32_t cost) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    protocol::write_proxy(os, topic);
    os.write_int(cost);
    os.end_encapsulation(start);
    return os.take();
}

/// The type id of the user exception reply `r` carries, or "" for anything else.
std::string_view user_exception(const protocol::reply_view* r) {
    if (!r || r->status != protocol::reply_status::user_exception) return {};
    auto ex = protocol::decode_user_exception(r->payload);
    return ex ? ex->type_id : std::string_view();
}

/// Why a call failed, for the log: the transport failure, the exception or the reply status.
std::string failure_text(const protocol::reply_view* r, std::string_view failure) {
    if (!r) return std::string(failure);
    if (auto type = user_exception(r); !type.empty()) return std::string(type);
    return "reply status " + std::to_string(static_cast<int>(r->status));
}

}  // namespace

upstream_link::upstream_link(topic_service& svc, net::shard& home, upstream_config cfg)
    : svc_(svc), home_(home), cfg_(std::move(cfg)), timer_(home.io()) {
    for (const auto& t : cfg_.topics) states_[t];
}

void upstream_link::start() { check_all(); }

std::size_t upstream_link::linked() const noexcept {
    std::size_t n = 0;
    for (const auto& [name, s] : states_) n += s.linked ? 1 : 0;
    return n;
}

void upstream_link::check_all() {
    for (const auto& [name, s] : states_) check(name);
    schedule();
}

void upstream_link::schedule() {
    timer_.expires_after(std::chrono::milliseconds(cfg_.check_interval_ms));
    timer_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        if (auto self = w.lock(); self && !ec) self->check_all();
    });
}

void upstream_link::check(const std::string& topic) {
    auto& s = states_[topic];
    if (s.in_flight) return;  // an unreachable upstream takes up to the connect timeout to say so
    s.in_flight = true;
    // Our own topic first: the upstream forwards to it as soon as the link exists.
    svc_.cat().ensure_topic(topic, [w = weak_from_this(), topic] {
        auto self = w.lock();
        if (!self) return;
        const auto params = string_params(topic);
        net::invoke(self->home_, *self->cfg_.topic_manager, "retrieve", static_cast<std::uint8_t>(mode::nonmutating),
                    params, [w, topic](const protocol::reply_view* r, std::string_view failure) {
                        auto self = w.lock();
                        if (!self) return;
                        if (auto t = net::proxy_result(r)) return self->on_topic(topic, *t);
                        if (user_exception(r) != "::IceStorm::NoSuchTopic")
                            return self->failed(topic, "retrieve: " + failure_text(r, failure));
                        // Not there (a new or restarted transient upstream): create it. TopicExists
                        // (someone else was quicker) is retried at the next check.
                        const auto create = string_params(topic);
                        net::invoke(self->home_, *self->cfg_.topic_manager, "create", 0, create,
                                    [w, topic](const protocol::reply_view* r, std::string_view failure) {
                                        auto self = w.lock();
                                        if (!self) return;
                                        if (auto t = net::proxy_result(r)) return self->on_topic(topic, *t);
                                        self->failed(topic, "create: " + failure_text(r, failure));
                                    });
                    });
    });
}

void upstream_link::on_topic(const std::string& topic, const protocol::proxy& upstream_topic) {
    const auto params = link_params(our_topic(topic), cfg_.cost);
    net::invoke(home_, upstream_topic, "link", 0, params,
                [w = weak_from_this(), topic](const protocol::reply_view* r, std::string_view failure) {
                    auto self = w.lock();
                    if (!self) return;
                    const bool ok = r && r->status == protocol::reply_status::ok;
                    if (ok || user_exception(r) == "::IceStorm::LinkExists") return self->linked(topic);
                    self->failed(topic, "link: " + failure_text(r, failure));
                });
}

protocol::proxy upstream_link::our_topic(const std::string& topic) const {
    auto p = svc_.topic_proxy(topic);
    if (!cfg_.link_category.empty()) p.id.category = cfg_.link_category;
    if (!cfg_.endpoints.empty()) p.endpoints = cfg_.endpoints;
    return p;
}

void upstream_link::linked(const std::string& topic) {
    auto& s = states_[topic];
    s.in_flight = false;
    if (!s.linked) spdlog::info("topic '{}': linked from upstream {}", topic, protocol::proxy_to_string(*cfg_.topic_manager));
    s.linked = true;
    s.last_failure.clear();
}

void upstream_link::failed(const std::string& topic, std::string why) {
    auto& s = states_[topic];
    s.in_flight = false;
    if (s.linked || s.last_failure != why)
        spdlog::warn("topic '{}': no link from upstream {} ({}); retrying every {} ms", topic,
                     protocol::proxy_to_string(*cfg_.topic_manager), why, cfg_.check_interval_ms);
    s.linked = false;
    s.last_failure = std::move(why);
}

}  // namespace moraine::icestorm_bridge
