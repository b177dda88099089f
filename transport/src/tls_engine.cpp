// TLS over the caller's buffers (see tls_engine.hpp).
#include <moraine/transport/tls_engine.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace moraine::transport {

namespace {

using io_loan = tls_engine::io_loan;

io_loan* loan_of(BIO* b) noexcept { return static_cast<io_loan*>(BIO_get_data(b)); }

// Reads what the current call lent; with nothing left the read is "retry", which SSL turns
// into SSL_ERROR_WANT_READ: the caller's cue to read the socket again.
int loan_read(BIO* b, char* to, int size) {
    BIO_clear_retry_flags(b);
    auto* io = loan_of(b);
    const std::size_t left = io ? io->in_size - io->in_used : 0;
    if (left == 0 || size <= 0) {
        BIO_set_retry_read(b);
        return -1;
    }
    const std::size_t n = std::min(left, static_cast<std::size_t>(size));
    std::memcpy(to, io->in + io->in_used, n);
    io->in_used += n;
    return static_cast<int>(n);
}

// Appends to the caller's output: a write never blocks, so SSL_write always completes.
int loan_write(BIO* b, const char* from, int size) {
    BIO_clear_retry_flags(b);
    auto* io = loan_of(b);
    if (!io || !io->out || size < 0) return -1;
    const auto* p = reinterpret_cast<const std::byte*>(from);
    io->out->insert(io->out->end(), p, p + size);
    return size;
}

long loan_ctrl(BIO* b, int cmd, long, void*) {
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        return 1;  // written already
    case BIO_CTRL_PENDING: {
        auto* io = loan_of(b);
        return io ? static_cast<long>(io->in_size - io->in_used) : 0;
    }
    default:
        return 0;
    }
}

int loan_create(BIO* b) {
    BIO_set_init(b, 1);
    return 1;
}

// One method table for the process, made on first use (thread-safe static initialisation).
const BIO_METHOD* loan_method() {
    static BIO_METHOD* const method = [] {
        BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "moraine loan");
        if (!m) throw std::runtime_error("OpenSSL: cannot make the BIO method");
        BIO_meth_set_read(m, loan_read);
        BIO_meth_set_write(m, loan_write);
        BIO_meth_set_ctrl(m, loan_ctrl);
        BIO_meth_set_create(m, loan_create);
        return m;
    }();
    return method;
}

std::string openssl_reason() {
    const unsigned long e = ERR_peek_last_error();
    if (e == 0) return "TLS error";
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    const char* reason = ERR_reason_error_string(e);
    return reason ? std::string(reason) : std::string(text);
}

}  // namespace

tls_engine::tls_engine(SSL_CTX* ctx, bool server) {
    ssl_ = SSL_new(ctx);
    BIO* bio = ssl_ ? BIO_new(loan_method()) : nullptr;
    if (!bio) {
        SSL_free(ssl_);
        throw std::runtime_error("OpenSSL: cannot make an SSL object");
    }
    SSL_set_bio(ssl_, bio, bio);  // one BIO both ways; the SSL owns it
    // An idle connection gives its record buffers back (the point of this engine, issue 29).
    SSL_set_mode(ssl_, SSL_MODE_RELEASE_BUFFERS);
    if (server) SSL_set_accept_state(ssl_);
    else SSL_set_connect_state(ssl_);
}

tls_engine::~tls_engine() { SSL_free(ssl_); }

tls_engine::tls_engine(tls_engine&& other) noexcept
    : ssl_(std::exchange(other.ssl_, nullptr)),
      error_(std::move(other.error_)),
      established_(other.established_),
      final_(other.final_) {}

tls_engine& tls_engine::operator=(tls_engine&& other) noexcept {
    if (this != &other) {
        SSL_free(ssl_);
        ssl_ = std::exchange(other.ssl_, nullptr);
        error_ = std::move(other.error_);
        established_ = other.established_;
        final_ = other.final_;
    }
    return *this;
}

