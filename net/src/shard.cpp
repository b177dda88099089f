#include <moraine/net/shard.hpp>

#include <moraine/net/backend_pool.hpp>
#include <moraine/net/datagram_pool.hpp>
#include <moraine/net/ice_connection.hpp>
#include <moraine/net/locator_resolver.hpp>
#include <moraine/net/shard_set.hpp>

namespace moraine::net {

namespace {
constexpr std::size_t scratch_bytes = 64 * 1024;

constexpr metric_family accepted{"moraine_connections_accepted_total", "counter",
                                 "Connections accepted on the client, server and topic endpoints."};
constexpr metric_family open_connections{"moraine_connections", "gauge",
                                         "Open connections of every kind, back-end connections included."};
constexpr metric_family closed{"moraine_connections_closed_total", "counter", "Connections closed, by reason."};
constexpr metric_family protocol_errors{"moraine_protocol_errors_total", "counter",
                                        "Connections closed for bytes that break the Ice protocol."};
constexpr metric_family slow_consumers{"moraine_slow_consumers_closed_total", "counter",
                                       "Connections closed because their outbound queue passed its limit."};
constexpr metric_family heartbeats{"moraine_heartbeats_sent_total", "counter",
                                   "Heartbeats (validate connection messages) sent on idle connections."};
constexpr metric_family queue_bytes{"moraine_queue_bytes", "gauge",
                                    "Bytes waiting in the outbound queues of the open connections."};
constexpr metric_family reads_held{
    "moraine_reads_held_total", "counter",
    "Times a publisher's or back end's connection stopped reading because the memory budget was spent."};
constexpr metric_family datagrams_dropped{
    "moraine_datagrams_dropped_total", "counter",
    "Datagrams received on a udp endpoint that were not one whole oneway Ice message (dropped)."};
constexpr metric_family datagrams_lost{"moraine_datagrams_lost_total", "counter",
                                       "Datagrams to a udp subscriber or back end that the kernel did not take (lost)."};
constexpr metric_family budget_held{"moraine_memory_budget_held_bytes", "gauge",
                                    "Bytes held against the memory budget (all shards; reported by shard 0)."};
constexpr metric_family forward_latency{
    "moraine_forward_latency_seconds", "histogram",
    "Time from forwarding a twoway request to a back end until its reply is relayed, in seconds."};
}  // namespace

shard::shard(shard_set& set, unsigned index, std::shared_ptr<const runtime_config> cfg)
    : set_(set), index_(index), cfg_(std::move(cfg)), backends_(std::make_unique<backend_pool>(*this)),
      datagrams_(std::make_unique<datagram_pool>(*this)), scratch_(scratch_bytes) {
    if (cfg_->locator)
        resolver_ = std::make_unique<locator_resolver>(invoke_locator(*this, *cfg_->locator), set.locator_answers());
}

shard::~shard() = default;

void shard::run() { io_.run(); }

metric_sink shard::collect() {
    metric_sink s(index_);
    s.add(accepted, static_cast<double>(metrics_.connections_accepted));
    s.add(open_connections, static_cast<double>(metrics_.connections_open));
    for (std::size_t r = 0; r < close_reason_count; ++r)
        s.add(closed, static_cast<double>(metrics_.closed[r]),
              "reason=\"" + std::string(to_string(static_cast<close_reason>(r))) + "\"");
    s.add(protocol_errors, static_cast<double>(metrics_.protocol_errors));
    s.add(slow_consumers, static_cast<double>(metrics_.slow_consumers_closed));
    s.add(heartbeats, static_cast<double>(metrics_.heartbeats_sent));
    s.add(queue_bytes, static_cast<double>(metrics_.queue_bytes));
    s.add(reads_held, static_cast<double>(metrics_.reads_held));
    s.add(datagrams_dropped, static_cast<double>(metrics_.datagrams_dropped));
    s.add(datagrams_lost, static_cast<double>(datagrams_->lost()));
    if (budget_ && index_ == 0) s.add(budget_held, static_cast<double>(budget_->held()));
    s.add(forward_latency, metrics_.forward_latency);
    for (auto& fn : collectors_) fn(s);
    return s;
}

void shard::begin_drain() {
    boost::system::error_code ignored;
    for (auto& a : acceptors_) a->close(ignored);
    for (auto& d : datagram_sockets_) d->close(ignored);
    for (auto& d : drains_)
        if (d.begin) d.begin();
}

std::size_t shard::in_flight() const {
    std::size_t n = backends_->in_flight();
    for (const auto& d : drains_)
        if (d.in_flight) n += d.in_flight();
    return n;
}

void shard::finish_drain() {
    for (auto& d : drains_)
        if (d.finish) d.finish();
    const std::vector<ice_connection*> open(accepted_.begin(), accepted_.end());  // closing erases
    for (auto* c : open) c->close_gracefully();
}

void shard::stop() {
    asio::post(io_, [this] {
        boost::system::error_code ignored;
        for (auto& a : acceptors_) a->close(ignored);
        for (auto& d : datagram_sockets_) d->close(ignored);
        for (auto& hook : stop_hooks_) hook();
        backends_->close_all();
        datagrams_->close_all();
        work_.reset();
        io_.stop();
    });
}

}  // namespace moraine::net
