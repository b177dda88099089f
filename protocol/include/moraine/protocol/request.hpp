#pragma once
// Requests (type 0) and their re-framing for forwarding (docs/ice-wire.md §4).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/context.hpp>
#include <moraine/protocol/encapsulation.hpp>
#include <moraine/protocol/header.hpp>
#include <moraine/protocol/identity.hpp>

#include <boost/system/result.hpp>
#include <cstdint>
#include <string_view>

namespace moraine::protocol {

/// Ice::OperationMode, the request's mode byte; forwarded unchanged.
enum class operation_mode : std::uint8_t { normal = 0, nonmutating = 1, idempotent = 2 };

/// A decoded request. A loan of the message body; params stay an opaque encapsulation.
struct request_view {
    std::int32_t request_id = 0;  ///< 0 = oneway (and for every request inside a batch)
    identity_view id;
    std::string_view facet;       ///< empty = default facet
    std::string_view operation;
    std::uint8_t mode = 0;        ///< operation_mode as sent (kept even if unknown)
    context_view context;
    encapsulation_view params;
    /// The bytes from the identity through the mode byte, inclusive: copied verbatim on forward.
    byte_view target;
};

/// Decodes a request body (the bytes after the header) into a view. No allocation but the
/// context entry vector. Errors: errc::out_of_bounds, ::bad_facet, ::bad_encapsulation, ...
/// Trailing bytes after the params encapsulation are an error (errc::bad_encapsulation).
boost::system::result<request_view> decode_request(byte_view body);

/// Appends a whole request message (type 0) for `r` with request id `request_id`; the context
/// is `r.context` copied verbatim when `keep_context`, else empty. Params copied verbatim.
/// @return bytes appended.
std::size_t write_request_message(byte_buffer& out, std::int32_t request_id, const request_view& r,
                                  bool keep_context);

/// As above, with `extra`'s entries in the context too, and none of the client's (kept when
/// `keep_context`) with one of their keys: a client cannot forge them (Glacier2.AddConnectionContext's
/// `_con.*` entries).
std::size_t write_request_message(byte_buffer& out, std::int32_t request_id, const request_view& r,
                                  bool keep_context, const context& extra);

/// The size a batch is sent at, at the latest: Ice's own default (Ice.BatchAutoFlushSize, 1 MiB),
/// so a batch never exceeds a default peer's Ice.MessageSizeMax.
inline constexpr std::size_t batch_size_max = 1024 * 1024;

/// Builds one batch request message (type 1, docs/ice-wire.md §5) out of whole request
/// messages (type 0, uncompressed) by dropping each one's header and request id: header, int32
/// count, then each request body without its id. This is how queued batch oneways leave together.
/// Callers keep batches under their peer's message size (see batch_size_max).
class batch_builder {
public:
    /// Appends the request of `request_message`, a whole uncompressed request message.
    void add(byte_view request_message);
    bool empty() const noexcept { return count_ == 0; }
    /// Bytes the batch message would have now (0 when empty).
    std::size_t size() const noexcept { return out_.size(); }
    /// Bytes the batch message would have with `request_message` added.
    std::size_t size_with(byte_view request_message) const noexcept {
        return (out_.empty() ? header_size + 4 : out_.size()) + request_message.size() - header_size - 4;
    }
    /// The batch message so far (header filled in); the builder is empty afterwards.
    byte_buffer finish();

private:
    byte_buffer out_;
    std::int32_t count_ = 0;
};

/// Reads the requests of a batch request body (type 1, docs/ice-wire.md §5):
/// int32 count, then `count` request bodies without a request id.
class batch_reader {
public:
    /// Reads the count; a negative count fails (errc::negative_size).
    explicit batch_reader(byte_view body) noexcept;
    std::int32_t count() const noexcept { return count_; }
    /// True when all `count` requests were read (or an error occurred).
    bool done() const noexcept { return read_ >= count_ || ec_; }
    /// The next request (request_id 0); an error ends the batch.
    boost::system::result<request_view> next();
    boost::system::error_code error() const noexcept { return ec_; }

private:
    byte_view rest_;
    std::int32_t count_ = 0;
    std::int32_t read_ = 0;
    boost::system::error_code ec_;
};

}  // namespace moraine::protocol
