#!/usr/bin/python3
"""SIGHUP reloads the router's TLS certificate: new connections get the new one, established
sessions keep going, and a certificate that does not load is refused with the old one kept.

  /usr/bin/python3 tests/ops/tls_reload.py [--moraine-bin build/bin/moraine-router] [--keep]
  /usr/bin/python3 tests/ops/tls_reload.py --router glacier2     (what glacier2router does: see below)

A throw-away PKI is made with the `openssl` command in the run's temporary directory
(tests/interop/tls_certs.py): one CA, two router certificates A and B (both for IP:127.0.0.1,
signed by the CA, different keys) and a client certificate. moraine-router starts on a Glacier2
property file with an ssl client endpoint whose IceSSL.CertFile / KeyFile are `server.pem` /
`server_key.pem`, at first copies of A. Then:

  1. A real Ice 3.7 IceSSL client creates a session (alice, crypt password) and a thread keeps
     calling a back end (tests/interop/peers/backend.py, tcp) through the router, every 20 ms,
     until the end: not one call may fail. A fresh TLS connection (Python's ssl module) must be
     served A (DER compared).
  2. The files are replaced by B (os.replace: never a half-written file) and SIGHUP sent: the log
     says `reloaded`; new connections get B, both Python's and a new Ice session's
     (SSLConnectionInfo.certs[0]), which also routes a call; the old session's connection still
     reports A (established connections keep their context) and its calls go on.
  3. Refusals, each followed by a check that B is still served and the router still runs:
     server.pem replaced by garbage; then B's certificate with A's key (a key that does not match).
     Each SIGHUP must log `reload refused` and no `reloaded`.
  4. B's files restored: the reload is accepted again. The calling thread stops; it must have made
     calls before, between and after the reloads, with no exception. The router must then exit 0
     on SIGTERM (harness.Env.finish).

glacier2router: no reload. Observed with glacier2router 3.7.8 (`--router glacier2`, which runs
steps 1 and 2 against it and reports what it served): SIGHUP neither stops it nor logs anything,
and new connections keep getting certificate A; IceSSL 3.7 reads its certificate once, when the
communicator is created. So in CI this test runs against moraine-router only.

Loopback only; every wait is bounded (about 10 s in all, --timeout 90 s overall); every process
it started is stopped by PID. One line `PASS tls_reload` or `FAIL tls_reload: reason`; exit
status 0 or 1.
"""
import argparse
import os
import signal
import socket
import ssl
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "interop"))
import Ice  # noqa: E402
import harness as H  # noqa: E402  (before Glacier2: see harness._import_glacier2)
import Glacier2  # noqa: E402
import tls_certs  # noqa: E402  (the project's one test PKI)
from harness import Demo, Failure, check  # noqa: E402
from log_file import LogFile  # noqa: E402

CALL_INTERVAL_S = 0.02


# ---------------------------------------------------------------------------------------------
# Certificates

class Pki:
    """The test's certificates in directory d: ca, server_a, server_b, client (tls_certs.make_*),
    and `server.pem` / `server_key.pem`, the files the router is configured with."""

    def __init__(self, d):
        self.dir = d
        os.makedirs(d, exist_ok=True)
        tls_certs.make_ca(d, "ca", "Moraine Reload Test CA", org="Moraine Reload")
        for name, cn in (("server_a", "127.0.0.1"), ("server_b", "127.0.0.1"), ("client", "moraine-reload-client")):
            tls_certs.make_leaf(d, name, cn, san=tls_certs.SAN if name != "client" else None, org="Moraine Reload")
        self.install("server_a")

    def path(self, name):
        return os.path.join(self.dir, name)

    def pem(self, name):
        with open(self.path(name + ".pem")) as f:
            return f.read()

    def der(self, name):
        """The DER bytes of <name>.pem's (first) certificate."""
        return ssl.PEM_cert_to_DER_cert(self.pem(name))

    def replace(self, target, data):
        """Writes target through a temporary file and os.replace: the router never reads half a file."""
        tmp = self.path(target + ".new")
        with open(tmp, "w") as f:
            f.write(data)
        os.replace(tmp, self.path(target))

    def install(self, cert, key=None):
        """server.pem := <cert>.pem, server_key.pem := <key or cert>_key.pem."""
        with open(self.path((key or cert) + "_key.pem")) as f:
            key_text = f.read()
        self.replace("server_key.pem", key_text)
        self.replace("server.pem", self.pem(cert))

    def router_props(self):
        """IceSSL keys of the router: certificate server.pem, CA ca.pem, VerifyPeer=1."""
        return {"Ice.Plugin.IceSSL": "IceSSL:createIceSSL", "IceSSL.DefaultDir": self.dir, "IceSSL.CAs": "ca.pem",
                "IceSSL.CertFile": "server.pem", "IceSSL.KeyFile": "server_key.pem", "IceSSL.VerifyPeer": "1"}

    def client_props(self):
        return {"Ice.Plugin.IceSSL": "IceSSL:createIceSSL", "IceSSL.DefaultDir": self.dir, "IceSSL.CAs": "ca.pem",
                "IceSSL.CertFile": "client.pem", "IceSSL.KeyFile": "client_key.pem"}

    def context(self):
        """A Python ssl client context trusting ca.pem (and checking the name 127.0.0.1)."""
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.path("ca.pem"))
        ctx.load_cert_chain(self.path("client.pem"), self.path("client_key.pem"))
        return ctx


