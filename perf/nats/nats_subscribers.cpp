// The subscriber role of nats-fanout: N NATS connections on one thread (Boost.Asio), each
// subscribed to the subject, counting ticks, gaps in their sequence numbers (lost) and latency.
#include "nats_fanout.hpp"
#include "nats_reader.hpp"

#include "clock/tick.hpp"
#include "clock/tick_counts.hpp"

#include <boost/asio.hpp>

#include <csignal>
#include <cstdio>
#include <functional>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace moraine::perf {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

/// What every connection updates: one thread, so plain counters (as in clock-subscriber).
struct totals {
    std::size_t up = 0, failed = 0, dropped = 0, settled = 0;  // settled: up or failed
    std::string first_error;
    demo::tick_counts counts;
    std::uint64_t lost = 0;
};

/// One subscriber connection.
class connection : public std::enable_shared_from_this<connection> {
public:
    connection(asio::io_context& io, const subscriber_settings& s, totals& t) : sock_(io), cfg_(s), t_(t) {}

    /// Connects, sends CONNECT, SUB and a PING; counts as up at the PONG. `on_settled` runs
    /// once, when it is up or has failed.
    void start(std::function<void()> on_settled) {
        on_settled_ = std::move(on_settled);
        const tcp::endpoint ep{asio::ip::make_address(cfg_.server.host), cfg_.server.port};
        sock_.async_connect(ep, [self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return self->fail("connect: " + ec.message());
            self->send("CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"nats-fanout-sub\"}\r\nSUB " +
                       self->cfg_.subject + " 1\r\nPING\r\n");
            self->read();
        });
    }

    /// Closes the connection at the end of the run (not counted as dropped).
    void close() {
        closing_ = true;
        boost::system::error_code ec;
        sock_.close(ec);
    }

private:
    /// One read, its frames handled, then the next read; stops at the first error.
    void read() {
        sock_.async_read_some(asio::buffer(reader_.space(), reader_.space_size()),
                              [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                                  if (ec) return self->lost_connection(ec.message());
                                  self->reader_.commit(n);
                                  if (!self->reader_.drain([&](const nats_frame& f) { self->on_frame(f); }))
                                      return self->lost_connection("unparsable line from the server");
                                  self->read();
                              });
    }

    /// MSG: a tick; PING: answered (the server closes a client that does not); the first PONG: up.
    void on_frame(const nats_frame& f) {
        using k = nats_frame::kind;
        switch (f.what) {
        case k::msg: return on_tick(f.payload);
        case k::ping: return send("PONG\r\n");
        case k::pong:
            if (!up_) {
                up_ = true;
                ++t_.up;
                settle();
            }
            return;
        case k::err:
            if (t_.first_error.empty()) t_.first_error = std::string(f.payload);
            return;
        default: return;
        }
    }

    /// Latency from the tick's timestamp; a jump in its sequence number counts the ticks skipped as lost.
    void on_tick(std::string_view body) {
        const auto tick = demo::parse_tick(body);
        if (!tick) {
            ++t_.counts.bad;
            return;
        }
        t_.lost += t_.counts.received(*tick, last_seq_);
    }

    /// Queues `text`; one write in flight at a time (writes are rare: set-up and PONGs).
    void send(std::string text) {
        out_.push_back(std::move(text));
        if (out_.size() == 1) write_next();
    }

    void write_next() {
        auto done = [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
            if (ec) return;  // the read side reports it
            self->out_.pop_front();
            if (!self->out_.empty()) self->write_next();
        };
        asio::async_write(sock_, asio::buffer(out_.front()), std::move(done));
    }

    /// The connection never came up.
    void fail(const std::string& why) {
        if (t_.failed++ == 0 && t_.first_error.empty()) t_.first_error = why;
        settle();
    }

    /// Read error or close: dropped if it was up (e.g. a slow consumer cut by the server), else failed.
    void lost_connection(const std::string& why) {
        if (closing_) return;
        closing_ = true;
        if (up_) {
            ++t_.dropped;  // e.g. the server cut a slow consumer
            if (t_.first_error.empty()) t_.first_error = why;
        } else {
            fail(why);
        }
    }

    /// Tells run_subscribers (once) that this connection is up or has failed, so the next may open.
    void settle() {
        if (!on_settled_) return;
        auto f = std::move(on_settled_);
        on_settled_ = nullptr;
        f();
    }

