#pragma once
// TLS without I/O: one OpenSSL SSL whose ciphertext comes from and goes to the caller's buffers.
#include <moraine/protocol/bytes.hpp>

#include <openssl/ssl.h>

#include <cstddef>
#include <span>
#include <string>

namespace moraine::transport {

/// What a tls_engine call ended on.
enum class tls_status {
    ok,         ///< done (the handshake is complete; a read stopped because its callback said so)
    want_read,  ///< every input byte was used and more ciphertext from the peer is needed
    closed,     ///< the peer sent close_notify: no more application data will come
    failed,     ///< a TLS error (a bad record, a failed verification, an alert): close the connection
};

/// The outcome of a handshake() or read(): how it ended and how many input bytes it used.
struct tls_step {
    tls_status status = tls_status::ok;
    std::size_t consumed = 0;  ///< bytes of the input used; all of them unless status is ok
};

/** One TLS connection (RFC 8446, RFC 5246) as a transformation of bytes: the caller reads
    ciphertext from its socket into any buffer it likes (a shard's shared scratch) and hands it
    over for the duration of one call; the engine hands back what must be sent by appending it to
    the caller's `out`. So the engine keeps no socket and no buffer of its own between calls, and
    with SSL_MODE_RELEASE_BUFFERS an idle TLS connection costs only OpenSSL's SSL object and
    session. Any thread may drive it, one at a time (a handshake may run off the shard that owns
    the connection).

    Records are never cut by the engine: a record that ends past the input is kept inside
    OpenSSL (its buffer then lives until the record completes) and the input counts as used.

    Errors: every call returns tls_status::failed on a TLS error and error() then says why
    (OpenSSL's reason, e.g. "certificate verify failed"). Calls after failed or closed return
    the same status again. Not copyable. */
class tls_engine {
public:
    /** A new SSL from `ctx` for the accepting (`server`) or connecting side. The engine takes
        its own reference on `ctx` (SSL_new), so the context may be dropped by the caller.
        @throws std::runtime_error if OpenSSL cannot make the SSL (out of memory). */
    tls_engine(SSL_CTX* ctx, bool server);
    ~tls_engine();
    tls_engine(tls_engine&& other) noexcept;
    tls_engine& operator=(tls_engine&& other) noexcept;
    tls_engine(const tls_engine&) = delete;
    tls_engine& operator=(const tls_engine&) = delete;

    /// The SSL, for settings before the handshake (SNI, expected host name) and for the peer's
    /// certificate and the cipher after it. Null only in a moved-from engine.
    SSL* native() const noexcept { return ssl_; }
    /// True once the handshake completed.
    bool established() const noexcept { return established_; }
    /// Why the last call failed; empty if none did.
    const std::string& error() const noexcept { return error_; }

    /** Advances the handshake with `in` (ciphertext from the peer; empty to start a client's
        handshake) and appends the bytes to send to `out`. @return ok once complete (bytes after
        the handshake's last record are left unused: pass them to read()), want_read while more
        is needed, failed on an error (`out` may then hold an alert worth sending). */
    tls_step handshake(protocol::byte_view in, protocol::byte_buffer& out);

    /** Decrypts the records in `in`: each piece of application data goes to
        `on_plain(std::span<std::byte>) -> bool`, a mutable loan of `plain` (a caller's scratch, of any
        size; 16 KiB holds a whole record). Anything the engine must send meanwhile (a TLS 1.3
        key update answer, an alert) is appended to `out`. Stops when `on_plain` returns false
        (status ok: the rest of `in` is not used). `on_plain` may call write() (to answer what
        it read: a pong); the read then goes on with the rest of `in`.
        @return want_read when `in` is used up. */
    template <class OnPlain>
    tls_step read(protocol::byte_view in, protocol::byte_buffer& out, std::span<std::byte> plain, OnPlain&& on_plain) {
        begin(in, out);
        tls_status st = tls_status::want_read;
        for (;;) {
            const std::size_t n = read_some(plain, st);
            if (n == 0) break;
            if (!on_plain(plain.first(n))) {
                st = tls_status::ok;
                break;
            }
        }
        return end(st);
    }

    /** Encrypts `plain` (application data, any size: records of at most 16 KiB) and appends the
        records to `out`. OpenSSL's record buffer for the call is sized to it (tls_send_fragment). @return false if the connection cannot send (not established, failed,
        or closed); error() says why. */
    bool write(protocol::byte_view plain, protocol::byte_buffer& out);

    /// Appends a close_notify alert to `out` (a graceful TLS close; idempotent).
    void shutdown(protocol::byte_buffer& out);

    /// The loan of the current call (the BIO reads from it and appends to `out`); public only
    /// for the BIO's callbacks in tls_engine.cpp.
    struct io_loan {
        const std::byte* in = nullptr;
        std::size_t in_size = 0;
        std::size_t in_used = 0;
        protocol::byte_buffer* out = nullptr;
    };

private:
    void begin(protocol::byte_view in, protocol::byte_buffer& out) noexcept;
    tls_step end(tls_status st) noexcept;
    /// One SSL_read into `plain`. @return bytes decrypted; 0 with `st` set when none (input used
    /// up, close_notify, or an error).
    std::size_t read_some(std::span<std::byte> plain, tls_status& st);
    /// Maps SSL_get_error after a call that returned `rc`; keeps the reason of a failure.
    tls_status status_after(int rc);

    SSL* ssl_ = nullptr;
    io_loan io_;
    std::string error_;
    bool established_ = false;
    tls_status final_ = tls_status::ok;  // closed or failed once the connection ended
};

/** The largest record plaintext (bytes, 512 to 16384) tls_engine::write asks OpenSSL for when
    it encrypts `plain_bytes` in one call (SSL_set_max_send_fragment): the write itself, at least
    512 (OpenSSL's floor), at most 16 KiB (a record's largest, RFC 8446 §5.1). A write of up to
    16 KiB is still one record; the point is the size of the record buffer that
    SSL_MODE_RELEASE_BUFFERS allocates for each write and frees after it (perf/README.md "Record
    buffers sized to the write"). */
constexpr std::size_t tls_send_fragment(std::size_t plain_bytes) noexcept {
    return plain_bytes < 512 ? 512 : plain_bytes > 16384 ? 16384 : plain_bytes;
}

/** The calling thread's plaintext buffer for tls_engine::read(): 16 KiB, one TLS record's
    largest plaintext. One per thread, so a caller that dispatches each piece before its next
    read (a shard, the client's I/O thread) holds no decrypt buffer per connection. */
std::span<std::byte> thread_plain_buffer();

}  // namespace moraine::transport
