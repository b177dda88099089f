// metrics_server: GET /metrics over HTTP on shard 0, gathering every shard's counters. Checked
// over a loopback socket: 200 with the exposition content type and samples of both shards and
// the process, 404 for another path, 405 for another method.
#include "loop_harness.hpp"

#include <moraine/net/metrics_server.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

using namespace moraine;

namespace {

/// Sends `request` to 127.0.0.1:`port` and runs the shards until the server closes the connection.
std::string http_exchange(net::shard_set& shards, unsigned short port, const std::string& request) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return "connect failed";
    test::socket_end client(fd);
    client.send(protocol::byte_view(reinterpret_cast<const std::byte*>(request.data()), request.size()));
    test::run_until(shards, [&] { return client.eof(); });
    const auto& bytes = client.partial();
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

TEST(metrics_server, serves_every_shards_counters_at_metrics) {
    auto shards = test::owned_shards(2);
    shards->at(1).metrics().connections_accepted = 5;
    net::metrics_config cfg;
    cfg.enabled = true;
    net::metrics_server server(*shards, cfg);
    ASSERT_NE(server.port(), 0);
    const auto res = http_exchange(*shards, server.port(), "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(res.rfind("HTTP/1.1 200", 0), 0u) << res.substr(0, 200);
    EXPECT_NE(res.find("text/plain; version=0.0.4"), std::string::npos);
    EXPECT_NE(res.find("moraine_connections_accepted_total{shard=\"0\"} 0\n"), std::string::npos);
    EXPECT_NE(res.find("moraine_connections_accepted_total{shard=\"1\"} 5\n"), std::string::npos);
    EXPECT_NE(res.find("process_resident_memory_bytes"), std::string::npos);
    EXPECT_NE(res.find("moraine_bugs_total"), std::string::npos);
    test::finish(*shards);
}

TEST(metrics_server, other_paths_and_methods_are_refused) {
    auto shards = test::owned_shards();
    net::metrics_server server(*shards, net::metrics_config{true, "127.0.0.1", 0});
    const auto missing = http_exchange(*shards, server.port(), "GET /other HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(missing.rfind("HTTP/1.1 404", 0), 0u) << missing.substr(0, 100);
    const auto post = http_exchange(*shards, server.port(), "POST /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post.substr(0, 100);
    test::finish(*shards);
}
