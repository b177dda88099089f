#pragma once
// Certificates for the TLS tests, made in-process with OpenSSL (no files in the tree, no
// `openssl` command): a test CA, a router certificate for 127.0.0.1 / localhost, a client
// certificate, its key encrypted, and an unrelated CA. PEM files in a fresh temporary directory.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace moraine::client::test {

struct test_pki {
    std::filesystem::path dir;
    static constexpr const char* key_password = "right-password";

    std::string path(const char* name) const { return (dir / name).string(); }
    std::string ca() const { return path("ca.pem"); }                  ///< trusted test CA
    std::string foreign_ca() const { return path("foreign_ca.pem"); }  ///< a CA that signed nothing here
    std::string server_cert() const { return path("server.pem"); }     ///< SAN IP:127.0.0.1, DNS:localhost
    std::string server_key() const { return path("server_key.pem"); }
    std::string client_cert() const { return path("client.pem"); }     ///< CN=moraine-test-client
    std::string client_key() const { return path("client_key.pem"); }
    std::string client_key_encrypted() const { return path("client_key_enc.pem"); }  ///< with key_password

    /// Made once per test binary (EC P-256 keys: a few ms); the directory goes at exit.
    static const test_pki& get() {
        static const test_pki pki = make();
        static const struct remover {
            std::filesystem::path p;
            ~remover() {
                std::error_code ec;
                std::filesystem::remove_all(p, ec);
            }
        } r{pki.dir};
        return pki;
    }

private:
    using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
    using cert_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

    static void check(bool ok, const char* what) {
        if (!ok) throw std::runtime_error(std::string("test_pki: ") + what);
    }

    static key_ptr new_key() {
        key_ptr k(EVP_EC_gen("P-256"), EVP_PKEY_free);
        check(k != nullptr, "EVP_EC_gen");
        return k;
    }

    /// A certificate for `key` named CN=`cn`, signed by `issuer_key` (self-signed if `issuer` is null).
    static cert_ptr new_cert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool is_ca,
                             const char* san) {
        static long serial = 1;
        cert_ptr c(X509_new(), X509_free);
        X509_set_version(c.get(), 2);
        ASN1_INTEGER_set(X509_get_serialNumber(c.get()), serial++);
        X509_gmtime_adj(X509_getm_notBefore(c.get()), -3600);
        X509_gmtime_adj(X509_getm_notAfter(c.get()), 2 * 24 * 3600);
        X509_set_pubkey(c.get(), key);
        X509_NAME* name = X509_get_subject_name(c.get());
        auto text = [](const char* s) { return reinterpret_cast<const unsigned char*>(s); };
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, text("Moraine Test"), -1, -1, 0);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, text(cn), -1, -1, 0);
        X509_set_issuer_name(c.get(), issuer ? X509_get_subject_name(issuer) : name);
        X509V3_CTX ctx;
        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, issuer ? issuer : c.get(), c.get(), nullptr, nullptr, 0);
        auto add = [&](int nid, const char* value) {
            X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
            check(ext != nullptr, "X509V3_EXT_conf_nid");
            X509_add_ext(c.get(), ext, -1);
            X509_EXTENSION_free(ext);
        };
        add(NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
        add(NID_key_usage, is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment");
        if (san) add(NID_subject_alt_name, san);
        check(X509_sign(c.get(), issuer_key, EVP_sha256()) > 0, "X509_sign");
        return c;
    }

    static void write_cert(const std::filesystem::path& p, X509* c) {
        FILE* f = std::fopen(p.c_str(), "w");
        check(f && PEM_write_X509(f, c) == 1, "PEM_write_X509");
        std::fclose(f);
    }

    static void write_key(const std::filesystem::path& p, EVP_PKEY* k, const char* password = nullptr) {
        FILE* f = std::fopen(p.c_str(), "w");
        const EVP_CIPHER* cipher = password ? EVP_aes_256_cbc() : nullptr;
        check(f && PEM_write_PrivateKey(f, k, cipher, nullptr, 0, nullptr, const_cast<char*>(password)) == 1,
              "PEM_write_PrivateKey");
        std::fclose(f);
    }

    static test_pki make() {
        test_pki pki;
        std::string tmpl = (std::filesystem::temp_directory_path() / "moraine-client-tls-XXXXXX").string();
        check(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp");
        pki.dir = tmpl;
        auto ca_key = new_key(), foreign_key = new_key(), server_key = new_key(), client_key = new_key();
        auto ca = new_cert(ca_key.get(), "Moraine Test CA", nullptr, ca_key.get(), true, nullptr);
        auto foreign = new_cert(foreign_key.get(), "Moraine Foreign CA", nullptr, foreign_key.get(), true, nullptr);
        auto server =
            new_cert(server_key.get(), "127.0.0.1", ca.get(), ca_key.get(), false, "IP:127.0.0.1,DNS:localhost");
        auto client = new_cert(client_key.get(), "moraine-test-client", ca.get(), ca_key.get(), false, nullptr);
        write_cert(pki.dir / "ca.pem", ca.get());
        write_cert(pki.dir / "foreign_ca.pem", foreign.get());
        write_cert(pki.dir / "server.pem", server.get());
        write_key(pki.dir / "server_key.pem", server_key.get());
        write_cert(pki.dir / "client.pem", client.get());
        write_key(pki.dir / "client_key.pem", client_key.get());
        write_key(pki.dir / "client_key_enc.pem", client_key.get(), key_password);
        return pki;
    }
};

}  // namespace moraine::client::test
