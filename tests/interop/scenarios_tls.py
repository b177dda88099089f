"""TLS interop scenarios (`ssl` endpoints, IceSSL configuration, createSessionFromSecureConnection),
registered after the topic-service ones.

The routers' property files use the IceSSL plugin's own keys, so the same file serves
glacier2router and moraine-router: Ice.Plugin.IceSSL, IceSSL.DefaultDir, IceSSL.CAs,
IceSSL.CertFile, IceSSL.KeyFile (PEM files) and IceSSL.VerifyPeer. The certificates are made
fresh for each run with the `openssl` command (tls_certs.py) in the run's temporary directory.
Clients and the TLS back end are real Ice 3.7.8 IceSSL communicators. Every expectation was
checked against glacier2router 3.7.8; see README.md, "TLS scenarios".
"""
import contextlib
import json
import os
import socket
import ssl
import struct

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402
import tls_certs  # noqa: E402
from harness import Demo, Failure, check
from scenarios import CallbackI, callback_adapter, callbacks_arrive, expect_raises, recorder, router_prx, scenario, short

SESSION_TIMEOUT = 30


# ---------------------------------------------------------------------------------------------
# Certificates and IceSSL properties

class Certs:
    """The directory made by tls_certs.make, and what the scenarios derive from it."""

    def __init__(self, directory):
        self.dir = directory

    def pem(self, name):
        with open(os.path.join(self.dir, name + ".pem")) as f:
            return f.read()

    def ice_props(self, cert, verify_peer=None):
        """IceSSL properties of a communicator whose certificate is <cert>.pem (None: no
        certificate), trusting the test CA only."""
        props = {"Ice.Plugin.IceSSL": "IceSSL:createIceSSL",
                 "IceSSL.DefaultDir": self.dir,
                 "IceSSL.CAs": "ca.pem"}
        if cert is not None:
            props["IceSSL.CertFile"] = cert + ".pem"
            props["IceSSL.KeyFile"] = cert + "_key.pem"
        if verify_peer is not None:
            props["IceSSL.VerifyPeer"] = str(verify_peer)
        return props

    def probe_context(self):
        """The harness's readiness probe: Python ssl, trusting the test CA (and checking that
        the server's certificate is for 127.0.0.1), presenting client_a's certificate."""
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.path.join(self.dir, "ca.pem"))
        ctx.load_cert_chain(os.path.join(self.dir, "client_a.pem"), os.path.join(self.dir, "client_a_key.pem"))
        return ctx


def certs(env):
    """Made once per run, in <temp dir>/tls."""
    def starter():
        try:
            return Certs(tls_certs.make(os.path.join(env.dir, "tls")))
        except (RuntimeError, OSError) as e:
            raise Failure(str(e))
    return env.start_once(env.__dict__.setdefault("_tls_once", {}), "test certificates (openssl)", starter)


# ---------------------------------------------------------------------------------------------
# Router configurations and the TLS back end

