#pragma once
// nats-fanout: the NATS side of perf/fanout_rate.py --nats. Two roles, one per process, as
// clock-subscriber and clock-publisher are for the routers: `sub` holds N connections each
// subscribed to one subject and measures latency and loss of the ticks, `pub` publishes ticks.
// The payload is the clock demo's tick text (demo/clock/tick.hpp: "HH:MM:SS #<seq> @<ns>"),
// so latency is measured the same way as clock-subscriber does (CLOCK_MONOTONIC, send to receipt).
#include <cstddef>
#include <string>

namespace moraine::perf {

/// Where nats-server listens.
struct nats_address {
    std::string host = "127.0.0.1";
    unsigned short port = 4222;
};

/// `sub`: N connections, each `SUB <subject> 1`.
struct subscriber_settings {
    nats_address server;
    std::string subject = "time";
    std::size_t sessions = 1;
    std::size_t concurrency = 256;  ///< connections being opened at once
    double duration = 60;           ///< seconds to run once all are up
};

/// `pub`: one connection, `PUB <subject>` `rate` times a second for `duration` seconds.
struct publisher_settings {
    nats_address server;
    std::string subject = "time";
    double rate = 1;
    double duration = 10;
};

/// Runs the subscribers; prints a status line a second (clock-subscriber's format), "N sessions
/// up in X s" once all are up, a summary and `result {json}` at the end. Returns 0 if every
/// connection came up and none was dropped, else 1.
int run_subscribers(const subscriber_settings& s);

/// Runs the publisher; prints "nats-fanout: N ticks published" at the end. Returns 0, or 1 if the
/// server cannot be reached or closes the connection. @throws nothing.
int run_publisher(const publisher_settings& s);

}  // namespace moraine::perf