def served_der(ctx, port):
    """The DER certificate the router presents to a new TLS connection on port."""
    with socket.create_connection((H.HOST, port), timeout=3.0) as raw:
        with ctx.wrap_socket(raw, server_hostname=H.HOST) as s:
            return s.getpeercert(binary_form=True)


def which(pki, der):
    """"A", "B" or "another certificate" for a served DER certificate."""
    return {pki.der("server_a"): "A", pki.der("server_b"): "B"}.get(der, "another certificate")


# ---------------------------------------------------------------------------------------------
# A session that keeps calling

class Caller(threading.Thread):
    """Calls hello.sayHello through the session's router every CALL_INTERVAL_S until stop();
    counts calls per phase (the label set by phase()) and keeps the first exception."""

    def __init__(self, hello):
        super().__init__(daemon=True)
        self.hello, self.label, self.calls, self.error = hello, "before", {}, None
        self.halt = threading.Event()

    def phase(self, label):
        self.label = label

    def run(self):
        n = 0
        while not self.halt.is_set():
            n += 1
            try:
                got = self.hello.sayHello("call%d" % n)
                if got != "hello call%d" % n:
                    raise Failure("sayHello answered %r" % got)
            except Exception as e:  # noqa: BLE001  (any failure of the old session is the finding)
                self.error = "%s in phase %r: %s" % (type(e).__name__, self.label, " ".join(str(e).split())[:200])
                return
            self.calls[self.label] = self.calls.get(self.label, 0) + 1
            self.halt.wait(CALL_INTERVAL_S)

    def stop(self):
        self.halt.set()
        self.join(10)
        check(not self.is_alive(), "the calling thread did not stop within 10 s (a call hangs)")


def open_session(env, router, pki):
    """A fresh IceSSL communicator routed through router with a password session (alice);
    returns (communicator, hello proxy)."""
    ic = env.communicator(router, extra=pki.client_props())
    try:
        Glacier2.RouterPrx.uncheckedCast(ic.getDefaultRouter()).createSession("alice", H.CRYPT_USERS["alice"])
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy(env.hello_proxy()))
        check(hello.sayHello("first") == "hello first", "the first routed call failed")
    except BaseException:
        ic.destroy()
        raise
    return ic, hello


def session_cert(pki, hello):
    """Which router certificate the session's own TLS connection verified (A or B)."""
    info = hello.ice_getCachedConnection().getInfo()
    while info is not None and not isinstance(info, Ice.SSLConnectionInfo):
        info = info.underlying
    check(info is not None and info.certs, "the session's connection is not TLS or shows no certificate")
    return which(pki, ssl.PEM_cert_to_DER_cert(info.certs[0]))


# ---------------------------------------------------------------------------------------------
# The router's log

def sighup(router, log, expect_ok, what):
    """SIGHUP, then `reloaded` (expect_ok) or `reload refused` within 5 s; returns the line."""
    check(router.proc.alive(), "the router is not running before %s%s" % (what, router.proc.log_tail()))
    log.mark()
    os.kill(router.proc.popen.pid, signal.SIGHUP)
    m = log.wait_for(r"(?m)^.*(reloaded |reload refused).*$", 5.0)
    check(m, "%s: neither `reloaded` nor `reload refused` logged within 5 s%s" % (what, router.proc.log_tail()))
    check(m.group(1).startswith("reloaded") == expect_ok,
          "%s: expected %s, the router logged: %s" % (what, "reloaded" if expect_ok else "reload refused", m.group(0)))
    return m.group(0).strip()


def expect_served(pki, port, want, what):
    got = which(pki, served_der(pki.context(), port))
    check(got == want, "%s: a new TLS connection got %s, expected %s" % (what, got, want))


# ---------------------------------------------------------------------------------------------
# The test

