"""Fresh test certificates for the TLS measurements (perf/rpc_compare.py, perf/clock_compare.py
--transport tls), made with the `openssl` command in a directory of the caller's (PEM only):

  ca.pem / ca_key.pem             the CA every side trusts (IceSSL.CAs)
  server.pem / server_key.pem     CN=127.0.0.1, subjectAltName IP:127.0.0.1, DNS:localhost: the
                                  routers' certificate (IceSSL.CertFile / KeyFile), also presented
                                  when a router connects to an ssl back end
  backend.pem / backend_key.pem   the same SANs: the RPC back end's certificate
  client.pem / client_key.pem     CN=moraine-perf-client: the load clients' certificate

RSA 2048, SHA-256, valid 2 days, no extendedKeyUsage (IceSSL uses one certificate for both
directions). Every openssl call is bounded in time; a failure raises RuntimeError.

  /usr/bin/python3 perf/tls_certs.py DIR      makes them in DIR
"""
import os
import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor

SAN = "subjectAltName=IP:127.0.0.1,DNS:localhost"


def openssl(*args, cwd):
    try:
        out = subprocess.run(["openssl"] + list(args), cwd=cwd, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise RuntimeError("openssl %s: no result within 30 s" % args[0])
    if out.returncode != 0:
        raise RuntimeError("openssl %s failed (%d): %s" % (" ".join(args), out.returncode, out.stderr.strip()))
    return out.stdout


def _leaf(d, name, cn, san):
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", "/O=Moraine Perf/CN=" + cn,
            "-keyout", name + "_key.pem", "-out", name + ".csr", cwd=d)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n")
        if san:
            f.write(SAN + "\n")
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca_key.pem",
            "-set_serial", str(secrets.randbits(63)), "-sha256", "-days", "2", "-extfile", ext,
            "-out", name + ".pem", cwd=d)
    os.unlink(os.path.join(d, name + ".csr"))
    os.unlink(ext)


def make(d):
    """Creates the files of the module docstring in d (created if missing); returns d."""
    os.makedirs(d, exist_ok=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2",
            "-subj", "/O=Moraine Perf/CN=Moraine Perf Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout", "ca_key.pem", "-out", "ca.pem", cwd=d)
    with ThreadPoolExecutor(max_workers=3) as pool:
        for f in [pool.submit(_leaf, d, "server", "127.0.0.1", True),
                  pool.submit(_leaf, d, "backend", "moraine-perf-backend", True),
                  pool.submit(_leaf, d, "client", "moraine-perf-client", False)]:
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
