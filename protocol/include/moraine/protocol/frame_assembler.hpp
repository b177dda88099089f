#pragma once
// Whole messages out of a stream read in arbitrary pieces (sans-I/O; docs/style.md §5).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/frame_parser.hpp>

#include <boost/system/error_code.hpp>
#include <cstddef>
#include <utility>

namespace moraine::protocol {

/** Cuts the bytes of one Ice 1.0 stream, read in pieces of any size, into whole messages
    (docs/ice-wire.md §2: 14-byte header, int32 total size in bytes at offset 10, header
    included). A read may end inside a header or a body and may hold several messages.

    feed() hands each whole message to a callback as a frame_view. Messages that lie wholly in
    the piece just read are parsed in place and lent straight from the caller's buffer: no copy,
    no allocation. Only a message that straddles two reads is copied, into the assembler's own
    buffer, and only its own bytes (the messages after it in the read are parsed in place again).
    That buffer is freed once the message is dispatched, so an idle connection holds nothing.

    Errors are parse_frame's, raised from the header alone, before the body arrives:
    errc::bad_magic (on the first wrong byte), ::unsupported_protocol, ::unsupported_encoding,
    ::illegal_message_size, ::message_too_large (size > lim.max_message_bytes unless 0),
    ::unknown_message_type, ::bad_compression (a status-2 header that cannot hold its prefix).
    A compressed (status 2) message is delivered as it came, compression status set:
    decompressing it is the caller's (decompress_frame, compression.hpp). Not thread-safe. */
class frame_assembler {
public:
    /** Takes the next piece of the stream and calls `on_frame(const frame_view&) -> bool` for
        each message it completes, in order. The view is a loan valid during the call only: it
        borrows `data` or the assembler's buffer. `on_frame` may call reset() (a connection
        closing), but not feed(). Clears `ec` on entry.
        @param data the bytes just read; may be empty.
        @param lim checked against each message's header (its size field, in bytes).
        @return true to go on reading; false once `on_frame` returned false (the rest of `data`
                is dropped) or the stream is bad (`ec` set, nothing more is delivered). Either
                way nothing is held afterwards. */
    template <class OnFrame>
    bool feed(byte_view data, const limits& lim, boost::system::error_code& ec, OnFrame&& on_frame) {
        ec.clear();
        if (!held_.empty()) {
            bool complete = false;
            data = data.subspan(top_up(data, lim, complete, ec));
            if (ec) return fail();
            if (!complete) return true;  // all of `data` went into the held message
            // Taken out of held_ first: on_frame may reset(), and the view must outlive that.
            const byte_buffer whole = std::exchange(held_, byte_buffer());
            if (!on_frame(whole_frame(whole))) return false;
        }
        std::size_t used = 0;
        while (auto frame = parse_frame(data.subspan(used), lim, ec)) {
            used += frame->size();
            if (!on_frame(*frame)) return false;
        }
        if (ec) return fail();
        if (used < data.size()) hold(data.subspan(used), lim);
        return true;
    }

    /// Drops a partial message and frees its buffer (a connection closed or reconnecting).
    void reset() noexcept { byte_buffer().swap(held_); }

    /// Bytes of a partial message held between reads (0 between messages).
    std::size_t buffered() const noexcept { return held_.size(); }
    /// Those bytes (a loan until the next feed or reset).
    byte_view held() const noexcept { return byte_view(held_.data(), held_.size()); }

private:
    /// Starts holding the tail of a read: a message's first bytes. Reserves the whole message
    /// once its header is known and limited, so the top-ups do not reallocate.
    void hold(byte_view tail, const limits& lim);
    /// Copies from `data` only what the held message still lacks; sets `complete` once it is
    /// whole, `ec` when its header is bad. @return bytes of `data` used.
    std::size_t top_up(byte_view data, const limits& lim, bool& complete, boost::system::error_code& ec);
    /// The frame of a held message top_up completed (and so checked).
    static frame_view whole_frame(const byte_buffer& whole) noexcept;
    bool fail() noexcept {
        reset();
        return false;
    }

    byte_buffer held_;  // the start of a message that straddles reads, only while it does
};

}  // namespace moraine::protocol
