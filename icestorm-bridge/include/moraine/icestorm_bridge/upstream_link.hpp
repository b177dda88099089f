#pragma once
// Keeping this service's topics linked from an upstream IceStorm (topics.upstream, docs/deployment.md).
#include <moraine/icestorm_bridge/config.hpp>
#include <moraine/protocol/reply.hpp>

#include <boost/asio/steady_timer.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace moraine::net {
class shard;
}

namespace moraine::icestorm_bridge {

class topic_service;

/** Makes and keeps the links upstream → here for the topics of `topics.upstream`, from shard 0.
    Every `check_interval_ms`, for each topic: create it here if missing, `retrieve` it upstream
    (`create` on NoSuchTopic), then `Topic::link(<link_category>/topic.<name>, cost)` on the
    upstream topic (IceStorm.ice). LinkExists means the link is in place, so the same check also
    restores a link that a restarted (transient) upstream forgot. The upstream then calls
    `getLinkProxy` on our Topic and forwards each event once to `<instance>/<name>.link`. */
class upstream_link : public std::enable_shared_from_this<upstream_link> {
public:
    upstream_link(topic_service& svc, net::shard& home, upstream_config cfg);

    /// Checks now, then every interval. Call once; runs on `home`'s thread.
    void start();
    /// Topics whose link upstream was confirmed by the last check.
    std::size_t linked() const noexcept;

private:
    struct state {
        bool linked = false;
        bool in_flight = false;    // a check still waiting for the upstream: the next one is skipped
        std::string last_failure;  // logged once per change, not on every check
    };

    void check_all();
    void check(const std::string& topic);
    void on_topic(const std::string& topic, const protocol::proxy& upstream_topic);
    void linked(const std::string& topic);
    void failed(const std::string& topic, std::string why);
    protocol::proxy our_topic(const std::string& topic) const;
    void schedule();

    topic_service& svc_;
    net::shard& home_;
    upstream_config cfg_;
    boost::asio::steady_timer timer_;
    std::map<std::string, state> states_;
};

}  // namespace moraine::icestorm_bridge
