#include <moraine/net/metrics_server.hpp>

#include <moraine/net/listener.hpp>
#include <moraine/net/metrics.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/protocol/endpoint.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <spdlog/spdlog.h>

#include <chrono>

namespace moraine::net {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::size_t head_limit = 8 * 1024;
constexpr auto read_deadline = std::chrono::seconds(10);
constexpr metric_family bugs{"moraine_bugs_total", "counter",
                             "Exceptions that escaped a coroutine (each is logged at critical level)."};

/// Shard `sh`'s samples, taken on its own thread. A coroutine function, not a lambda, so the
/// reference it keeps is a parameter the frame owns.
asio::awaitable<metric_sink> collect_on(shard& sh) { co_return sh.collect(); }

asio::awaitable<std::string> exposition(shard_set& shards) {
    std::vector<metric_sink> sinks;
    sinks.reserve(shards.size() + 1);
    // One shard at a time: each answers between two of its own handlers, never locked.
    for (unsigned i = 0; i < shards.size(); ++i)
        sinks.push_back(co_await asio::co_spawn(shards.at(i).executor(), collect_on(shards.at(i)), asio::use_awaitable));
    sinks.push_back(process_metrics());
    sinks.back().add(bugs, static_cast<double>(bugs_total()));
    co_return render_metrics(sinks);
}

http::response<http::string_body> answer(const http::request<http::empty_body>& req, std::string body, http::status st) {
    http::response<http::string_body> res{st, req.version()};
    res.set(http::field::server, "Moraine");
    res.set(http::field::content_type,
            st == http::status::ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8");
    res.keep_alive(req.keep_alive());
    res.body() = req.method() == http::verb::head ? std::string() : std::move(body);
    res.prepare_payload();
    return res;
}

asio::awaitable<void> serve(shard_set& shards, tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::empty_body> parser;
        parser.header_limit(head_limit);
        stream.expires_after(read_deadline);
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, nothrow_awaitable);
        if (ec) break;  // closed, timed out or not HTTP: nothing to answer
        const auto& req = parser.get();
        const auto target = std::string_view(req.target()).substr(0, std::string_view(req.target()).find('?'));
        http::response<http::string_body> res;
        if (req.method() != http::verb::get && req.method() != http::verb::head)
            res = answer(req, "only GET\n", http::status::method_not_allowed);
        else if (target != "/metrics")
            res = answer(req, "not found: the metrics are at /metrics\n", http::status::not_found);
        else
            res = answer(req, co_await exposition(shards), http::status::ok);
        stream.expires_never();
        auto [wec, wn] = co_await http::async_write(stream, res, nothrow_awaitable);
        if (wec || !res.keep_alive()) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace

struct metrics_server::state {
    explicit state(asio::io_context& io) : acceptor(io) {}
    tcp::acceptor acceptor;
};


namespace {
/// Accepts until the acceptor closes (shard 0's stop hook); `s` keeps it alive meanwhile.
asio::awaitable<void> accept_loop(shard_set& shards, std::shared_ptr<metrics_server::state> s) {
    for (;;) {
        auto [ec, socket] = co_await s->acceptor.async_accept(nothrow_awaitable);
        if (ec == asio::error::operation_aborted || !s->acceptor.is_open()) co_return;
        if (ec) continue;  // e.g. out of descriptors: the next accept may work
        asio::co_spawn(s->acceptor.get_executor(), serve(shards, std::move(socket)), report_bug);
    }
}
}  // namespace

listener_id metrics_listener_id(const metrics_config& cfg) {
    // As an endpoint string, so a takeover's records read alike for every listener (an IPv6
    // host quoted as in a proxy).
    auto ep = *protocol::endpoint_from_string("tcp -p " + std::to_string(cfg.port));
    ep.host = asio::ip::make_address(cfg.host).to_string();
    return {"Moraine.Metrics", protocol::endpoint_to_string(ep), 0};
}

metrics_server::metrics_server(shard_set& shards, const metrics_config& cfg) {
    auto& home = shards.at(0);
    state_ = std::make_shared<state>(home.io());
    auto& acceptor = state_->acceptor;
    const auto address = asio::ip::make_address(cfg.host);
    const auto id = metrics_listener_id(cfg);
    if (auto inherited = shards.take_inherited(id); !inherited.empty()) {
        acceptor = adopt_listener(home, std::move(inherited.front().fd));
        spdlog::info("{}: took over the listening socket from the running router", describe(id));
    } else {
        const tcp::endpoint ep(address, cfg.port);
        acceptor.open(ep.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(ep);
        acceptor.listen();
    }
    port_ = acceptor.local_endpoint().port();
    auto bound = cfg;
    bound.port = port_;
    shards.add_listener({id, metrics_listener_id(bound).endpoint, 0, socket_kind::stream},
                        std::shared_ptr<tcp::acceptor>(state_, &state_->acceptor));
    home.on_stop([s = state_] {
        boost::system::error_code ignored;
        s->acceptor.close(ignored);
    });
    asio::co_spawn(home.executor(), accept_loop(shards, state_), report_bug);
    spdlog::info("metrics at http://{}:{}/metrics", cfg.host.find(':') == std::string::npos ? cfg.host : "[" + cfg.host + "]",
                 port_);
}

metrics_server::~metrics_server() = default;

}  // namespace moraine::net
