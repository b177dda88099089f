#include <moraine/transport/ws_accept_key.hpp>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cstdlib>

namespace moraine::transport {

namespace {
constexpr std::string_view ws_guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";  // RFC 6455 §1.3

std::string base64(const unsigned char* data, std::size_t n) {
    // 4 characters per 3 bytes and a NUL: 29 for SHA-1's 20 bytes; the callers pass at most 20.
    std::array<unsigned char, 64> buf{};
    const int len = ::EVP_EncodeBlock(buf.data(), data, static_cast<int>(n));
    return std::string(reinterpret_cast<const char*>(buf.data()), static_cast<std::size_t>(len));
}
}  // namespace

std::string ws_accept_key(std::string_view key) {
    std::string text;
    text.reserve(key.size() + ws_guid.size());
    text.append(key).append(ws_guid);
    std::array<unsigned char, 20> digest{};  // SHA-1: 20 bytes
    unsigned int len = 0;
    if (::EVP_Digest(text.data(), text.size(), digest.data(), &len, ::EVP_sha1(), nullptr) != 1) std::abort();
    return base64(digest.data(), digest.size());
}

std::string ws_random_key() {
    std::array<unsigned char, 16> nonce{};
    if (::RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1) std::abort();  // never a guessable key
    return base64(nonce.data(), nonce.size());
}

}  // namespace moraine::transport
