"""Test certificates for the TLS scenarios, made fresh with the `openssl` command (PEM only).

make(dir) creates, in dir:

  ca.pem / ca_key.pem                 the test CA (CN=Moraine Interop Test CA)
  server.pem / server_key.pem         CN=127.0.0.1, subjectAltName IP:127.0.0.1, DNS:localhost,
                                      signed by the test CA; the routers' certificate
  backend.pem / backend_key.pem       CN=moraine-interop-backend, same SANs, signed by the test CA;
                                      the TLS back end's certificate (it is a TLS server for the
                                      router and a TLS client of the router's server endpoint)
  client_a.pem / client_a_key.pem     CN=moraine-client-a, signed by the test CA
  client_b.pem / client_b_key.pem     CN=moraine-client-b, signed by the test CA
  foreign_ca.pem / foreign_ca_key.pem a second, unrelated CA (CN=Moraine Interop Foreign CA)
  foreign.pem / foreign_key.pem       CN=moraine-client-a (the same subject as client_a!),
                                      signed by the foreign CA
  encrypted_key.pem                   server_key.pem encrypted (AES-256) with ENCRYPTED_KEY_PASSWORD

No certificate has an extendedKeyUsage, so each may serve as a TLS server or client certificate
(IceSSL uses one certificate for both directions). Keys are RSA 2048. Every openssl call is
bounded in time; a failure raises RuntimeError with openssl's output.

openssl, make_ca and make_leaf are also the PKI of perf/tls_certs.py and
tests/client/tls_client_test.py (each with its own organisation name in the subjects).
"""
import os
import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor

CLIENT_A_CN = "moraine-client-a"
CLIENT_B_CN = "moraine-client-b"
BACKEND_CN = "moraine-interop-backend"
ENCRYPTED_KEY_PASSWORD = "right-password"
DAYS = "2"
SAN = "IP:127.0.0.1,DNS:localhost"


def openssl(*args, cwd):
    """Runs `openssl ARGS` in cwd (30 s at most); returns its output. @raises RuntimeError."""
    try:
        out = subprocess.run(["openssl"] + list(args), cwd=cwd, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise RuntimeError("openssl %s: no result within 30 s" % args[0])
    if out.returncode != 0:
        raise RuntimeError("openssl %s failed (%d): %s" % (" ".join(args), out.returncode, out.stderr.strip()))
    return out.stdout


def make_ca(d, name, cn, org="Moraine Interop"):
    """A self-signed CA: <name>.pem and <name>_key.pem in d."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", DAYS,
            "-subj", "/O=%s/CN=%s" % (org, cn),
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout", name + "_key.pem", "-out", name + ".pem", cwd=d)


def make_leaf(d, name, cn, ca="ca", san=None, org="Moraine Interop"):
    """<name>.pem and <name>_key.pem in d, signed by CA <ca>, with subjectAltName `san`
    (e.g. SAN's value) when given."""
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", "/O=%s/CN=%s" % (org, cn),
            "-keyout", name + "_key.pem", "-out", name + ".csr", cwd=d)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\n")
        f.write("keyUsage=critical,digitalSignature,keyEncipherment\n")
        if san:
            f.write("subjectAltName=%s\n" % san)
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + "_key.pem",
            "-set_serial", str(secrets.randbits(63)), "-sha256", "-days", DAYS, "-extfile", ext,
            "-out", name + ".pem", cwd=d)
    os.unlink(os.path.join(d, name + ".csr"))
    os.unlink(ext)


def make(d):
    """Creates every file listed in the module docstring in directory d (created if missing);
    returns d."""
    os.makedirs(d, exist_ok=True)
    # RSA key generation dominates: run the openssl calls in parallel (about 0.3 s in all).
    with ThreadPoolExecutor(max_workers=8) as pool:
        for f in [pool.submit(make_ca, d, "ca", "Moraine Interop Test CA"),
                  pool.submit(make_ca, d, "foreign_ca", "Moraine Interop Foreign CA")]:
            f.result()
        jobs = [pool.submit(make_leaf, d, "server", "127.0.0.1", "ca", san=SAN),
                pool.submit(make_leaf, d, "backend", BACKEND_CN, "ca", san=SAN),
                pool.submit(make_leaf, d, "client_a", CLIENT_A_CN, "ca"),
                pool.submit(make_leaf, d, "client_b", CLIENT_B_CN, "ca"),
                pool.submit(make_leaf, d, "foreign", CLIENT_A_CN, "foreign_ca")]
        for f in jobs:
            f.result()
    openssl("pkey", "-in", "server_key.pem", "-aes256", "-passout", "pass:" + ENCRYPTED_KEY_PASSWORD,
            "-out", "encrypted_key.pem", cwd=d)
    return d


def subject_cn(pem):
    """The subject CN of a PEM certificate (the first one in pem), via `openssl x509`; None if
    it has none."""
    out = subprocess.run(["openssl", "x509", "-noout", "-subject", "-nameopt", "RFC2253"],
                         input=pem, capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        raise RuntimeError("openssl x509 -subject failed: %s" % out.stderr.strip())
    # "subject=CN=moraine-client-a,O=Moraine Interop" (RFC 2253: most specific RDN first)
    subject = out.stdout.strip().split("=", 1)[1]
    for rdn in subject.split(","):
        key, _, value = rdn.partition("=")
        if key.strip() == "CN":
            return value.strip()
    return None


if __name__ == "__main__":
    import sys
    import time
    start = time.monotonic()
    make(sys.argv[1])
    print("made in %.2f s" % (time.monotonic() - start))
