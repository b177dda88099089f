#include <moraine/net/config_error.hpp>
#include <moraine/net/tls_peer.hpp>
#include <moraine/net/tls_config.hpp>
#include <moraine/net/tls_context.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gtest/gtest.h>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using moraine::net::config_error;
using moraine::net::key_name;
using moraine::net::describe_tls_peer;
using moraine::net::peer_subject;
using moraine::net::prepare_client;
using moraine::net::require_server_certificate;
using moraine::net::tls_peer;
using moraine::net::tls_config;
using moraine::net::tls_contexts;

// ---- a test PKI, made once with the openssl CLI -------------------------------------------------

// Extensions for each kind of certificate; -subj gives the names.
constexpr std::string_view openssl_cnf = R"([req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
[client_ext]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
)";

// P-256 keys, so the whole PKI takes well under a second.
constexpr std::string_view make_pki = R"(set -e
new_ca() {  # name subject
  openssl req -config pki.cnf -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc \
    -keyout "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" -extensions ca_ext
}
issue() {  # name subject extensions issuer serial
  openssl req -config pki.cnf -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc \
    -keyout "$1.key" -out "$1.csr" -subj "/CN=$2"
  openssl x509 -req -in "$1.csr" -CA "$4.pem" -CAkey "$4.key" -set_serial "$5" -days 2 \
    -extfile pki.cnf -extensions "$3" -out "$1.pem"
}
new_ca ca "Moraine Test CA"
issue server server server_ext ca 1
issue client client client_ext ca 2
issue inter "Moraine Test Intermediate" ca_ext ca 3
issue deep deep server_ext inter 4
cat deep.pem inter.pem > deep_chain.pem
new_ca foreign_ca "Foreign CA"
issue intruder intruder client_ext foreign_ca 5
openssl pkey -in client.key -aes256 -passout pass:secret -out client_enc.key
openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -passout pass:secret -out client.p12
cat client.pem client.key > client_with_key.pem
printf 'not a certificate\n' > garbage.pem
mkdir cadir && cp ca.pem cadir/ && openssl rehash cadir
)";

fs::path pki_dir;
bool pki_ready = false;
std::string pki_log;

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class tls_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        std::string tmpl = (fs::temp_directory_path() / "moraine_tls_XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        pki_dir = tmpl;
        std::ofstream(pki_dir / "pki.cnf") << openssl_cnf;
        std::ofstream(pki_dir / "make_pki.sh") << make_pki;
        const std::string cmd = "cd '" + pki_dir.string() + "' && sh make_pki.sh > pki.log 2>&1";
        pki_ready = std::system(cmd.c_str()) == 0;
        pki_log = read_text(pki_dir / "pki.log");
    }
    static void TearDownTestSuite() { fs::remove_all(pki_dir); }

    // A missing openssl CLI fails every test rather than skipping them silently.
    void SetUp() override { ASSERT_TRUE(pki_ready) << "making the test PKI failed:\n" << pki_log; }

    // Settings as a property file would give them, files relative to IceSSL.DefaultDir.
    static tls_config settings(std::string cert, std::string key) {
        tls_config cfg;
        cfg.configured = true;
        cfg.source = "router.cfg";
        cfg.default_dir = pki_dir.string();
        cfg.cas = "ca.pem";
        cfg.cert_file = std::move(cert);
        cfg.key_file = std::move(key);
        return cfg;
    }
    static tls_config server_settings() { return settings("server.pem", "server.key"); }
    static tls_config client_settings() { return settings("client.pem", "client.key"); }
    static std::string in_pki(std::string_view name) { return (pki_dir / name).string(); }
};

// ---- configuration errors -----------------------------------------------------------------------

// Whether create() fails with a config_error naming `ice_key`, in both spellings (property and
// YAML), whose message contains `text`.
testing::AssertionResult fails_naming(tls_config cfg, std::string_view ice_key, const std::string& text) {
    for (bool yaml : {false, true}) {
        cfg.yaml = yaml;
        std::string msg = "no error";
        try {
            tls_contexts::create(cfg);
        } catch (const config_error& e) {
            msg = e.what();
        }
        const std::string prefix = "router.cfg: " + key_name(cfg, ice_key) + ": ";
        if (msg.rfind(prefix, 0) != 0 || msg.find(text) == std::string::npos)
            return testing::AssertionFailure() << "expected \"" << prefix << "...\" with \"" << text << "\", got \"" << msg << "\"";
    }
    return testing::AssertionSuccess();
}