def run(env, pki):
    """Steps 1-4 of the module docstring against moraine-router."""
    router = start_router(env, pki)
    log = LogFile(router.proc.log_path)
    port = router.client_port
    ic_old, hello_old = open_session(env, router, pki)
    caller = Caller(hello_old)
    caller.start()
    try:
        expect_served(pki, port, "A", "at start")
        check(session_cert(pki, hello_old) == "A", "the first session did not verify certificate A")
        time.sleep(0.3)

        caller.phase("after reload to B")
        pki.install("server_b")
        line = sighup(router, log, True, "SIGHUP with certificate B")
        check("TLS certificates" in line, "the reload line does not name the TLS certificates: %s" % line)
        expect_served(pki, port, "B", "after the reload to B")
        ic_new, hello_new = open_session(env, router, pki)
        try:
            check(session_cert(pki, hello_new) == "B", "a new Ice session after the reload did not get B")
        finally:
            ic_new.destroy()
        check(session_cert(pki, hello_old) == "A",
              "the session from before the reload now shows %s: its connection changed" % session_cert(pki, hello_old))
        time.sleep(0.3)

        refusals = []
        for label, swap in (("garbage certificate file", lambda: pki.replace("server.pem", "not a certificate\n")),
                            ("certificate B with certificate A's key", lambda: pki.install("server_b", key="server_a"))):
            caller.phase("after refused reload: " + label)
            swap()
            refusals.append(sighup(router, log, False, "SIGHUP with a " + label))
            time.sleep(0.2)
            check(router.proc.alive(), "the router died after a %s%s" % (label, router.proc.log_tail()))
            expect_served(pki, port, "B", "after the refused reload (%s)" % label)
            time.sleep(0.3)

        caller.phase("after reload to B again")
        pki.install("server_b")
        sighup(router, log, True, "SIGHUP with certificate B restored")
        expect_served(pki, port, "B", "after B was restored")
        time.sleep(0.3)
    finally:
        caller.stop()
        ic_old.destroy()
    check(caller.error is None, "the session opened before the reloads failed: %s" % caller.error)
    phases = ["before", "after reload to B", "after refused reload: garbage certificate file",
              "after refused reload: certificate B with certificate A's key", "after reload to B again"]
    idle = [p for p in phases if not caller.calls.get(p)]
    check(not idle, "the old session made no call in phase(s) %s: %s" % (idle, caller.calls))
    print("served A, then B after SIGHUP; the old session kept A and made %d calls without an error (%s); "
          "refused: %s" % (sum(caller.calls.values()), ", ".join("%d %s" % (caller.calls[p], p) for p in phases),
                           " | ".join(reason(r, env.dir) for r in refusals)))


def reason(line, tmp):
    """The refusal's reason from its log line, temporary paths shortened."""
    text = line.split("the configuration in force stays: ", 1)[-1].replace(tmp + "/", "")
    return text[:140]


def start_router(env, pki):
    props = pki.router_props()
    props.update({"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30"})
    return env.router("tls-reload", props, server=False, transport="ssl", tls=pki.context())


def probe_glacier2(env, pki):
    """Steps 1 and 2 against glacier2router: prints what it serves after SIGHUP (see docstring)."""
    router = start_router(env, pki)
    ic, hello = open_session(env, router, pki)
    try:
        expect_served(pki, router.client_port, "A", "at start")
        pki.install("server_b")
        os.kill(router.proc.popen.pid, signal.SIGHUP)
        time.sleep(2.0)
        alive = router.proc.alive()
        served = which(pki, served_der(pki.context(), router.client_port)) if alive else None
        works = hello.sayHello("after") == "hello after" if alive else False
        print("glacier2router 2 s after SIGHUP with certificate B installed: %s; new connections get %s; "
              "the old session %s" % ("still running" if alive else "exited (%s)" % router.proc.popen.poll(),
                                      served, "works" if works else "fails"))
    finally:
        ic.destroy()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--router", choices=("moraine", "glacier2"), default="moraine")
    ap.add_argument("--timeout", type=float, default=90.0, help="overall bound in seconds (default 90)")
    ap.add_argument("--keep", action="store_true", help="keep certificates, configuration and logs")
    args = ap.parse_args()
    env = H.Env(args.router, os.path.abspath(args.moraine_bin), keep=args.keep)
    # The overall bound: SIGALRM raises in the main thread, whose finally stops every child.
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(Failure("no result within %.0f s" % args.timeout)))
    signal.alarm(int(args.timeout))
    ok = False
    try:
        pki = Pki(os.path.join(env.dir, "tls"))
        if args.router == "glacier2":
            probe_glacier2(env, pki)
            ok = True
        else:
            t0 = time.monotonic()
            run(env, pki)
            print("(%.1f s)" % (time.monotonic() - t0))
            ok = True
    except (Failure, RuntimeError, OSError, Ice.Exception) as e:
        print("FAIL tls_reload: %s: %s" % (type(e).__name__, e))
    finally:
        signal.alarm(0)
    return env.finish("tls_reload" if args.router == "moraine" else "tls_reload (glacier2router probe)", ok)


if __name__ == "__main__":
    sys.exit(main())
