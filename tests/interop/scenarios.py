"""Interop scenarios: each one drives real Ice 3.7 clients (or hand-written bytes) through the
router under test and raises harness.Failure when the router does not behave like
glacier2router 3.7.8. Every expectation below was checked against the real glacier2router
(`run.py --router glacier2`); see README.md for where that differs from docs/glacier2.md.

A scenario is a function taking the harness.Env; registration order is run order.
"""
import contextlib
import os
import struct
import subprocess
import threading
import time
import uuid

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402
from harness import Demo, Failure, check

SCENARIOS = []


def scenario(fn):
    SCENARIOS.append((fn.__name__, fn))
    return fn


# ---------------------------------------------------------------------------------------------
# Router configurations (one router process each, started on first use)

SESSION_TIMEOUT = 30
SHORT_TIMEOUT = 2


def main_router(env):
    """Crypt passwords, SessionTimeout 30, client and server endpoints."""
    return env.router("main", {"Glacier2.CryptPasswords": env.passwords,
                               "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})


def verifier_router(env):
    return env.router("verifier", {
        "Glacier2.PermissionsVerifier": "verifier:" + H.endpoint(env.peer("verifier")),
        "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})


def manager_router(env):
    # The verifier peer accepts any "<user>"/"<user>-ok", so each scenario can use its own
    # user names and read its own lines from the shared session manager's record.
    return env.router("manager", {
        "Glacier2.PermissionsVerifier": "verifier:" + H.endpoint(env.peer("verifier")),
        "Glacier2.SessionManager": "manager:" + H.endpoint(env.peer("session_manager")),
        "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})


def expiry_router(env):
    return env.router("expiry", {"Glacier2.CryptPasswords": env.passwords,
                                 "Glacier2.SessionTimeout": str(SHORT_TIMEOUT)}, server=False)


def category_filter_router(env):
    return env.router("filter-category", {"Glacier2.CryptPasswords": env.passwords,
                                          "Glacier2.Filter.Category.Accept": "allowed"})


def address_filter_router(env):
    return env.router("filter-address", {"Glacier2.CryptPasswords": env.passwords,
                                         "Glacier2.Filter.Address.Reject": "127.0.0.1"})


# ---------------------------------------------------------------------------------------------
# Helpers

def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def short(e):
    return " ".join(str(e).split())[:200]


def expect_raises(exc_type, fn, what):
    """Runs fn(); returns the exception if it is an exc_type, fails otherwise."""
    try:
        fn()
    except exc_type as e:
        return e
    except Exception as e:  # noqa: BLE001  (any other outcome is the failure we report)
        raise Failure("%s: expected %s, got %s: %s" % (what, exc_type.__name__, type(e).__name__, short(e)))
    raise Failure("%s: expected %s, but the call succeeded" % (what, exc_type.__name__))


def router_prx(ic):
    return Glacier2.RouterPrx.uncheckedCast(ic.getDefaultRouter())


def hello_prx(env, ic, name="hello"):
    return Demo.HelloPrx.uncheckedCast(ic.stringToProxy(env.hello_proxy(name)))


def recorder(ic, port):
    # Peers are reached directly, never through the router.
    return Demo.RecorderPrx.uncheckedCast(ic.stringToProxy("recorder:" + H.endpoint(port))).ice_router(None)


@contextlib.contextmanager
def session(env, router, user="alice", password="secret"):
    """A fresh client communicator with a session on router; yields (communicator, RouterPrx)."""
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        try:
            prx.createSession(user, password)
        except Ice.Exception as e:
            raise Failure("createSession(%s) failed: %s: %s" % (user, type(e).__name__, short(e)))
        yield ic, prx


class CallbackI(Demo.Callback):
    """Records pings; wait_for blocks until a given message arrived."""

    def __init__(self):
        self._cond = threading.Condition()
        self.got = []

    def ping(self, msg, current):
        with self._cond:
            self.got.append(msg)
            self._cond.notify_all()

    def wait_for(self, msg, timeout=5.0):
        with self._cond:
            return self._cond.wait_for(lambda: msg in self.got, timeout)


def callbacks_arrive(hello, cb, servant, tag):
    """The back end calls cb back twoway (callMeBack) and oneway (callMeBackOneway); both must
    arrive at servant. tag names the transport in the messages and in a failure."""
    hello.callMeBack(cb, "ring-" + tag)
    check(servant.wait_for("ring-" + tag), "twoway callback over %s not received (got %s)" % (tag, servant.got))
    hello.callMeBackOneway(cb, "knock-" + tag)
    check(servant.wait_for("knock-" + tag), "oneway callback over %s not received (got %s)" % (tag, servant.got))


def callback_adapter(ic, prx, servant, name="cb"):
    """createObjectAdapterWithRouter + a servant in the session's category."""
    category = prx.getCategoryForClient()
    adapter = ic.createObjectAdapterWithRouter(unique("Cb"), prx)
    cb = Demo.CallbackPrx.uncheckedCast(adapter.add(servant, Ice.Identity(name, category)))
    adapter.activate()
    return cb


def raw_create_session(conn, user="alice", password="secret", rid=1):
    conn.send(H.request(rid, "router", "Glacier2", "createSession",
                        H.ice_string(user) + H.ice_string(password)))
    msg = conn.read()
    check(isinstance(msg, bytes), "raw createSession: no reply (%s)" % msg)
    check(H.reply_status(msg) == (rid, 0), "raw createSession: reply %s" % msg.hex())


def expect_closed_silently(conn, what, timeout=3.0):
    """The router must close the socket without sending anything (forceful close)."""
    closed, seen = conn.wait_closed(timeout)
    check(closed, "%s: connection not closed within %.0f s (%s)"
          % (what, timeout, seen.hex() if isinstance(seen, bytes) else seen))


def check_router_serves(env, router):
    """A new client can still create a session and make a routed call."""
    with session(env, router) as (ic, _):
        check(hello_prx(env, ic).sayHello("again") == "hello again", "router stopped serving")


# ---------------------------------------------------------------------------------------------
# 1-3: session creation

@scenario
def create_session_ok(env):
    router = main_router(env)
    with env.communicator(router) as ic:
        prx = Glacier2.RouterPrx.checkedCast(ic.getDefaultRouter())  # ice_isA before a session
        check(prx is not None, "checkedCast of Glacier2/router returned nil")
        sess = prx.createSession("alice", "secret")
        check(sess is None, "expected a nil Session proxy without SessionManager, got %s" % sess)
        check(prx.getSessionTimeout() == SESSION_TIMEOUT, "getSessionTimeout() = %s" % prx.getSessionTimeout())
        check(prx.getACMTimeout() == SESSION_TIMEOUT, "getACMTimeout() = %s" % prx.getACMTimeout())
        category = prx.getCategoryForClient()
        check(category, "getCategoryForClient() is empty although Server.Endpoints is set")
        # The server proxy is what callback adapters publish: session category + server endpoint.
        server = prx.getServerProxy()
        check(server is not None, "getServerProxy() returned nil")
        check(server.ice_getIdentity().category == category,
              "server proxy category %r != %r" % (server.ice_getIdentity().category, category))
        ports = [e.getInfo().port for e in server.ice_getEndpoints()]
        check(ports == [router.server_port], "server proxy endpoints %s, expected port %d" % (ports, router.server_port))


@scenario
def create_session_denied(env):
    with env.communicator(main_router(env)) as ic:
        prx = router_prx(ic)
        for user, pw in (("alice", "wrong"), ("mallory", "secret")):
            e = expect_raises(Glacier2.PermissionDeniedException, lambda: prx.createSession(user, pw),
                              "createSession(%s, %s)" % (user, pw))
            check(e.reason == "permission denied", "reason %r, expected 'permission denied'" % e.reason)
        first = prx.ice_getCachedConnection()
        prx.createSession("alice", "secret")
        check(prx.ice_getCachedConnection() == first, "the router closed the connection after a denial")


@scenario
def second_create_session(env):
    with session(env, main_router(env)) as (ic, prx):
        e = expect_raises(Glacier2.CannotCreateSessionException, lambda: prx.createSession("alice", "secret"),
                          "second createSession")
        check(e.reason == "session exists", "reason %r, expected 'session exists'" % e.reason)
        check(hello_prx(env, ic).sayHello("still") == "hello still", "first session broken by the second attempt")


# ---------------------------------------------------------------------------------------------
# 4-8: routed calls

@scenario
def twoway(env):
    with session(env, main_router(env)) as (ic, _):
        hello = hello_prx(env, ic)
        for name in ("bob", "carol", "", "ünïcødé", "dave"):
            got = hello.sayHello(name)
            check(got == "hello " + name, "sayHello(%r) = %r" % (name, got))
        hello10 = hello.ice_encodingVersion(Ice.Encoding_1_0)
        check(hello10.sayHello("old") == "hello old", "encoding 1.0 sayHello failed")


@scenario
def user_exception(env):
    with session(env, main_router(env)) as (ic, _):
        hello = hello_prx(env, ic)
        for enc, prx in (("1.1", hello), ("1.0", hello.ice_encodingVersion(Ice.Encoding_1_0))):
            e = expect_raises(Demo.Boom, lambda: prx.fail("kaboom"), "fail() with encoding " + enc)
            check(e.why == "kaboom", "Boom.why = %r with encoding %s" % (e.why, enc))


@scenario
def oneway(env):
    n = 10
    tag = unique("note")
    with session(env, main_router(env)) as (ic, _):
        hello = hello_prx(env, ic)
        ow = hello.ice_oneway()
        for _ in range(n):
            ow.note(tag)
        batch = hello.ice_batchOneway()
        for _ in range(n):
            batch.note(tag)
        batch.ice_flushBatchRequests()
        # Oneways and the twoway count may be dispatched out of order on the back end: poll.
        got = H.wait_until(lambda: hello.countOf(tag) == 2 * n, 5.0)
        count = hello.countOf(tag)
        check(got, "back end saw %d of %d oneway+batch notes" % (count, 2 * n))
        time.sleep(0.2)
        check(hello.countOf(tag) == 2 * n, "notes duplicated: %d" % hello.countOf(tag))


@scenario
def callback(env):
    router = main_router(env)
    with session(env, router) as (ic, prx):
        servant = CallbackI()
        cb = callback_adapter(ic, prx, servant)
        hello = hello_prx(env, ic)
        hello.callMeBack(cb, "ring")
        check(servant.wait_for("ring"), "twoway callback not received (got %s)" % servant.got)
        hello.callMeBackOneway(cb, "ring-oneway")
        check(servant.wait_for("ring-oneway"), "oneway callback not received (got %s)" % servant.got)
        hello.ice_encodingVersion(Ice.Encoding_1_0).callMeBack(cb.ice_encodingVersion(Ice.Encoding_1_0), "ring-1.0")
        check(servant.wait_for("ring-1.0"), "encoding 1.0 callback not received (got %s)" % servant.got)
        # A callback to a category that is no session's: the router answers ObjectNotExist,
        # which the back end's dispatch passes on to us.
        bogus = Demo.CallbackPrx.uncheckedCast(
            ic.stringToProxy("nosuchcategory/cb:" + H.endpoint(router.server_port)))
        e = expect_raises(Ice.ObjectNotExistException, lambda: hello.callMeBack(bogus, "x"),
                          "callback to an unknown category")
        check(e.id.category == "nosuchcategory" and e.operation == "ping",
              "ObjectNotExist for %s/%s op %s" % (e.id.category, e.id.name, e.operation))


@scenario
def unknown_target(env):
    with session(env, main_router(env)) as (ic, _):
        e = expect_raises(Ice.ObjectNotExistException, lambda: hello_prx(env, ic, "nobody").sayHello("x"),
                          "call to an identity the back end does not have")
        check(e.id.name == "nobody" and e.operation == "sayHello",
              "ObjectNotExist carries %s / %s" % (e.id.name, e.operation))
        # glacier2router reports a back end it cannot connect to as UnknownLocalException whose
        # text names ConnectionRefusedException (the source-file prefix is not checked).
        dead = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("down:" + H.endpoint(H.free_port())))
        e = expect_raises(Ice.UnknownLocalException, lambda: dead.sayHello("x"), "call to a dead port")
        check("refused" in e.unknown.lower(), "UnknownLocalException text %r does not say refused" % e.unknown)
        check(hello_prx(env, ic).sayHello("ok") == "hello ok", "session broken after the failures")


# ---------------------------------------------------------------------------------------------
# 9-11: session life cycle

@scenario
def request_before_session(env):
    router = main_router(env)
    conn = H.RawConn(router.client_port)
    # Router operations that need no session are answered on this connection...
    conn.send(H.request(1, "router", "Glacier2", "getSessionTimeout", mode=1))
    msg = conn.read()
    check(isinstance(msg, bytes) and H.reply_status(msg) == (1, 0),
          "getSessionTimeout before a session: %s" % (msg.hex() if isinstance(msg, bytes) else msg))
    value = struct.unpack("<q", msg[25:33])[0] if len(msg) >= 33 else None
    check(value == SESSION_TIMEOUT, "getSessionTimeout before a session returned %s" % value)
    # ...but a routed request closes it, without a reply.
    conn.send(H.request(2, "hello", "", "sayHello", H.ice_string("bob")))
    expect_closed_silently(conn, "routed request before createSession")
    conn.close()
    for op in ("getClientProxy", "getCategoryForClient"):  # the latter: Server.Endpoints is set
        conn = H.RawConn(router.client_port)
        conn.send(H.request(1, "router", "Glacier2", op, mode=1))
        expect_closed_silently(conn, op + " before createSession")
        conn.close()
    check_router_serves(env, router)


@scenario
def destroy_session(env):
    router = main_router(env)
    with session(env, router) as (ic, prx):
        hello = hello_prx(env, ic)
        check(hello.sayHello("a") == "hello a", "routed call before destroy failed")
        first = prx.ice_getCachedConnection()
        prx.destroySession()
        expect_raises(Ice.ConnectionLostException, lambda: hello.sayHello("b"), "routed call after destroySession")
        # Same user again, same communicator: Ice opens a new connection; the new session's
        # routing table is empty, so the router must make the client re-add `hello`.
        prx.createSession("alice", "secret")
        check(prx.ice_getCachedConnection() != first, "the new session reused the old connection")
        check(hello.sayHello("c") == "hello c", "routed call in the new session failed")
        prx.destroySession()
        # Not Glacier2.SessionNotExistException: see harness._import_glacier2.
        expect_raises(H.SessionNotExistException, prx.destroySession, "destroySession without a session")


@scenario
def connection_loss_frees_session(env):
    router = manager_router(env)
    user = unique("lost")
    with env.communicator() as plain:
        rec = recorder(plain, env.peer("session_manager"))
        with session(env, router, user, user + "-ok") as (ic, prx):
            time.sleep(0.3)
            check("destroy " + user not in rec.events(), "session destroyed while the client was connected")
            prx.ice_getCachedConnection().close(Ice.ConnectionClose.Forcefully)
            start = time.monotonic()
            freed = H.wait_until(lambda: "destroy " + user in rec.events(), 5.0, 0.05)
            check(freed, "SessionManager's Session::destroy not called within 5 s of the connection loss")
            return "Session::destroy %.2f s after the close" % (time.monotonic() - start)


# ---------------------------------------------------------------------------------------------
# 12-13: PermissionsVerifier and SessionManager

@scenario
def permissions_verifier(env):
    router = verifier_router(env)
    user = unique("bob")
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        e = expect_raises(Glacier2.PermissionDeniedException, lambda: prx.createSession(user, "nope"),
                          "createSession with a password the verifier refuses")
        # glacier2router passes the verifier's out-reason through unchanged.
        check(e.reason == "verifier refused " + user, "reason %r" % e.reason)
        thrower = "throw-" + user
        e = expect_raises(Glacier2.PermissionDeniedException, lambda: prx.createSession(thrower, "x"),
                          "createSession when the verifier throws")
        check(e.reason == "verifier threw for " + thrower, "reason of a thrown denial %r" % e.reason)
        check(prx.createSession(user, user + "-ok") is None, "accepted session should be nil")
    with env.communicator() as plain:
        events = recorder(plain, env.peer("verifier")).events()
        for line in ("check %s nope" % user, "check %s x" % thrower, "check %s %s-ok" % (user, user)):
            check(line in events, "verifier did not record %r" % line)


@scenario
def session_manager(env):
    router = manager_router(env)
    user = unique("dave")
    with env.communicator() as plain:
        rec = recorder(plain, env.peer("session_manager"))
        with env.communicator(router) as ic:
            prx = router_prx(ic)
            sess = prx.createSession(user, user + "-ok")
            check(sess is not None, "createSession returned nil with a SessionManager")
            check(sess.ice_getIdentity() == Ice.Identity(user, "session"),
                  "session proxy %s is not the manager's" % Ice.identityToString(sess.ice_getIdentity()))
            check("create %s control=1" % user in rec.events(),
                  "manager did not record create(%s) with a SessionControl: %s" % (user, rec.events()[-3:]))
            check(hello_prx(env, ic).sayHello("s") == "hello s", "routed call in a managed session failed")
            check("destroy " + user not in rec.events(), "Session::destroy called before destroySession")
            prx.destroySession()
            check(H.wait_until(lambda: "destroy " + user in rec.events(), 5.0, 0.1),
                  "manager did not see Session::destroy after destroySession")
        refused = "refuse-" + user
        with env.communicator(router) as ic:
            e = expect_raises(Glacier2.CannotCreateSessionException,
                              lambda: router_prx(ic).createSession(refused, refused + "-ok"),
                              "createSession refused by the manager")
            check(e.reason == "manager refused " + refused, "reason %r" % e.reason)


# ---------------------------------------------------------------------------------------------
# 14: session expiry

def _idle_raw_session(port, result):
    """Creates a session by hand, stays silent and measures when the router drops us."""
    try:
        conn = H.RawConn(port)
        raw_create_session(conn, "alice", "secret")
        start = time.monotonic()
        closed, seen = conn.wait_closed(2 * SHORT_TIMEOUT + 3)
        result["raw"] = (closed, time.monotonic() - start, seen)
        conn.close()
    except Exception as e:  # noqa: BLE001  (reported by the main thread)
        result["raw"] = e


def _idle_ice_session(env, router, result):
    """An Ice client that creates a session and goes quiet: its next call must fail."""
    try:
        with session(env, router, "bob", "builder") as (ic, prx):
            hello = hello_prx(env, ic)
            hello.sayHello("x")
            time.sleep(2 * SHORT_TIMEOUT + 0.5)
            try:
                hello.sayHello("late")
                result["ice"] = "idle client's call succeeded after %d s" % (2 * SHORT_TIMEOUT + 0.5)
            except Ice.ConnectionLostException:
                prx.createSession("bob", "builder")  # a new session is needed, and works
                result["ice"] = "ok" if hello.sayHello("new") == "hello new" else "new session broken"
    except Exception as e:  # noqa: BLE001
        result["ice"] = "%s: %s" % (type(e).__name__, short(e))


@scenario
def session_expiry(env):
    router = expiry_router(env)
    env.backend()
    result = {}
    threads = [threading.Thread(target=_idle_raw_session, args=(router.client_port, result), daemon=True),
               threading.Thread(target=_idle_ice_session, args=(env, router, result), daemon=True)]
    for t in threads:
        t.start()
    # Meanwhile a busy client must keep its session for well over the timeout.
    with session(env, router, "alice", "secret") as (ic, prx):
        hello = hello_prx(env, ic)
        conn = None
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            check(hello.sayHello("busy") == "hello busy", "busy client's call failed")
            conn = conn or prx.ice_getCachedConnection()
            check(prx.ice_getCachedConnection() == conn, "busy client's connection was replaced")
            time.sleep(0.5)
    for t in threads:
        t.join(2 * SHORT_TIMEOUT + 10)
    raw = result.get("raw")
    if isinstance(raw, Exception):
        raise Failure("raw idle client: %s" % short(raw))
    closed, elapsed, seen = raw
    check(closed, "idle raw session not closed within %d s (%s)" % (2 * SHORT_TIMEOUT + 3, seen))
    low, high = 0.9 * SHORT_TIMEOUT, 2 * SHORT_TIMEOUT + 0.5  # glacier2router: 1.5x
    check(low <= elapsed <= high, "idle session closed after %.1f s, expected %.1f..%.1f s" % (elapsed, low, high))
    check(result.get("ice") == "ok", "idle Ice client: %s" % result.get("ice"))
    return "idle connection closed after %.1f s" % elapsed


# ---------------------------------------------------------------------------------------------
# 15-16: filters and hostile input

@scenario
def filters(env):
    with session(env, category_filter_router(env), "bob", "builder") as (ic, prx):
        first = prx.ice_getCachedConnection()
        e = expect_raises(Ice.ObjectNotExistException, lambda: hello_prx(env, ic).sayHello("x"),
                          "call outside Filter.Category.Accept")
        # The rejection names the real operation (not ice_add_proxy, which would make Ice retry).
        check(e.id.name == "hello" and e.operation == "sayHello",
              "ObjectNotExist carries %s / %s" % (e.id.name, e.operation))
        check(hello_prx(env, ic, "allowed/hello").sayHello("y") == "hello y", "accepted category rejected")
        check(prx.ice_getCachedConnection() == first, "the router closed the connection after a rejection")
    with session(env, address_filter_router(env), "bob", "builder") as (ic, _):
        expect_raises(Ice.ConnectionLostException, lambda: hello_prx(env, ic).sayHello("x"),
                      "call to an address in Filter.Address.Reject")


# Each case is sent on its own fresh connection; the router must drop it silently.
GARBAGE = [
    ("bad magic", b"XXXX\x01\x00\x01\x00\x00\x00\x0e\x00\x00\x00"),
    ("oversize header (1 MiB + 1)", H.header(0, 1024 * 1024 + 1)),
    ("size < 14", H.header(0, 10)),
    ("negative size", H.header(0, -5)),
    ("unknown message type", H.header(9, 14)),
    ("protocol 9.9", b"IceP\x09\x09\x01\x00\x00\x00\x0e\x00\x00\x00"),
    ("truncated request", H.header(0, 20) + b"\x01\x00\x00\x00\x05h"),
    ("random bytes", b"\x00" + os.urandom(4095)),
]


@scenario
def garbage(env):
    router = main_router(env)
    # Before a session and inside one (where a request is no longer rejected for lacking one).
    for in_session in (False, True):
        for what, data in GARBAGE:
            conn = H.RawConn(router.client_port)
            if in_session:
                raw_create_session(conn)
            try:
                conn.send(data)
            except OSError:
                pass  # already reset by the router: that is a close too
            expect_closed_silently(conn, what + (" in a session" if in_session else ""))
            conn.close()
    check_router_serves(env, router)


# ---------------------------------------------------------------------------------------------
# 17: a C++ client

@scenario
def cpp_client(env):
    if env.cpp_build_dir is None:
        raise H.Skip("--no-cpp")
    exe = env.build_cpp_client()
    router = main_router(env)
    cmd = [exe, router.proxy, env.hello_proxy(), "alice", "secret"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise Failure("C++ client did not finish within 30 s")
    check(out.returncode == 0, "C++ client exit %d: %s" % (out.returncode, short(out.stdout + out.stderr)))
    for line in ("session ok", "hello cpp", "boom kaboom", "callback ring"):
        check(line in out.stdout.splitlines(), "C++ client did not print %r: %s" % (line, short(out.stdout)))


# ---------------------------------------------------------------------------------------------
# Beyond the brief's list: behaviour a drop-in replacement must also match.

@scenario
def session_control(env):
    """The SessionManager uses the SessionControl proxy: getSessionTimeout and categories().add
    restrict what the client may reach."""
    router = manager_router(env)
    user = unique("ctl-erin")
    with env.communicator() as plain:
        rec = recorder(plain, env.peer("session_manager"))
        with session(env, router, user, user + "-ok") as (ic, _):
            events = rec.events()
            check("create %s control=1" % user in events, "create() got no SessionControl: %s" % events[-2:])
            check("timeout %s %d" % (user, SESSION_TIMEOUT) in events,
                  "SessionControl.getSessionTimeout not %d: %s" % (SESSION_TIMEOUT, events[-3:]))
            check("categories %s allowed" % user in events, "categories().get() after add: %s" % events[-3:])
            e = expect_raises(Ice.ObjectNotExistException, lambda: hello_prx(env, ic).sayHello("x"),
                              "call outside the categories the SessionControl allowed")
            check(e.operation == "sayHello", "rejection operation %r" % e.operation)
            check(hello_prx(env, ic, "allowed/hello").sayHello("y") == "hello y", "allowed category rejected")


@scenario
def callback_two_sessions(env):
    """Two sessions get distinct categories and each callback reaches its own client."""
    router = main_router(env)
    with session(env, router) as (ic1, prx1), session(env, router, "bob", "builder") as (ic2, prx2):
        s1, s2 = CallbackI(), CallbackI()
        cb1, cb2 = callback_adapter(ic1, prx1, s1), callback_adapter(ic2, prx2, s2)
        check(cb1.ice_getIdentity().category != cb2.ice_getIdentity().category, "two sessions share a category")
        hello_prx(env, ic1).callMeBack(cb2, "for-2")
        hello_prx(env, ic2).callMeBack(cb1, "for-1")
        check(s1.got == ["for-1"] and s2.got == ["for-2"], "callbacks crossed: 1 got %s, 2 got %s" % (s1.got, s2.got))


@scenario
def compression(env):
    with session(env, main_router(env)) as (ic, _):
        hello = hello_prx(env, ic).ice_compress(True)
        for name in ("z" * 400, "s"):  # >= 100 bytes is compressed, smaller is not
            check(hello.sayHello(name) == "hello " + name, "compressed sayHello(%d chars) failed" % len(name))


@scenario
def large_message(env):
    with session(env, main_router(env)) as (ic, _):
        name = "x" * 500000  # about half of the default Ice.MessageSizeMax
        check(hello_prx(env, ic).sayHello(name) == "hello " + name, "large sayHello failed")


@scenario
def context_not_forwarded(env):
    """Glacier2.Client.ForwardContext defaults to 0: the back end sees no request context."""
    with session(env, main_router(env)) as (ic, _):
        hello = hello_prx(env, ic)
        hello.sayHello("ctx", {"k": "v"})
        ctx = hello.lastContext()
        check(ctx == {}, "back end received context %s" % ctx)


@scenario
def router_finder(env):
    """Ice/RouterFinder on the client endpoint returns the router proxy (no session needed)."""
    router = main_router(env)
    with env.communicator() as ic:
        finder = Ice.RouterFinderPrx.uncheckedCast(ic.stringToProxy("Ice/RouterFinder:" + H.endpoint(router.client_port)))
        found = finder.getRouter()
        check(found is not None and found.ice_getIdentity() == Ice.Identity("router", "Glacier2"),
              "getRouter() returned %s" % found)


@scenario
def no_server_endpoints(env):
    """Without Glacier2.Server.Endpoints there are no callbacks: getCategoryForClient returns ""
    (even before a session, where it would otherwise close the connection)."""
    with env.communicator(expiry_router(env)) as ic:
        prx = router_prx(ic)
        check(prx.getCategoryForClient() == "", "getCategoryForClient() = %r before a session" % prx.getCategoryForClient())
        prx.createSession("alice", "secret")
        check(prx.getCategoryForClient() == "", "getCategoryForClient() = %r in a session" % prx.getCategoryForClient())