TEST(tls_config_test, key_name_spells_property_and_yaml_names) {
    tls_config cfg;
    EXPECT_EQ(key_name(cfg, "CertFile"), "IceSSL.CertFile");
    EXPECT_EQ(key_name(cfg, "HandshakeTimeout"), "Moraine.TLS.HandshakeTimeout");
    cfg.yaml = true;
    EXPECT_EQ(key_name(cfg, "CertFile"), "tls.cert_file");
    EXPECT_EQ(key_name(cfg, "UsePlatformCAs"), "tls.use_platform_cas");
    EXPECT_EQ(key_name(cfg, "VerifyDepthMax"), "tls.verify_depth_max");
    EXPECT_EQ(key_name(cfg, "HandshakeTimeout"), "tls.handshake_timeout_ms");
}

TEST_F(tls_test, create_accepts_good_settings) {
    auto contexts = tls_contexts::create(server_settings());
    ASSERT_NE(contexts, nullptr);
    EXPECT_TRUE(contexts->has_certificate());
    EXPECT_NE(contexts->server().native_handle(), nullptr);
    EXPECT_NE(contexts->client().native_handle(), nullptr);
    EXPECT_FALSE(tls_contexts::create(settings("", ""))->has_certificate());  // a client-only setup
}

TEST_F(tls_test, create_reads_an_encrypted_key_with_its_password_and_keeps_no_password) {
    tls_config cfg = settings("client.pem", "client_enc.key");
    cfg.password = "secret";
    EXPECT_TRUE(tls_contexts::create(cfg)->config().password.empty());
}

TEST_F(tls_test, create_takes_the_key_from_the_certificate_file_when_no_key_file) {
    EXPECT_NO_THROW(tls_contexts::create(settings("client_with_key.pem", "")));
    EXPECT_TRUE(fails_naming(settings("client.pem", ""), "KeyFile", "cannot read private key " + in_pki("client.pem") + ": no PEM private key in it"));
}

TEST_F(tls_test, missing_or_bad_certificate_names_cert_file) {
    EXPECT_TRUE(fails_naming(settings("missing.pem", "client.key"), "CertFile",
                             "cannot read certificate " + in_pki("missing.pem") + ": No such file or directory"));
    EXPECT_TRUE(fails_naming(settings("garbage.pem", "client.key"), "CertFile",
                             "cannot read certificate " + in_pki("garbage.pem") + ": neither a PEM certificate nor PKCS#12"));
}

TEST_F(tls_test, missing_or_bad_key_names_key_file) {
    EXPECT_TRUE(fails_naming(settings("client.pem", "missing.key"), "KeyFile",
                             "cannot read private key " + in_pki("missing.key") + ": No such file or directory"));
    EXPECT_TRUE(fails_naming(settings("client.pem", "garbage.pem"), "KeyFile",
                             "cannot read private key " + in_pki("garbage.pem") + ": no PEM private key in it"));
    EXPECT_TRUE(fails_naming(settings("", "client.key"), "KeyFile", "a private key needs its certificate"));
}

TEST_F(tls_test, key_not_matching_the_certificate_names_key_file) {
    EXPECT_TRUE(fails_naming(settings("server.pem", "client.key"), "KeyFile",
                             "the private key in " + in_pki("client.key") + " does not match the certificate in " + in_pki("server.pem")));
}

TEST_F(tls_test, wrong_or_missing_password_names_password) {
    tls_config cfg = settings("client.pem", "client_enc.key");
    cfg.password = "wrong";
    EXPECT_TRUE(fails_naming(cfg, "Password", "wrong password for the private key in " + in_pki("client_enc.key")));
    cfg.password.clear();
    EXPECT_TRUE(fails_naming(cfg, "Password", "is encrypted and no password is set"));
}

TEST_F(tls_test, pkcs12_bundle_is_read_with_its_password) {
    tls_config cfg = settings("client.p12", "");
    cfg.password = "secret";
    EXPECT_NO_THROW(tls_contexts::create(cfg));
    cfg.password = "wrong";
    EXPECT_TRUE(fails_naming(cfg, "Password", "wrong password for the PKCS#12 file " + in_pki("client.p12")));
}

TEST_F(tls_test, bad_cipher_list_names_ciphers) {
    tls_config cfg = server_settings();
    cfg.ciphers = "NO-SUCH-CIPHER:ALSO-NOT-ONE";
    EXPECT_TRUE(fails_naming(cfg, "Ciphers", "no usable cipher in \"NO-SUCH-CIPHER:ALSO-NOT-ONE\""));
}

