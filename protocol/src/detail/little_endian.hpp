#pragma once
// Little-endian load/store helpers shared by the codec sources (docs/ice-wire.md §1: all
// integers are little-endian). Byte-wise so they are endian- and alignment-neutral; compilers
// fold them into single loads/stores on little-endian targets.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace moraine::protocol::detail {

template <class T>
inline T load_le(const std::byte* p) noexcept {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    U v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<U>(v | (static_cast<U>(p[i]) << (8 * i)));
    return static_cast<T>(v);
}

template <class T>
inline void store_le(std::byte* p, T value) noexcept {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    auto v = static_cast<U>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}

}  // namespace moraine::protocol::detail