def tls_router(env):
    """Client and server endpoints ssl, VerifyPeer=2, crypt passwords, and the built-in
    accept-everyone SSL verifier."""
    c = certs(env)
    props = c.ice_props("server", verify_peer=2)
    props.update({"Glacier2.CryptPasswords": env.passwords,
                  "Glacier2.SSLPermissionsVerifier": "Glacier2/NullSSLPermissionsVerifier",
                  "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})
    return env.router("tls", props, transport="ssl", tls=c.probe_context())


def ssl_verifier_port(env):
    """peers/ssl_verifier.py, which accepts only the subject CN of client_a."""
    return env.peer("ssl_verifier", args=[tls_certs.CLIENT_A_CN])


def tls_verifier_router(env):
    """Client and server endpoints ssl, VerifyPeer=1 (a client without a certificate may
    connect), Glacier2.SSLPermissionsVerifier = the ssl_verifier peer, no password verifier."""
    c = certs(env)
    props = c.ice_props("server", verify_peer=1)
    props.update({"Glacier2.SSLPermissionsVerifier": "sslverifier:" + H.endpoint(ssl_verifier_port(env)),
                  "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})
    return env.router("tls-verifier", props, transport="ssl", tls=c.probe_context())


def tls_manager_router(env):
    """Client endpoint ssl, VerifyPeer=1, the built-in SSL verifier, and
    Glacier2.SSLSessionManager = the session_manager peer's `sslmanager`."""
    c = certs(env)
    props = c.ice_props("server", verify_peer=1)
    props.update({"Glacier2.SSLPermissionsVerifier": "Glacier2/NullSSLPermissionsVerifier",
                  "Glacier2.SSLSessionManager": "sslmanager:" + H.endpoint(env.peer("session_manager")),
                  "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})
    return env.router("tls-manager", props, transport="ssl", tls=c.probe_context())


def tls_backend(env):
    """peers/backend.py listening on ssl only (Ice.Default.Protocol=ssl), with its own
    certificate and VerifyPeer=2: the router must connect to it over TLS, with a certificate."""
    c = certs(env)
    cfg = os.path.join(env.dir, "backend-tls.cfg")
    if not os.path.exists(cfg):
        props = c.ice_props("backend", verify_peer=2)
        props["Ice.Default.Protocol"] = "ssl"
        H.write_properties(cfg, props)
    return env.peer("backend", args=["--Ice.Config=" + cfg], name="backend-tls", tls=c.probe_context())


# ---------------------------------------------------------------------------------------------
# Helpers

@contextlib.contextmanager
def tls_client(env, router, cert="client_a"):
    """A fresh IceSSL client communicator routed through router, presenting <cert>.pem (None:
    no certificate); yields (communicator, RouterPrx)."""
    with env.communicator(router, extra=certs(env).ice_props(cert)) as ic:
        yield ic, router_prx(ic)


def secure_session(prx, who):
    try:
        sess = prx.createSessionFromSecureConnection()
    except Ice.Exception as e:
        raise Failure("createSessionFromSecureConnection (%s) failed: %s: %s" % (who, type(e).__name__, short(e)))
    check(sess is None, "expected a nil Session proxy without SSLSessionManager, got %s" % sess)


def ssl_info(prx):
    info = prx.ice_getCachedConnection().getInfo()
    check(isinstance(info, Ice.SSLConnectionInfo), "client connection is not TLS: %s" % type(info).__name__)
    return info


def hello_via(ic, port, transport="tcp"):
    return Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello:" + H.endpoint(port, transport)))


def check_ssl_endpoints(prx, port, what):
    """prx has exactly one endpoint: ssl, at port."""
    def port_of(info):  # an SSLEndpointInfo's port is on the TCPEndpointInfo it wraps
        while not hasattr(info, "port") and info.underlying is not None:
            info = info.underlying
        return getattr(info, "port", None)
    eps = [(e.getInfo().type(), port_of(e.getInfo())) for e in prx.ice_getEndpoints()]
    check(eps == [(Ice.SSLEndpointType, port)], "%s endpoints %s, expected [ssl port %d]" % (what, eps, port))


def tls_records(data):
    """Splits data into TLS records [(content type, payload)]; None if it is not a sequence
    of whole TLS records."""
    records = []
    while data:
        if len(data) < 5 or data[1] != 3:
            return None
        size = struct.unpack(">H", data[3:5])[0]
        if len(data) < 5 + size:
            return None
        records.append((data[0], data[5:5 + size]))
        data = data[5 + size:]
    return records


def verifier_calls(rec, since):
    return [json.loads(line) for line in rec.events()[since:]]


# ---------------------------------------------------------------------------------------------
# Scenarios

@scenario
def tls_session_null_verifier(env):
    """createSessionFromSecureConnection with Glacier2/NullSSLPermissionsVerifier, then a
    routed twoway call to a tcp back end."""
    router = tls_router(env)
    c = certs(env)
    with tls_client(env, router) as (ic, prx):
        secure_session(prx, "client_a")
        info = ssl_info(prx)
        check(info.cipher, "empty cipher on the client's TLS connection")
        # The router presents IceSSL.CertFile (the client sees the chain it verified).
        check(info.certs and info.certs[0] == c.pem("server"),
              "router's certificate is not server.pem (chain of %d)" % len(info.certs))
        check(hello_via(ic, env.backend()).sayHello("tls") == "hello tls", "routed call over TLS failed")
        e = expect_raises(Glacier2.CannotCreateSessionException, prx.createSessionFromSecureConnection,
                          "second createSessionFromSecureConnection")
        check(e.reason == "session exists", "reason %r, expected 'session exists'" % e.reason)
        check(prx.getSessionTimeout() == SESSION_TIMEOUT, "getSessionTimeout() = %s" % prx.getSessionTimeout())
        check(prx.getCategoryForClient(), "getCategoryForClient() is empty")
        check_ssl_endpoints(prx.getServerProxy(), router.server_port, "getServerProxy()")
        return "cipher %s" % info.cipher


@scenario
def tls_session_external_verifier(env):
    """Glacier2.SSLPermissionsVerifier is a Python peer: what it receives, and its refusals."""
    router = tls_verifier_router(env)
    c = certs(env)
    with env.communicator() as plain:
        rec = recorder(plain, ssl_verifier_port(env))
        since = len(rec.events())
        with tls_client(env, router, "client_a") as (ic, prx):
            secure_session(prx, "client_a")
            info = ssl_info(prx)
            client_port = info.underlying.localPort
            check(hello_via(ic, env.backend()).sayHello("v") == "hello v", "routed call failed")
        calls = verifier_calls(rec, since)
        check(len(calls) == 1, "verifier called %d times for one session" % len(calls))
        got = calls[0]
        check(got["cn"] == tls_certs.CLIENT_A_CN, "verifier saw subject CN %r" % got["cn"])
        # The verified chain, leaf first, CA included, each PEM as openssl writes it.
        expected = [c.pem("client_a"), c.pem("ca")]
        check(got["certs"] == expected,
              "certs: %d entries, leaf %s, CA %s" % (len(got["certs"]),
                                                     "ok" if got["certs"][:1] == expected[:1] else "differs",
                                                     "ok" if got["certs"][1:2] == expected[1:] else "differs"))
        check((got["remoteHost"], got["remotePort"]) == (H.HOST, client_port),
              "remote %s:%s, expected the client's %s:%d" % (got["remoteHost"], got["remotePort"], H.HOST, client_port))
        check((got["localHost"], got["localPort"]) == (H.HOST, router.client_port),
              "local %s:%s, expected %s:%d" % (got["localHost"], got["localPort"], H.HOST, router.client_port))
        check(got["cipher"] and got["cipher"] == info.cipher,
              "cipher %r, the client negotiated %r" % (got["cipher"], info.cipher))

        # Same CA, another subject: the verifier's refusal reaches the client unchanged, and the
        # connection has no session (a routed call makes the router close it).
        since = len(rec.events())
        with tls_client(env, router, "client_b") as (ic, prx):
            e = expect_raises(Glacier2.PermissionDeniedException, prx.createSessionFromSecureConnection,
                              "createSessionFromSecureConnection with CN " + tls_certs.CLIENT_B_CN)
            check(e.reason == "ssl verifier refused " + tls_certs.CLIENT_B_CN, "reason %r" % e.reason)
            expect_raises(Ice.ConnectionLostException, lambda: hello_via(ic, env.backend()).sayHello("x"),
                          "routed call after the refusal")
        calls = verifier_calls(rec, since)
        check([x["cn"] for x in calls] == [tls_certs.CLIENT_B_CN], "verifier calls for client_b: %s"
              % [x["cn"] for x in calls])

        # VerifyPeer=1: a client without a certificate connects; glacier2router still asks the
        # verifier, with an empty chain.
        since = len(rec.events())
        with tls_client(env, router, None) as (ic, prx):
            e = expect_raises(Glacier2.PermissionDeniedException, prx.createSessionFromSecureConnection,
                              "createSessionFromSecureConnection without a client certificate")
            check(e.reason == "ssl verifier refused no certificate", "reason %r" % e.reason)
        calls = verifier_calls(rec, since)
        check(len(calls) == 1 and calls[0]["certs"] == [] and calls[0]["cipher"],
              "verifier calls for a client without a certificate: %s"
              % [(len(x["certs"]), x["cipher"]) for x in calls])
    return "verifier saw %s:%d -> %s:%d, %s, %d certs" % (got["remoteHost"], got["remotePort"], got["localHost"],
                                                          got["localPort"], got["cipher"], len(got["certs"]))


@scenario
def tls_password_session(env):
    """createSession with the crypt passwords, over TLS."""
    router = tls_router(env)
    with tls_client(env, router) as (ic, prx):
        e = expect_raises(Glacier2.PermissionDeniedException, lambda: prx.createSession("alice", "wrong"),
                          "createSession(alice, wrong) over TLS")
        check(e.reason == "permission denied", "reason %r, expected 'permission denied'" % e.reason)
        check(prx.createSession("alice", "secret") is None, "expected a nil Session proxy")
        ssl_info(prx)
        check(hello_via(ic, env.backend()).sayHello("pw") == "hello pw", "routed call in a password session failed")


@scenario
def tls_foreign_ca_refused(env):
    """A certificate from another CA (with client_a's subject, which the ssl_verifier peer
    would accept) never gets a session: the connection fails (any Ice local exception), and
    the SSL verifier is never asked."""
    seen = []
    with env.communicator() as plain:
        rec = recorder(plain, ssl_verifier_port(env))
        for router, attempts in ((tls_router(env), ("secure", "password")), (tls_verifier_router(env), ("secure",))):
            since = len(rec.events())
            with tls_client(env, router, "foreign") as (ic, prx):
                for how in attempts:
                    call = (prx.createSessionFromSecureConnection if how == "secure"
                            else lambda: prx.createSession("alice", "secret"))
                    e = expect_raises(Ice.LocalException, call,
                                      "%s session with a foreign-CA certificate (router %s)" % (how, router.name))
                    seen.append("%s %s: %s" % (router.name, how, type(e).__name__))
            check(len(rec.events()) == since, "router %s asked the SSL verifier about a foreign-CA certificate"
                  % router.name)
            # The router still serves a good client.
            with tls_client(env, router) as (ic, prx):
                secure_session(prx, "client_a after the foreign client")
    return "; ".join(seen)


@scenario
def tls_plain_tcp_refused(env):
    """Plain Ice over TCP to the ssl client and server endpoints: the router never speaks Ice
    (no validate connection); it closes the connection (sending at most TLS alerts)."""
    router = tls_router(env)
    seen = []
    for port, what in ((router.client_port, "client"), (router.server_port, "server")):
        with socket.create_connection((H.HOST, port), timeout=3.0) as s:
            # A TLS server waits for the ClientHello; an Ice tcp server would send its
            # validate connection at once.
            s.settimeout(0.3)
            try:
                early = s.recv(100)
            except socket.timeout:
                early = None
            check(early is None, "%s endpoint sent %r to a plain TCP client before it wrote anything"
                  % (what, early))
            s.settimeout(3.0)
            data, end = b"", None
            try:
                s.sendall(H.VALIDATE + H.request(1, "router", "Glacier2", "getSessionTimeout", mode=1))
                while end is None:
                    chunk = s.recv(4096)
                    data += chunk
                    end = "closed" if not chunk else None
            except socket.timeout:
                end = "timeout"
            except (ConnectionResetError, BrokenPipeError):
                end = "reset"
            check(b"IceP" not in data, "%s endpoint answered plain Ice: %s" % (what, data[:32].hex()))
            records = tls_records(data)
            check(records is not None and all(t == 21 for t, _ in records),
                  "%s endpoint sent non-alert bytes: %s" % (what, data[:32].hex()))
            check(end != "timeout", "%s endpoint kept the plain TCP connection open for 3 s" % what)
            seen.append("%s: %s%s" % (what, end, ", %d alert(s)" % len(records) if records else ""))
    return "; ".join(seen)


@scenario
def tls_callback(env):
    """Callbacks over TLS: ssl server endpoint, and a back end that listens on ssl only."""
    router = tls_router(env)
    port = tls_backend(env)
    with tls_client(env, router) as (ic, prx):
        secure_session(prx, "client_a")
        hello = hello_via(ic, port, "ssl")
        check(hello.sayHello("tls-backend") == "hello tls-backend", "routed call to the ssl back end failed")
        servant = CallbackI()
        cb = callback_adapter(ic, prx, servant)
        check_ssl_endpoints(cb, router.server_port, "callback proxy")
        callbacks_arrive(hello, cb, servant, "TLS")


@scenario
def tls_ssl_session_manager(env):
    """createSessionFromSecureConnection with Glacier2.SSLSessionManager: the manager gets the
    SSLInfo and a SessionControl, its Session* goes to the client, destroySession reaches it."""
    router = tls_manager_router(env)
    with env.communicator() as plain:
        rec = recorder(plain, env.peer("session_manager"))
        with tls_client(env, router) as (ic, prx):
            try:
                sess = prx.createSessionFromSecureConnection()
            except Ice.Exception as e:
                raise Failure("createSessionFromSecureConnection failed: %s: %s" % (type(e).__name__, short(e)))
            cn = tls_certs.CLIENT_A_CN
            check(sess is not None and sess.ice_getIdentity() == Ice.Identity(cn, "session"),
                  "Session* is %s, expected the manager's session/%s" % (sess, cn))
            created = [e for e in rec.events() if e.startswith("sslcreate " + cn + " ")]
            check(created, "the SSLSessionManager recorded no create for %s: %s" % (cn, rec.events()[-3:]))
            check(" control=1 " in created[-1] and " certs=2 " in created[-1] and "cipher=TLS_" in created[-1],
                  "create got %r, expected a SessionControl, 2 certificates and a cipher" % created[-1])
            check(hello_via(ic, env.backend()).sayHello("m") == "hello m", "routed call in the session failed")
            prx.destroySession()
            check(H.wait_until(lambda: "destroy " + cn in rec.events(), 5.0, 0.1),
                  "the manager's Session::destroy was not called after destroySession")
        return created[-1]