void tls_engine::begin(protocol::byte_view in, protocol::byte_buffer& out) noexcept {
    io_ = io_loan{in.data(), in.size(), 0, &out};
    // Set per call: the engine may have moved since the last one.
    BIO_set_data(SSL_get_rbio(ssl_), &io_);
    ERR_clear_error();  // the queue is per thread and shared with every other SSL on it
}

tls_step tls_engine::end(tls_status st) noexcept {
    tls_step step{st, io_.in_used};
    BIO_set_data(SSL_get_rbio(ssl_), nullptr);
    io_ = io_loan{};
    return step;
}

tls_status tls_engine::status_after(int rc) {
    switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ:
        return tls_status::want_read;
    case SSL_ERROR_ZERO_RETURN:
        final_ = tls_status::closed;
        return final_;
    case SSL_ERROR_SSL:
        error_ = openssl_reason();
        if (SSL_get_verify_result(ssl_) != X509_V_OK)
            error_ += std::string(": ") + X509_verify_cert_error_string(SSL_get_verify_result(ssl_));
        final_ = tls_status::failed;
        return final_;
    default:
        error_ = "TLS error " + std::to_string(SSL_get_error(ssl_, rc));
        final_ = tls_status::failed;
        return final_;
    }
}

tls_step tls_engine::handshake(protocol::byte_view in, protocol::byte_buffer& out) {
    if (final_ != tls_status::ok) return {final_, 0};
    begin(in, out);
    const int rc = SSL_do_handshake(ssl_);
    if (rc == 1) {
        established_ = true;
        return end(tls_status::ok);
    }
    return end(status_after(rc));
}

std::size_t tls_engine::read_some(std::span<std::byte> plain, tls_status& st) {
    if (final_ != tls_status::ok) {
        st = final_;
        return 0;
    }
    std::size_t n = 0;
    const int rc = SSL_read_ex(ssl_, plain.data(), plain.size(), &n);
    if (rc == 1) return n;
    st = status_after(0);
    return 0;
}

bool tls_engine::write(protocol::byte_view plain, protocol::byte_buffer& out) {
    if (final_ != tls_status::ok || !established_) {
        if (error_.empty()) error_ = established_ ? "the TLS connection is closed" : "TLS handshake not complete";
        return false;
    }
    // A write from inside read()'s callback (a pong, a WebSocket upgrade answer) lends its own
    // buffers for the SSL_write, then gives the read its loan back: without that, the read's
    // input after the current record would be dropped (and the stream broken).
    const io_loan outer = io_;
    begin({}, out);
    // With SSL_MODE_RELEASE_BUFFERS, OpenSSL allocates its write buffer (max_send_fragment plus
    // the record overhead) for every write and frees it after. Sized for a 16 KiB record it is a
    // large malloc request, for which glibc first consolidates every small freed chunk: that,
    // not the cipher, was a good part of an event's TLS cost. Sized to the write, a small event's
    // buffer is a small request.
    // The split fragment follows: lowering the maximum lowers it, raising it does not.
    const auto fragment = static_cast<long>(tls_send_fragment(plain.size()));
    SSL_set_max_send_fragment(ssl_, fragment);
    SSL_set_split_send_fragment(ssl_, fragment);
    std::size_t written = 0;
    const int rc = plain.empty() ? 1 : SSL_write_ex(ssl_, plain.data(), plain.size(), &written);
    if (rc != 1) status_after(0);
    end(final_);
    if (outer.out) {
        io_ = outer;
        BIO_set_data(SSL_get_rbio(ssl_), &io_);
    }
    return rc == 1;
}

void tls_engine::shutdown(protocol::byte_buffer& out) {
    if (!ssl_ || !established_ || final_ == tls_status::failed) return;
    begin({}, out);
    SSL_shutdown(ssl_);  // queues close_notify; the peer's answer is not awaited
    end(final_);
}

std::span<std::byte> thread_plain_buffer() {
    thread_local std::vector<std::byte> plain(16 * 1024);
    return plain;
}

}  // namespace moraine::transport
