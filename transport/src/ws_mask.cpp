#include <moraine/transport/ws_mask.hpp>

#include <openssl/rand.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace moraine::transport {

unsigned apply_mask(std::span<std::byte> data, const ws_mask_key& key, unsigned phase) noexcept {
    phase &= 3;
    std::byte* p = data.data();
    std::size_t n = data.size();
    // Byte by byte until the key is back at index 0, then whole 8-byte words of a doubled key.
    while (n > 0 && phase != 0) {
        *p++ ^= key[phase];
        phase = (phase + 1) & 3;
        --n;
    }
    std::array<std::byte, 8> doubled{key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3]};
    std::uint64_t word_key;
    std::memcpy(&word_key, doubled.data(), 8);
    for (; n >= 8; n -= 8, p += 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);  // memcpy: p need not be aligned
        w ^= word_key;
        std::memcpy(p, &w, 8);
    }
    for (; n > 0; --n) {
        *p++ ^= key[phase];
        phase = (phase + 1) & 3;
    }
    return phase;
}

ws_mask_key random_mask_key() noexcept {
    struct pool {
        std::array<unsigned char, 256> bytes;
        std::size_t used = 256;  // empty: filled on first use
    };
    thread_local pool p;
    if (p.used + 4 > p.bytes.size()) {
        if (::RAND_bytes(p.bytes.data(), static_cast<int>(p.bytes.size())) != 1) std::abort();
        p.used = 0;
    }
    ws_mask_key k;
    std::memcpy(k.data(), p.bytes.data() + p.used, 4);
    p.used += 4;
    return k;
}

}  // namespace moraine::transport