TEST_F(tls_test, unknown_protocol_names_protocols) {
    tls_config cfg = server_settings();
    cfg.protocols = {"tls1_2", "tls9"};
    EXPECT_TRUE(fails_naming(cfg, "Protocols", "unknown protocol \"tls9\""));
}

TEST_F(tls_test, protocol_names_take_icessl_spellings) {
    for (std::string name : {"TLS1_2", "tlsv1_2", "TLSv1.2", "tls1.2", "TLS1_3", "tls1_2, tls1_3", "TLS1 TLS1_1"}) {
        tls_config cfg = server_settings();
        cfg.protocols = {name};
        EXPECT_NO_THROW(tls_contexts::create(cfg)) << name;
    }
}

TEST_F(tls_test, missing_or_bad_cas_names_cas_and_the_path) {
    tls_config cfg = server_settings();
    cfg.cas = "missing_ca.pem";
    EXPECT_TRUE(fails_naming(cfg, "CAs", "cannot read CA certificates " + in_pki("missing_ca.pem") + ": No such file or directory"));
    cfg.cas = "garbage.pem";
    EXPECT_TRUE(fails_naming(cfg, "CAs", "cannot read CA certificates " + in_pki("garbage.pem")));
}

TEST_F(tls_test, out_of_range_numbers_name_their_key) {
    tls_config cfg = server_settings();
    cfg.verify_peer = 3;
    EXPECT_TRUE(fails_naming(cfg, "VerifyPeer", "expected 0, 1 or 2, got 3"));
    cfg = server_settings();
    cfg.verify_depth_max = -1;
    EXPECT_TRUE(fails_naming(cfg, "VerifyDepthMax", "got -1"));
    cfg = server_settings();
    cfg.handshake_timeout_ms = 0;
    EXPECT_TRUE(fails_naming(cfg, "HandshakeTimeout", "got 0"));
}

TEST_F(tls_test, ssl_endpoint_without_certificate_names_cert_file) {
    tls_config cfg = settings("", "");
    try {
        require_server_certificate(cfg, "Glacier2.Client.Endpoints");
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_STREQ(e.what(), "router.cfg: IceSSL.CertFile: an ssl or wss endpoint in Glacier2.Client.Endpoints needs a "
                               "certificate: set IceSSL.CertFile (and IceSSL.KeyFile)");
    }
    cfg.yaml = true;
    EXPECT_THROW(require_server_certificate(cfg, "router.client_endpoints"), config_error);
    EXPECT_NO_THROW(require_server_certificate(server_settings(), "Glacier2.Client.Endpoints"));
}

// ---- handshakes over loopback -------------------------------------------------------------------

// What one handshake over 127.0.0.1 showed on each side.
struct handshake_result {
    error_code server_ec;
    error_code client_ec;
    bool timed_out = false;
    tls_peer client_seen;  // describe_tls_peer on the server side: the client as the router sees it
    tls_peer server_seen;  // describe_tls_peer on the client side
    std::string subject;   // peer_subject on the server side
    std::string version;   // the version the server negotiated
    std::string sni;       // the server name the server received; empty if none
    int server_port = 0;
    int client_port = 0;
};

using ssl_stream = asio::ssl::stream<tcp::socket>;

// Runs a server stream on server.server() and a client stream on client.client(), prepared with
// prepare_client(..., host), on one io_context until both handshakes end, within 10 s. A side
// that fails hangs up, so the other never waits for an alert that might not come.
handshake_result handshake(const tls_contexts& server, const tls_contexts& client, std::string_view host = "127.0.0.1") {
    asio::io_context io{1};
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    ssl_stream server_stream(io, server.server());
    ssl_stream client_stream(io, client.client());
    asio::steady_timer deadline(io, std::chrono::seconds(10));
    handshake_result r;
    r.server_port = acceptor.local_endpoint().port();
    int running = 2;
    auto finished = [&](ssl_stream& s, error_code ec, error_code& out) {
        out = ec;
        error_code ignored;
        if (ec) s.next_layer().close(ignored);
        if (--running == 0) deadline.cancel();
    };
    deadline.async_wait([&](error_code ec) {
        if (ec) return;  // cancelled: both ended in time
        r.timed_out = true;
        error_code ignored;
        acceptor.close(ignored);
        server_stream.next_layer().close(ignored);
        client_stream.next_layer().close(ignored);
    });
    acceptor.async_accept(server_stream.next_layer(), [&](error_code ec) {
        if (ec) return finished(server_stream, ec, r.server_ec);
        server_stream.async_handshake(ssl_stream::server, [&](error_code ec) {
            SSL* ssl = server_stream.native_handle();
            if (const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) r.sni = name;
            if (!ec) {
                r.client_seen = describe_tls_peer(ssl, server_stream.next_layer());
                r.subject = peer_subject(ssl);
                r.version = SSL_get_version(ssl);
            }
            finished(server_stream, ec, r.server_ec);
        });
    });
    client_stream.next_layer().async_connect(acceptor.local_endpoint(), [&](error_code ec) {
        if (ec) return finished(client_stream, ec, r.client_ec);
        r.client_port = client_stream.next_layer().local_endpoint().port();
        prepare_client(client_stream.native_handle(), client.config(), host);
        client_stream.async_handshake(ssl_stream::client, [&](error_code ec) {
            if (!ec) r.server_seen = describe_tls_peer(client_stream.native_handle(), client_stream.next_layer());
            finished(client_stream, ec, r.client_ec);
        });
    });
    io.run();
    return r;
}

