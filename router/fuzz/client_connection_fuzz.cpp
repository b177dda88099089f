// libFuzzer target: a Glacier2 client connection fed the input as a byte stream, chunk by chunk,
// through its own read loop (ice_connection::read_loop -> on_bytes -> parse, dispatch), over a
// socketpair whose other end is drained and checked (net/fuzz/connection_harness.hpp
// describes the input layout and the harness). Byte 0 selects the mode:
//   bit 0  a session exists first (createSession fed before the input; allow-all auth)
//   bit 1  ... and its routing table holds two proxies (addProxies fed before the input)
//   bit 2  the peer never reads its replies (back-pressure, slow consumer)
//   bits 3-4  the router's configuration: 0 unbuffered; 1 buffered, always batch, forwarded
//            context, tight queue and message limits; 2 unbuffered with filters, a small routing
//            table, no server endpoint; 3 buffered with a 60 s hold, tight limits
// Each input gets a fresh session_router and connection on a static shard set run by this
// thread; back ends never resolve (no network). After the input the connection is closed and
// the shard run dry; the connection must then be freed and its session unregistered.
// Build and run: scripts/fuzz [SECONDS]. By hand: build-fuzz/bin/client_connection_fuzz -max_len=65536 NEW_DIR
// router/fuzz/corpus (libFuzzer adds new inputs to the first directory); net/fuzz/make_corpus.py
// writes the seeds.
#include "connection_harness.hpp"

#include <moraine/protocol/proxy.hpp>
#include <moraine/router/client_connection.hpp>
#include <moraine/router/session_router.hpp>

#include <array>
#include <cstdint>
#include <memory>

using namespace moraine;
namespace fz = moraine::net::fuzz;

namespace {

enum : std::uint8_t {
    mode_session = 1,
    mode_routes = 2,
    mode_stalled = 4,
};

/// A router configuration and the shards it runs on (one shard: a client connection's work
/// never leaves its shard).
struct variant {
    std::unique_ptr<net::shard_set> shards;
    std::shared_ptr<const router::config> cfg;
};

std::shared_ptr<const net::runtime_config> runtime(bool tight) {
    net::runtime_config rt;
    rt.threads = 1;
    if (tight) {
        rt.message_size_max = 16 * 1024;
        rt.connection_queue_high = 2048;
        rt.connection_queue_low = 512;
        rt.connection_queue_max = 32 * 1024;
    }
    return std::make_shared<const net::runtime_config>(rt);
}

router::config base_config() {
    router::config c;
    c.auth = router::auth_mode::allow_all;
    c.client_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 4063");
    c.server_endpoints = *protocol::endpoints_from_string("tcp -h 127.0.0.1 -p 4064");
    c.client_buffered = c.server_buffered = false;
    c.session_timeout_s = 30;
    c.acm_timeout_s = 30;
    return c;
}

std::array<variant, 4>& variants() {
    static std::array<variant, 4>* all = [] {
        auto* v = new std::array<variant, 4>;  // never freed: outlives every input and exit
        router::config c0 = base_config();

        router::config c1 = base_config();
        c1.client_buffered = c1.server_buffered = true;
        c1.client_always_batch = true;
        c1.client_forward_context = true;

        router::config c2 = base_config();
        c2.server_endpoints.clear();
        c2.routing_table_max = 3;
        c2.return_client_proxy = true;
        c2.filters.category_accept = {"fuzz", "cat"};
        c2.filters.category_accept_user = 2;
        c2.filters.identity_accept = {protocol::identity{"hello", ""}};
        c2.filters.adapter_id_accept = {"adapter"};
        c2.filters.address_accept = "127.0.0.1:[10000-10010] *.fuzz";
        c2.filters.address_reject = "10.*";
        c2.filters.proxy_size_max = 120;

        router::config c3 = base_config();
        c3.client_buffered = c3.server_buffered = true;
        c3.client_sleep_time_ms = c3.server_sleep_time_ms = 60'000;  // the hold outlasts any input

        const router::config cfgs[4] = {c0, c1, c2, c3};
        for (int i = 0; i < 4; ++i) {
            (*v)[i].shards = std::make_unique<net::shard_set>(runtime(i == 1 || i == 3));
            (*v)[i].cfg = std::make_shared<const router::config>(cfgs[i]);
            fz::own_shards(*(*v)[i].shards);
        }
        return v;
    }();
    return *all;
}

protocol::byte_buffer encaps(auto&& write) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    write(os);
    os.end_encapsulation(start);
    return os.take();
}

protocol::byte_buffer create_session() {
    const auto params = encaps([](protocol::output_stream& os) {
        os.write_string("fuzz");
        os.write_string("fuzz");
    });
    return fz::request_message(1, {"router", "Glacier2"}, "createSession", params);
}

/// Two proxies the filters of every variant accept: one by identity, one by category.
protocol::byte_buffer add_proxies() {
    const auto params = encaps([](protocol::output_stream& os) {
        os.write_size(2);
        protocol::write_proxy(os, *protocol::proxy_from_string("hello:tcp -h 127.0.0.1 -p 10000"));
        protocol::write_proxy(os, *protocol::proxy_from_string("fuzz/obj:tcp -h 127.0.0.1 -p 10001"));
    });
    return fz::request_message(2, {"router", "Glacier2"}, "addProxies", params);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    fz::quiet_logs();
    variants();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fz::stream_input input(data, size);
    auto& v = variants()[(input.mode >> 3) & 3];
    auto& shards = *v.shards;
    const auto bugs_before = net::bugs_total();
    {
        router::session_router glacier2(shards, v.cfg);  // fresh: no session or metric survives an input
        fz::peer peer(shards.at(0), input.mode & mode_stalled);
        auto conn = std::make_shared<router::client_connection>(glacier2.local(0), peer.take_transport());
        conn->start();
        fz::settle(shards, &peer);
        if (input.mode & mode_session) {
            peer.send(create_session());
            fz::settle(shards, &peer);
            fz::check(conn->current_session() != nullptr, "createSession with allow-all auth made no session");
            if (input.mode & mode_routes) {
                peer.send(add_proxies());
                fz::settle(shards, &peer);
                fz::check(conn->current_session() && conn->current_session()->routes.size() == 2,
                          "addProxies did not fill the routing table");
            }
        }
        for (const auto& chunk : input.chunks) {
            if (conn->closed() || !peer.send(chunk)) break;
            fz::settle(shards, &peer);
        }
        conn->close(net::close_reason::shutdown, "end of the fuzz input");
        fz::finish(shards, &peer);
        fz::check(glacier2.local(0).session_count() == 0, "a closed client connection left its session registered");
        std::weak_ptr<router::client_connection> weak = conn;
        conn.reset();
        fz::check(weak.expired(), "a closed client connection outlived its input (a reference cycle or a lost handler)");
    }
    fz::check(net::bugs_total() == bugs_before, "an exception escaped a coroutine (report_bug)");
    return 0;
}
