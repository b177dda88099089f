#pragma once
// What the connection fuzz targets share (router/fuzz, icestorm-bridge/fuzz): an accepted
// connection fed a fuzz input as a byte stream through its own read loop, one chunk per read,
// over a socketpair whose other end the harness drains and checks; shards run by the fuzzing
// thread itself, step by step, so every input is deterministic and leaves nothing behind.
//
// Input layout: byte 0 selects the target's mode; byte 1 & 15 = k chunk-size bytes follow (each
// b: b bytes if b < 128, (b - 127) * 64 if b >= 128, 0 = all the rest); the rest is the stream,
// cut into chunks by those sizes in turn (at most max_chunks; the last one takes what remains).
//
// Include this header in ONE translation unit per executable: it defines getaddrinfo (below).
#include <moraine/net/ice_connection.hpp>
#include <moraine/net/shard.hpp>
#include <moraine/net/shard_set.hpp>
#include <moraine/net/backend_pool.hpp>
#include <moraine/protocol/compression.hpp>
#include <moraine/protocol/frame_assembler.hpp>
#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>

#include <spdlog/spdlog.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

// Back-end connections (forwarded requests, external subscribers, links, verifiers) resolve
// their host with getaddrinfo. The fuzz targets replace it: every name fails at once
// (EAI_NONAME), so no input reaches DNS or the network, and each back end the input creates
// fails the same way every time (::Ice::DNSException), which the router relays to the peer.
extern "C" int getaddrinfo(const char*, const char*, const struct addrinfo*, struct addrinfo** res) {
    if (res) *res = nullptr;
    return EAI_NONAME;
}

