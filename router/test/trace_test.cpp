// The trace categories' lines (trace.hpp): each starts with its category in brackets and names
// what an operator looks for (docs/properties.md).
#include <moraine/router/trace.hpp>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

namespace moraine::router {
namespace {

/// Sends spdlog's default logger to a string for the test's lifetime.
class captured_log {
public:
    captured_log() : old_(spdlog::default_logger()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
        sink->set_pattern("%l %v");
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
        spdlog::set_level(spdlog::level::info);
    }
    ~captured_log() { spdlog::set_default_logger(old_); }
    std::string text() const { return out_.str(); }

private:
    std::ostringstream out_;
    std::shared_ptr<spdlog::logger> old_;
};

protocol::request_view request(std::int32_t id) {
    protocol::request_view r;
    r.request_id = id;
    r.id = {"hello", "demo"};
    r.facet = "f";
    r.operation = "sayHello";
    r.mode = 2;
    return r;
}

TEST(trace, request_lines_name_category_target_and_how) {
    captured_log log;
    trace_request(trace_direction::client, request(7), forward_options{}, "alice");
    forward_options batch;
    batch.kind = forward_kind::batch_oneway;
    batch.compress = true;
    trace_request(trace_direction::server, request(0), batch, {});
    const std::string t = log.text();
    EXPECT_NE(t.find("info [Glacier2.Client.Trace.Request] session 'alice': routing identity 'demo/hello' facet 'f' "
                     "operation 'sayHello' mode 2 (idempotent) request id 7 as twoway\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("info [Glacier2.Server.Trace.Request] routing identity 'demo/hello' facet 'f' operation "
                     "'sayHello' mode 2 (idempotent) request id 0 as batch oneway, compressed\n"),
              std::string::npos)
        << t;
}

TEST(trace, reject_override_routing_table_and_session_lines) {
    captured_log log;
    trace_reject(request(3), "bob", "refused by the filter");
    trace_override(trace_direction::server, request(0));
    protocol::proxy p;
    p.id = {"hello", ""};
    trace_routing_table(true, p, "bob");
    trace_routing_table(false, p, "bob");
    trace_reject_proxy(p, "bob", "address");
    trace_session(true, "bob", "127.0.0.1", "cat", {});
    trace_session(false, "bob", "127.0.0.1", "cat", "connection lost");
    const std::string t = log.text();
    for (const char* line :
         {"[Glacier2.Client.Trace.Reject] session 'bob': rejecting request to identity 'demo/hello' facet 'f' "
          "operation 'sayHello' request id 3: refused by the filter",
          "[Glacier2.Server.Trace.Override] overriding queued request: identity 'demo/hello'",
          "[Glacier2.Trace.RoutingTable] session 'bob': adding proxy 'hello",
          "[Glacier2.Trace.RoutingTable] session 'bob': evicting (table full) proxy 'hello",
          "[Glacier2.Client.Trace.Reject] session 'bob': rejecting proxy 'hello",
          "[Glacier2.Trace.Session] created session: user 'bob' address 127.0.0.1 category 'cat'\n",
          "[Glacier2.Trace.Session] destroyed session: user 'bob' address 127.0.0.1 category 'cat': connection lost\n"})
        EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
}

}  // namespace
}  // namespace moraine::router
