// Cost of one TLS write of an event through transport::tls_engine (SSL_MODE_RELEASE_BUFFERS: the
// record buffer is allocated and freed per write), on a heap with small freed chunks, as the
// router's is between two writes. Run: build/bin/bench_tls_write --benchmark_min_time=1
// Arguments: bytes per write, then small (48-byte) blocks allocated and freed before each write.
#include <moraine/transport/tls_engine.hpp>

#include "tls_test_contexts.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

using moraine::protocol::byte_buffer;
using moraine::protocol::byte_view;
using moraine::transport::tls_engine;
using moraine::transport::test::client_context;
using moraine::transport::test::server_context;

namespace {

/// `n` server engines, each after a complete handshake with a client engine of its own.
std::vector<tls_engine> established_servers(SSL_CTX* server_ctx, SSL_CTX* client_ctx, int n) {
    std::vector<tls_engine> servers;
    for (int i = 0; i < n; ++i) {
        tls_engine server(server_ctx, true), client(client_ctx, false);
        byte_buffer to_server, to_client;
        for (int round = 0; round < 10 && !(server.established() && client.established()); ++round) {
            byte_buffer in = std::exchange(to_client, {});
            client.handshake(in, to_server);
            in = std::exchange(to_server, {});
            server.handshake(in, to_client);
        }
        if (!server.established()) throw std::runtime_error("handshake failed: " + server.error());
        servers.push_back(std::move(server));
    }
    return servers;
}

void BM_tls_event_write(benchmark::State& state) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const auto churn = static_cast<std::size_t>(state.range(1));
    auto server_ctx = server_context("bench");
    auto client_ctx = client_context();
    // Several connections, written in turn, as a fan-out does.
    auto servers = established_servers(server_ctx.get(), client_ctx.get(), 64);
    const std::vector<std::byte> event(bytes, std::byte{0x2a});
    std::vector<void*> blocks(churn);
    byte_buffer out;
    out.reserve(1 << 20);
    std::size_t next = 0;
    for (auto _ : state) {
        for (auto& b : blocks) b = std::malloc(48);
        for (auto* b : blocks) std::free(b);
        out.clear();
        if (!servers[next].write(byte_view(event.data(), event.size()), out)) state.SkipWithError("write failed");
        next = (next + 1) % servers.size();
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

}  // namespace

// 86 bytes: one clock tick's event; 1 KiB: a small RPC; 16 KiB: a full record.
BENCHMARK(BM_tls_event_write)->ArgsProduct({{86, 1024, 16384}, {0, 64}});

BENCHMARK_MAIN();