handshake_result handshake(const tls_config& server, const tls_config& client, std::string_view host = "127.0.0.1") {
    return handshake(*tls_contexts::create(server), *tls_contexts::create(client), host);
}

// The RFC 2253 subject of one PEM certificate.
std::string subject_of(const std::string& pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
    if (!cert) return "<not a certificate>";
    char buf[256];
    X509_NAME_oneline(X509_get_subject_name(cert.get()), buf, sizeof buf);
    return buf;
}

TEST_F(tls_test, good_client_certificate_is_accepted_and_described) {
    const handshake_result r = handshake(server_settings(), client_settings());
    ASSERT_FALSE(r.timed_out);
    ASSERT_FALSE(r.server_ec) << r.server_ec.message();
    ASSERT_FALSE(r.client_ec) << r.client_ec.message();
    EXPECT_EQ(r.version, "TLSv1.3");  // the default allows 1.2 and 1.3; both sides prefer 1.3

    const tls_peer& info = r.client_seen;
    EXPECT_EQ(info.cipher, "TLS_AES_256_GCM_SHA384");
    EXPECT_EQ(info.remote_host, "127.0.0.1");
    EXPECT_EQ(info.remote_port, r.client_port);
    EXPECT_EQ(info.local_host, "127.0.0.1");
    EXPECT_EQ(info.local_port, r.server_port);
    ASSERT_EQ(info.certs.size(), 2u);  // the client's leaf, then the root it chains to
    EXPECT_EQ(subject_of(info.certs[0]), "/CN=client");
    EXPECT_EQ(subject_of(info.certs[1]), "/CN=Moraine Test CA");
    EXPECT_EQ(info.certs[0].rfind("-----BEGIN CERTIFICATE-----\n", 0), 0u);
    EXPECT_TRUE(info.certs[0].ends_with("-----END CERTIFICATE-----\n"));
    EXPECT_EQ(info.certs[0].find('\r'), std::string::npos);
    EXPECT_EQ(info.certs[0], read_text(pki_dir / "client.pem"));  // openssl x509 writes the same PEM
    EXPECT_EQ(r.subject, "CN=client");

    ASSERT_EQ(r.server_seen.certs.size(), 2u);  // and the client's view of the server
    EXPECT_EQ(subject_of(r.server_seen.certs[0]), "/CN=server");
}

TEST_F(tls_test, certificate_from_a_foreign_ca_is_refused) {
    const handshake_result r = handshake(server_settings(), settings("intruder.pem", "intruder.key"));
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.server_ec);  // with TLS 1.3 the client finishes first and only hears of it later
}

TEST_F(tls_test, verify_peer_2_requires_a_client_certificate) {
    const handshake_result r = handshake(server_settings(), settings("", ""));
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.server_ec);
}

TEST_F(tls_test, verify_peer_1_accepts_a_client_without_certificate) {
    tls_config server = server_settings();
    server.verify_peer = 1;
    const handshake_result r = handshake(server, settings("", ""));
    ASSERT_FALSE(r.timed_out);
    EXPECT_FALSE(r.server_ec) << r.server_ec.message();
    EXPECT_FALSE(r.client_ec) << r.client_ec.message();
    EXPECT_TRUE(r.client_seen.certs.empty());
    EXPECT_EQ(r.subject, "");
    // ...yet still refuses a certificate it cannot verify.
    EXPECT_TRUE(handshake(server, settings("intruder.pem", "intruder.key")).server_ec);
}

