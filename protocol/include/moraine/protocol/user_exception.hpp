#pragma once
// User exceptions in encapsulations (docs/ice-wire.md §8).
#include <moraine/protocol/bytes.hpp>
#include <moraine/protocol/encapsulation.hpp>

#include <boost/system/result.hpp>
#include <string_view>

namespace moraine::protocol {

/// Appends a whole encapsulation carrying a user exception with one slice: type id `type_id`
/// and the already-encoded members `members`.
///  - 1.1 sliced (`sliced` = true, Glacier2's `format:sliced` ops): flags 0x30, type id, int32 slice size, members.
///  - 1.1 compact: flags 0x20, type id, members.
///  - 1.0: bool usesClasses=false, type id, int32 slice size, members.
void write_user_exception_encaps(byte_buffer& out, encoding_version enc, std::string_view type_id,
                                 byte_view members, bool sliced);

/// The most-derived slice of a user exception encapsulation (payload of a status 1 reply).
struct user_exception_view {
    std::string_view type_id;  ///< e.g. "::Glacier2::PermissionDeniedException"
    byte_view members;         ///< the slice's member bytes (compact format: the rest of the encapsulation)
};
/// Decodes the first slice of the exception encapsulation `encaps` (1.0 or 1.1, sliced or compact).
boost::system::result<user_exception_view> decode_user_exception(byte_view encaps);

}  // namespace moraine::protocol
