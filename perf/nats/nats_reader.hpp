#pragma once
// An incremental reader of what a NATS server sends a client (the text protocol: INFO, MSG,
// PING, PONG, +OK, -ERR; each control line ends with CRLF, a MSG line is followed by its
// payload of the announced size and another CRLF). Used by perf/nats/nats_fanout.cpp only.
#include <cstddef>
#include <string_view>
#include <vector>

namespace moraine::perf {

/// One thing the server said.
struct nats_frame {
    enum class kind { msg, ping, pong, ok, err, info, other };
    kind what = kind::other;
    std::string_view payload;  ///< msg: the message body; err: the error text; else empty
};

/// Buffers bytes read from one connection and cuts them into frames. Not thread-safe.
class nats_reader {
public:
    /// Space to read into (at least 4 KiB free; grows when a message does not fit).
    char* space();
    std::size_t space_size() const noexcept { return buf_.size() - have_; }
    /// `n` bytes were read into space().
    void commit(std::size_t n) noexcept { have_ += n; }
    /// Calls on_frame(const nats_frame&) for each complete frame, keeps an incomplete tail.
    /// Returns false on a line that is not NATS (a MSG line without a size): the connection
    /// should be dropped.
    template <class F>
    bool drain(F&& on_frame) {
        std::size_t at = 0;
        nats_frame f;
        bool good = true;
        while (good) {
            const auto used = next(at, f, good);
            if (used == 0) break;
            on_frame(f);
            at += used;
        }
        compact(at);
        return good;
    }

private:
    /// Parses one frame starting at `at`: its size in bytes, 0 if incomplete (or bad: good=false).
    std::size_t next(std::size_t at, nats_frame& f, bool& good) const;
    void compact(std::size_t consumed) noexcept;

    std::vector<char> buf_ = std::vector<char>(8192);
    std::size_t have_ = 0;
};

}  // namespace moraine::perf