TEST_F(tls_test, client_verifies_the_server_unless_verify_peer_0) {
    tls_config client = client_settings();
    client.cas = "";  // nothing to verify the server with
    EXPECT_TRUE(handshake(server_settings(), client).client_ec);
    client.verify_peer = 0;
    const handshake_result r = handshake(server_settings(), client);
    EXPECT_FALSE(r.client_ec) << r.client_ec.message();
    EXPECT_FALSE(r.server_ec) << r.server_ec.message();
    // Unverified: the leaf as sent, which is all a server sending no chain gives.
    ASSERT_EQ(r.server_seen.certs.size(), 1u);
    EXPECT_EQ(subject_of(r.server_seen.certs[0]), "/CN=server");
}

TEST_F(tls_test, check_cert_name_matches_the_endpoint_host) {
    tls_config client = client_settings();
    client.check_cert_name = true;
    const auto server = tls_contexts::create(server_settings());
    const auto checking = tls_contexts::create(client);

    const handshake_result by_ip = handshake(*server, *checking, "127.0.0.1");
    EXPECT_FALSE(by_ip.client_ec) << by_ip.client_ec.message();
    EXPECT_EQ(by_ip.sni, "");  // no SNI for an IP literal

    const handshake_result by_name = handshake(*server, *checking, "localhost");
    EXPECT_FALSE(by_name.client_ec) << by_name.client_ec.message();
    EXPECT_EQ(by_name.sni, "localhost");

    EXPECT_TRUE(handshake(*server, *checking, "wrong.example").client_ec);
    EXPECT_TRUE(handshake(*server, *checking, "127.0.0.2").client_ec);
    EXPECT_TRUE(handshake(*server, *checking, "").client_ec);  // no name to check: fails closed

    client.check_cert_name = false;  // without the check any name passes
    EXPECT_FALSE(handshake(server_settings(), client, "wrong.example").client_ec);
}

TEST_F(tls_test, prepare_client_reports_a_name_it_cannot_check) {
    tls_config client = client_settings();
    client.check_cert_name = true;
    const auto contexts = tls_contexts::create(client);
    auto prepared = [&](std::string_view host) {
        std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(contexts->client().native_handle()), &SSL_free);
        return prepare_client(ssl.get(), client, host);
    };
    EXPECT_TRUE(prepared(""));
    EXPECT_FALSE(prepared("[::1]"));
    EXPECT_FALSE(prepared("fe80::1%eth0"));
    EXPECT_FALSE(prepared("router.example."));
}

TEST_F(tls_test, protocols_tls1_2_only_negotiates_tls1_2) {
    tls_config server = server_settings();
    server.protocols = {"tls1_2"};
    const handshake_result r = handshake(server, client_settings());
    ASSERT_FALSE(r.server_ec) << r.server_ec.message();
    EXPECT_FALSE(r.client_ec) << r.client_ec.message();
    EXPECT_EQ(r.version, "TLSv1.2");
    EXPECT_FALSE(r.client_seen.cipher.empty());
    EXPECT_EQ(r.client_seen.certs.size(), 2u);

    tls_config client = client_settings();
    client.protocols = {"TLSv1.3"};
    const handshake_result none = handshake(server, client);  // no version in common
    EXPECT_TRUE(none.server_ec);
    EXPECT_TRUE(none.client_ec);
}

TEST_F(tls_test, verify_depth_max_counts_the_whole_chain) {
    const tls_config server = settings("deep_chain.pem", "deep.key");  // deep, intermediate, root
    tls_config client = client_settings();
    client.verify_depth_max = 3;
    const handshake_result r = handshake(server, client);
    EXPECT_FALSE(r.client_ec) << r.client_ec.message();
    ASSERT_EQ(r.server_seen.certs.size(), 3u);
    EXPECT_EQ(subject_of(r.server_seen.certs[1]), "/CN=Moraine Test Intermediate");
    client.verify_depth_max = 2;
    EXPECT_TRUE(handshake(server, client).client_ec);
    client.verify_depth_max = 0;  // no limit
    EXPECT_FALSE(handshake(server, client).client_ec);
}

TEST_F(tls_test, ca_directory_and_pkcs12_identity_work_in_a_handshake) {
    tls_config client = settings("client.p12", "");
    client.password = "secret";
    client.cas = "cadir";
    const handshake_result r = handshake(server_settings(), client);
    ASSERT_FALSE(r.client_ec) << r.client_ec.message();
    ASSERT_FALSE(r.server_ec) << r.server_ec.message();
    EXPECT_EQ(r.subject, "CN=client");
}

}  // namespace
