// User exceptions inside encapsulations (docs/ice-wire.md §8).
#include <moraine/protocol/user_exception.hpp>

#include <moraine/protocol/error.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

namespace moraine::protocol {
namespace {

// 1.1 slice flags (spec §8). Exception slices always carry their type id as a string and
// Ice leaves the type-id kind bits (0x03) clear for them (vectors: 0x20 compact, 0x30 sliced).
constexpr std::uint8_t flag_has_slice_size = 0x10;
constexpr std::uint8_t flag_last_slice = 0x20;

// A slice size counts its own 4 bytes; the members follow it.
byte_view read_sized_members(input_stream& in) {
    const std::int32_t size = in.read_int();
    if (!in.ok()) return {};
    if (size < 4) {
        in.fail(errc::bad_encapsulation);
        return {};
    }
    return in.read_bytes(static_cast<std::size_t>(size) - 4);
}

}  // namespace

void write_user_exception_encaps(byte_buffer& out, encoding_version enc, std::string_view type_id,
                                 byte_view members, bool sliced) {
    output_stream os(enc);
    const std::size_t start = os.start_encapsulation(enc);
    const bool with_size = enc == encoding_1_0 || sliced;  // 1.0 is always "sliced"
    if (enc == encoding_1_0) {
        os.write_bool(false);  // usesClasses
    } else {
        os.write_byte(with_size ? flag_last_slice | flag_has_slice_size : flag_last_slice);
    }
    os.write_string(type_id);
    if (with_size) os.write_int(static_cast<std::int32_t>(4 + members.size()));
    os.write_bytes(members);
    os.end_encapsulation(start);
    out.insert(out.end(), os.view().begin(), os.view().end());
}

boost::system::result<user_exception_view> decode_user_exception(byte_view encaps) {
    input_stream outer(encaps);
    const encapsulation_view e = outer.read_encapsulation();
    if (!outer.ok()) return outer.error();
    input_stream in(e.payload(), e.encoding);
    user_exception_view v;
    if (e.encoding == encoding_1_0) {
        (void)in.read_bool();  // usesClasses: class instances would follow the slices; not needed here
        v.type_id = in.read_string();
        v.members = read_sized_members(in);
    } else {
        const std::uint8_t flags = in.read_byte();
        v.type_id = in.read_string();
        v.members = (flags & flag_has_slice_size) ? read_sized_members(in) : in.read_bytes(in.remaining());
    }
    if (!in.ok()) return in.error();
    if (v.type_id.empty()) return make_error_code(errc::bad_encapsulation);
    return v;
}

}  // namespace moraine::protocol
