"""Fresh test certificates for the TLS measurements (perf/rpc_compare.py, perf/clock_compare.py
--transport tls), made with the `openssl` command in a directory of the caller's (PEM only):

  ca.pem / ca_key.pem             the CA every side trusts (IceSSL.CAs)
  server.pem / server_key.pem     CN=127.0.0.1, subjectAltName IP:127.0.0.1, DNS:localhost: the
                                  routers' certificate (IceSSL.CertFile / KeyFile), also presented
                                  when a router connects to an ssl back end
  backend.pem / backend_key.pem   the same SANs: the RPC back end's certificate
  client.pem / client_key.pem     CN=moraine-perf-client: the load clients' certificate

RSA 2048, SHA-256, valid 2 days, no extendedKeyUsage (IceSSL uses one certificate for both
directions): made by tests/interop/tls_certs.py's make_ca/make_leaf. Every openssl call is
bounded in time; a failure raises RuntimeError.

  /usr/bin/python3 perf/tls_certs.py DIR      makes them in DIR
"""
import importlib.util
import os
from concurrent.futures import ThreadPoolExecutor


def _load_test_pki():
    """tests/interop/tls_certs.py, the project's one test PKI, loaded by path: it shares this
    module's name, so a plain import would find this file again."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop", "tls_certs.py")
    spec = importlib.util.spec_from_file_location("interop_tls_certs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_pki = _load_test_pki()
SAN, make_ca, make_leaf = _pki.SAN, _pki.make_ca, _pki.make_leaf

ORG = "Moraine Perf"


def make(d):
    """Creates the files of the module docstring in d (created if missing); returns d."""
    os.makedirs(d, exist_ok=True)
    make_ca(d, "ca", "Moraine Perf Test CA", org=ORG)
    with ThreadPoolExecutor(max_workers=3) as pool:
        for f in [pool.submit(make_leaf, d, "server", "127.0.0.1", san=SAN, org=ORG),
                  pool.submit(make_leaf, d, "backend", "moraine-perf-backend", san=SAN, org=ORG),
                  pool.submit(make_leaf, d, "client", "moraine-perf-client", org=ORG)]:
            f.result()
    return d


def iceSSL_props(d, cert, verify_peer=None):
    """IceSSL plugin properties of a communicator (or router) presenting <cert>.pem from d and
    trusting ca.pem only."""
    props = {"Ice.Plugin.IceSSL": "IceSSL:createIceSSL", "IceSSL.DefaultDir": d, "IceSSL.CAs": "ca.pem",
             "IceSSL.CertFile": cert + ".pem", "IceSSL.KeyFile": cert + "_key.pem"}
    if verify_peer is not None:
        props["IceSSL.VerifyPeer"] = str(verify_peer)
    return props


def write_properties(path, props, comment=None):
    with open(path, "w") as f:
        if comment:
            f.write("".join("# %s\n" % line for line in comment.splitlines()))
        for k, v in props.items():
            f.write("%s=%s\n" % (k, v))
    return path


def probe_context(d):
    """A Python ssl client context trusting ca.pem and presenting client.pem (readiness probes)."""
    import ssl
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.path.join(d, "ca.pem"))
    ctx.load_cert_chain(os.path.join(d, "client.pem"), os.path.join(d, "client_key.pem"))
    return ctx


if __name__ == "__main__":
    import sys
    import time
    t = time.monotonic()
    make(sys.argv[1])
    print("made in %.2f s" % (time.monotonic() - t))