    tcp::socket sock_;
    const subscriber_settings& cfg_;
    totals& t_;
    nats_reader reader_;
    std::deque<std::string> out_;
    std::function<void()> on_settled_;
    std::uint64_t last_seq_ = 0;
    bool up_ = false, closing_ = false;
};

/// clock-subscriber's status line (ticks/s and percentiles of the last second), then a new window.
void print_status(totals& t, double elapsed, bool final_line) {
    t.counts.print_status(elapsed, t.up, t.failed, t.dropped, t.lost, final_line);
}

/// The summary and the `result {json}` line perf/fanout_rate.py reads (clock-subscriber's keys).
void print_result(totals& t) {
    std::printf("summary: sessions %zu up, %zu failed%s%s, %zu dropped by the server; ticks received %llu, lost %llu, "
                "malformed %llu; latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                t.up, t.failed, t.first_error.empty() ? "" : " (first error: ",
                t.first_error.empty() ? "" : (t.first_error + ")").c_str(),
                t.dropped, static_cast<unsigned long long>(t.counts.ticks), static_cast<unsigned long long>(t.lost),
                static_cast<unsigned long long>(t.counts.bad), t.counts.all.percentile(50) / 1000.0,
                t.counts.all.percentile(99) / 1000.0, t.counts.all.max() / 1000.0);
    std::printf("result {\"sessions_up\": %zu, \"failed\": %zu, \"dropped\": %zu, \"ticks\": %llu, \"lost\": %llu, "
                "\"p50_ms\": %.3f, \"p99_ms\": %.3f}\n",
                t.up, t.failed, t.dropped, static_cast<unsigned long long>(t.counts.ticks),
                static_cast<unsigned long long>(t.lost), t.counts.all.percentile(50) / 1000.0,
                t.counts.all.percentile(99) / 1000.0);
    std::fflush(stdout);
}

/// Opens connection `i` and, once it has settled, the next one not yet started (so at most
/// `concurrency` are being opened at once: a listen backlog is not flooded).
void open_next(asio::io_context& io, const subscriber_settings& s, totals& t,
               std::vector<std::shared_ptr<connection>>& conns, std::size_t& next) {
    if (next >= conns.size()) return;
    auto c = std::make_shared<connection>(io, s, t);
    conns[next++] = c;
    c->start([&io, &s, &t, &conns, &next] {
        ++t.settled;
        asio::post(io, [&io, &s, &t, &conns, &next] { open_next(io, s, t, conns, next); });
    });
}

}  // namespace

int run_subscribers(const subscriber_settings& s) {
    asio::io_context io(1);
    totals t;
    std::vector<std::shared_ptr<connection>> conns(s.sessions);
    std::size_t next = 0;
    const auto t0 = clock_type::now();
    for (std::size_t w = 0; w < std::min(s.concurrency, s.sessions); ++w) open_next(io, s, t, conns, next);

    bool stop_requested = false;
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](auto, int) { stop_requested = true; });
    asio::steady_timer timer(io);
    auto tick_at = t0;
    std::optional<clock_type::time_point> all_up;
    std::function<void(boost::system::error_code)> on_second = [&](boost::system::error_code) {
        const auto now = clock_type::now();
        const double elapsed = std::chrono::duration<double>(now - t0).count();
        print_status(t, elapsed, false);
        if (!all_up && t.settled == s.sessions) {
            all_up = now;
            std::printf("\n%zu sessions up in %.2f s (%.0f sessions/s)\n", t.up, elapsed, t.up / elapsed);
        }
        if (stop_requested || (all_up && now - *all_up >= std::chrono::duration<double>(s.duration))) {
            print_status(t, std::chrono::duration<double>(clock_type::now() - t0).count(), true);
            print_result(t);
            for (auto& c : conns)
                if (c) c->close();
            signals.cancel();
            return;
        }
        tick_at += std::chrono::seconds(1);
        timer.expires_at(tick_at);
        timer.async_wait(on_second);
    };
    tick_at += std::chrono::seconds(1);
    timer.expires_at(tick_at);
    timer.async_wait(on_second);
    io.run();
    return t.failed == 0 && t.dropped == 0 && t.up == s.sessions ? 0 : 1;
}

}  // namespace moraine::perf