namespace moraine::net::fuzz {

/// Aborts with `what`: a property of the code under test does not hold (libFuzzer saves the input).
[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

inline void check(bool ok, const char* what) {
    if (!ok) fail(what);
}

/// The fuzz input split as described at the top of this file.
struct stream_input {
    static constexpr std::size_t max_chunks = 256;

    std::uint8_t mode = 0;
    std::vector<protocol::byte_view> chunks;

    stream_input(const std::uint8_t* data, std::size_t size) {
        if (size == 0) return;
        mode = data[0];
        std::size_t pos = 1;
        std::vector<std::size_t> sizes;
        if (pos < size) {
            const std::size_t k = data[pos++] & 15u;
            for (std::size_t i = 0; i < k && pos < size; ++i) {
                const std::uint8_t b = data[pos++];
                sizes.push_back(b < 128 ? b : (b - 127u) * 64u);
            }
        }
        const protocol::byte_view stream(reinterpret_cast<const std::byte*>(data) + pos, size - pos);
        std::size_t at = 0;
        for (std::size_t i = 0; at < stream.size(); ++i) {
            std::size_t n = sizes.empty() ? 0 : sizes[i % sizes.size()];
            if (n == 0 || n > stream.size() - at || chunks.size() + 1 == max_chunks) n = stream.size() - at;
            chunks.push_back(stream.subspan(at, n));
            at += n;
        }
    }
};

/// Checks that what a connection writes is a stream of well-formed Ice messages: each frame
/// parses, a compressed one decompresses, a reply or request decodes. A forceful close may cut
/// the last message, so an incomplete tail is fine.
class output_checker {
public:
    void add(protocol::byte_view bytes) {
        boost::system::error_code ec;
        in_.feed(bytes, protocol::limits{0}, ec, [](const protocol::frame_view& f) {
            check_message(f);
            return true;
        });
        check(!ec, "the connection wrote bytes that are not an Ice message");
    }

    /// Checks one whole message (also those the harness intercepts: events for a session).
    static void check_message(const protocol::frame_view& f) {
        if (f.header.compression == protocol::compression_status::compressed) {
            protocol::byte_buffer plain;
            boost::system::error_code ec;
            const auto inner = protocol::decompress_frame(f, protocol::limits{0}, plain, ec);
            check(inner.has_value(), "the connection wrote a compressed message that does not decompress");
            return check_body(inner->header.type, inner->body());
        }
        check_body(f.header.type, f.body());
    }

private:
    static void check_body(protocol::message_type type, protocol::byte_view body) {
        switch (type) {
        case protocol::message_type::reply:
            check(protocol::decode_reply(body).has_value(), "the connection wrote a reply that does not decode");
            break;
        case protocol::message_type::request:
            check(protocol::decode_request(body).has_value(), "the connection wrote a request that does not decode");
            break;
        case protocol::message_type::batch_request: {
            protocol::batch_reader batch(body);
            while (!batch.done())
                if (!batch.next()) break;
            check(!batch.error(), "the connection wrote a batch that does not decode");
            break;
        }
        default:
            break;
        }
    }

    protocol::frame_assembler in_;  // a message the connection has written only in part
};

/** The client end of a socketpair whose other end is an accepted connection's transport. The
    harness writes the input's chunks here and drains (and checks) what the connection writes;
    `stalled` leaves the replies unread, so the connection's queue fills (back-pressure, slow
    consumer). */
class peer {
public:
    peer(shard& home, bool stalled) : stalled_(stalled) {
        int fds[2];
        check(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
        fd_ = fds[0];
        if (stalled_) {
            // A small send buffer on the connection's side, so a stalled peer is felt early.
            const int small = 4096;
            ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        }
        // asio takes the AF_UNIX stream socket as "tcp": the connection only reads and writes it.
        tcp::socket s(home.executor());
        boost::system::error_code ec;
        s.assign(tcp::v4(), fds[1], ec);
        check(!ec, "assign socket");
        transport_.emplace(std::move(s), transport_kind::tcp, nullptr, true);
    }
    ~peer() {
        if (fd_ >= 0) ::close(fd_);
    }
    peer(const peer&) = delete;
    peer& operator=(const peer&) = delete;

    /// The connection's end, once.
    transport take_transport() { return std::move(*transport_); }

    /// Writes `bytes` toward the connection. @return false if not all of it fits now (the
    /// connection stopped reading and the socket buffer is full) or the connection is gone.
    bool send(protocol::byte_view bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            bytes = bytes.subspan(static_cast<std::size_t>(n));
        }
        return true;
    }

    /// Reads and checks whatever the connection wrote (nothing while stalled). @return bytes read.
    std::size_t drain() {
        if (stalled_) return 0;
        std::size_t total = 0;
        std::byte buf[16384];
        for (;;) {
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            total += static_cast<std::size_t>(n);
            out_.add(protocol::byte_view(buf, static_cast<std::size_t>(n)));
        }
        return total;
    }
    /// Reads the replies from now on (end of input: let a stalled connection's writer finish).
    void unstall() noexcept { stalled_ = false; }

private:
    int fd_ = -1;
    bool stalled_;
    std::optional<transport> transport_;
    output_checker out_;
};

/** Takes the shards' work guards away (shard::stop, run here once), so io_context::run returns
    when nothing is left to do. The fuzz targets never start the shard threads: the fuzzing
    thread runs the shards itself, with settle() and finish(). Call once, at start-up. */
inline void own_shards(shard_set& shards) {
    for (unsigned i = 0; i < shards.size(); ++i) {
        auto& io = shards.at(i).io();
        shards.at(i).stop();
        io.poll();
        io.restart();
    }
}

/** Runs every ready handler of every shard, draining `p` in between, until nothing is ready:
    everything a chunk caused has happened before the next chunk is sent (as in one read of the
    read loop, then the turns of the loop that follow it). A back-end connection still in the
    pool is waiting for its name to (fail to) resolve on asio's resolver thread: that answer
    is awaited too, so the outcome never depends on timing. */
inline void settle(shard_set& shards, peer* p) {
    for (int round = 0;; ++round) {
        check(round < 1'000'000, "settle: the shards never went idle");
        std::size_t ran = 0;
        for (unsigned i = 0; i < shards.size(); ++i) {
            auto& io = shards.at(i).io();
            io.restart();
            ran += io.poll();
        }
        if (p) ran += p->drain();
        if (ran) continue;
        bool waiting = false;
        for (unsigned i = 0; i < shards.size(); ++i) {
            auto& sh = shards.at(i);
            if (sh.backends().size() == 0) continue;
            waiting = true;
            sh.io().restart();
            check(sh.io().run_one_for(std::chrono::seconds(5)) == 1, "settle: a back end's resolve never completed");
        }
        if (!waiting) return;
    }
}

/** After the input: closes every back-end connection, then runs the shards until no work is
    left at all (io_context::run returns), so no handler, timer or coroutine of this input
    survives into the next. The caller has closed its connections. */
inline void finish(shard_set& shards, peer* p) {
    if (p) p->unstall();
    for (unsigned i = 0; i < shards.size(); ++i) shards.at(i).backends().close_all();
    for (int round = 0;; ++round) {
        check(round < 1'000'000, "finish: the shards never ran out of work");
        std::size_t ran = 0;
        for (unsigned i = 0; i < shards.size(); ++i) {
            auto& io = shards.at(i).io();
            io.restart();
            ran += io.run();
        }
        if (p) ran += p->drain();
        if (!ran) return;
    }
}

/// A request message to `target` with an empty context and `params` (a whole encapsulation).
inline protocol::byte_buffer request_message(std::int32_t request_id, protocol::identity_view target,
                                             std::string_view operation, protocol::byte_view params,
                                             std::uint8_t mode = 0) {
    protocol::output_stream os;
    os.start_message(protocol::message_type::request);
    os.write_int(request_id);
    os.write_identity(target);
    os.write_facet({});
    os.write_string(operation);
    os.write_byte(mode);
    os.write_size(0);
    os.write_bytes(params);
    os.end_message();
    return os.take();
}

/// Quiets the log: the targets close connections on bad input, and each close logs at debug
/// or info; printing them would slow the fuzzer down and bury its own output.
inline void quiet_logs() { spdlog::set_level(spdlog::level::off); }

}  // namespace moraine::net::fuzz
