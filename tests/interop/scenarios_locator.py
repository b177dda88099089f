"""Indirect proxies through the router: a real IceGrid registry (icegridregistry 3.7.8, dynamic
registration) as the router's Ice.Default.Locator, and Python back ends that register their
adapter with it. Each scenario runs against both routers with the same property file
(docs/glacier2.md §9)."""
import os
import signal
import socket
import threading
import time

import harness as H  # before Glacier2: see harness._import_glacier2
import Ice  # noqa: E402
import IceGrid  # noqa: E402
import Glacier2  # noqa: E402
from harness import Demo, check
from scenarios import expect_raises, main_router, recorder, router_prx, scenario

ADAPTER = "HelloAdapter"


def start_registry(env, name="icegrid"):
    """Starts icegridregistry once per name: dynamic registration, client/server/internal
    endpoints on free ports, its database in the suite's temp dir, admin sessions for anybody
    (IceGrid/NullPermissionsVerifier). Returns the client endpoint's port (the locator's)."""
    def starter():
        client, server, internal = H.free_port(), H.free_port(), H.free_port()
        db = os.path.join(env.dir, name + "-db")
        os.makedirs(db, exist_ok=True)
        cfg = os.path.join(env.dir, name + ".cfg")
        H.write_properties(cfg, {
            "IceGrid.InstanceName": "IceGrid",
            "IceGrid.Registry.Client.Endpoints": H.endpoint(client),
            "IceGrid.Registry.Server.Endpoints": H.endpoint(server),
            "IceGrid.Registry.Internal.Endpoints": H.endpoint(internal),
            "IceGrid.Registry.LMDB.Path": db,
            "IceGrid.Registry.LMDB.MapSize": "10",
            "IceGrid.Registry.DynamicRegistration": "1",
            "IceGrid.Registry.PermissionsVerifier": "IceGrid/NullPermissionsVerifier",
            "IceGrid.Registry.AdminPermissionsVerifier": "IceGrid/NullPermissionsVerifier",
            "Ice.Warn.Connections": "0",
        })
        env.start_ready(name, ["/usr/bin/icegridregistry", "--Ice.Config=" + cfg],
                        [(client, "IceGrid.Registry.Client.Endpoints")])
        return client
    return env.start_once(env._peers, "registry " + name, starter)


def start_grid_backend(env, locator_port, adapter_id, name, replica_group=None):
    """A back end whose adapter `adapter_id` (in `replica_group`, if given) registers with the
    locator; returns (proc, port)."""
    port = H.free_port()
    proc = env.start_ready(name, [H.PYTHON, os.path.join(H.PEERS, "grid_backend.py"), str(port),
                                  str(locator_port), adapter_id] + ([replica_group] if replica_group else []), [port])
    return proc, port


def grid_backend(env, locator_port):
    """The shared back end of adapter HelloAdapter; its `greeter` is registered as a well-known object."""
    def starter():
        start_grid_backend(env, locator_port, ADAPTER, "grid-backend")
        add_well_known(env, locator_port, "greeter@" + ADAPTER)
        return True
    return env.start_once(env._peers, "grid backend", starter)


def add_well_known(env, locator_port, proxy, type_id="::Demo::Hello"):
    """Registers `proxy` as a well-known object through an IceGrid admin session."""
    with env.communicator() as ic:
        registry = IceGrid.RegistryPrx.checkedCast(
            ic.stringToProxy("IceGrid/Registry:" + H.endpoint(locator_port)))
        session = registry.createAdminSession("admin", "anything")
        try:
            admin = session.getAdmin()
            prx = ic.stringToProxy(proxy)
            try:
                admin.addObjectWithType(prx, type_id)
            except IceGrid.ObjectExistsException:
                admin.updateObject(prx)
        finally:
            session.destroy()


def locator_router(env, locator_port, name="locator"):
    return env.router(name, {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
                             "Ice.Default.Locator": "IceGrid/Locator:" + H.endpoint(locator_port)})


def timed(fn):
    start = time.monotonic()
    result = fn()
    return result, (time.monotonic() - start) * 1000.0


def unknown_local_text(e):
    return getattr(e, "unknown", "") or str(e)


@scenario
def locator_adapter_and_well_known(env):
    """Ice.Default.Locator = a real IceGrid registry. A client calls, through the router,
    `hello@HelloAdapter` (the router asks findAdapterById) and the well-known `greeter`
    (findObjectById, which IceGrid answers with `greeter@HelloAdapter`): both reach the back end
    that registered the adapter, and later calls reuse the resolution. (Distinct identities: a
    routing table holds one proxy per identity.)"""
    locator = start_registry(env)
    grid_backend(env, locator)
    router = locator_router(env, locator)
    with env.communicator(router) as ic:
        router_prx(ic).createSession("alice", "secret")
        by_adapter = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
        reply, first_ms = timed(lambda: by_adapter.sayHello("adapter"))
        check(reply == "hello adapter", "hello@%s answered %r" % (ADAPTER, reply))
        well_known = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("greeter"))
        reply, wk_ms = timed(lambda: well_known.sayHello("well-known"))
        check(reply == "hello well-known", "well-known hello answered %r" % reply)
        start = time.monotonic()
        for i in range(50):
            check(by_adapter.sayHello(str(i)) == "hello %d" % i, "call %d" % i)
            check(well_known.sayHello(str(i)) == "hello %d" % i, "well-known call %d" % i)
        cached_ms = (time.monotonic() - start) * 1000.0 / 100
    return "hello@%s first call %.1f ms, well-known greeter first call %.1f ms, then %.2f ms per call" % (
        ADAPTER, first_ms, wk_ms, cached_ms)


@scenario
def locator_backend_moved(env):
    """The back end of an adapter stops and starts again on another port (registering the new
    endpoints): the client's next call through the router still succeeds, the router asking the
    locator again when the connection to the endpoints it had cached is refused."""
    locator = start_registry(env)
    router = locator_router(env, locator)
    adapter = "MovingAdapter"
    proc, port1 = start_grid_backend(env, locator, adapter, "moving-backend-1")
    with env.communicator(router) as ic:
        router_prx(ic).createSession("alice", "secret")
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + adapter))
        check(hello.sayHello("before") == "hello before", "first call")
        proc.popen.send_signal(signal.SIGKILL)  # no clean unregistration: the registry keeps the old endpoints
        proc.popen.wait(5)
        # The router notices the lost connection; the registry still names port1 until the new
        # back end registers.
        proc2, port2 = start_grid_backend(env, locator, adapter, "moving-backend-2")
        check(port2 != port1, "the new back end got the same port")
        reply, ms = timed(lambda: hello.sayHello("after"))
        check(reply == "hello after", "call after the move answered %r" % reply)
        # Moved again, and this time a oneway comes first: it reaches the new back end too.
        proc2.popen.send_signal(signal.SIGKILL)
        proc2.popen.wait(5)
        proc3, port3 = start_grid_backend(env, locator, adapter, "moving-backend-3")
        hello.ice_oneway().note("after-move")
        check(H.wait_until(lambda: hello.countOf("after-move") == 1, 3.0),
              "the oneway sent after the second move did not arrive (count %d)" % hello.countOf("after-move"))
        proc3.stop()
    return "back end moved from port %d to %d: next call OK in %.1f ms; moved to %d: a oneway first, delivered" % (
        port1, port2, ms, port3)


@scenario
def locator_unknown_adapter(env):
    """An adapter id and a well-known object the locator does not know: the client gets
    UnknownLocalException with the text of Ice's NotRegisteredException (glacier2router's,
    observed: `no object adapter with id `NoSuchAdapter' is registered`), the session stays
    usable."""
    locator = start_registry(env)
    grid_backend(env, locator)
    router = locator_router(env, locator)
    with env.communicator(router) as ic:
        router_prx(ic).createSession("alice", "secret")
        ghost = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("ghost@NoSuchAdapter"))
        e, ms = timed(lambda: expect_raises(Ice.UnknownLocalException, lambda: ghost.sayHello("x"),
                                            "ghost@NoSuchAdapter"))
        text = unknown_local_text(e)
        check("NotRegisteredException" in text and "no object adapter with id `NoSuchAdapter' is registered" in text,
              "unknown adapter: %r" % text)
        nobody = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("nosuchobject"))
        e2 = expect_raises(Ice.UnknownLocalException, lambda: nobody.sayHello("x"), "nosuchobject")
        text2 = unknown_local_text(e2)
        check("NotRegisteredException" in text2 and "no object with id `nosuchobject' is registered" in text2,
              "unknown object: %r" % text2)
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
        check(hello.sayHello("still") == "hello still", "the session after the failures")
    return "unknown adapter -> UnknownLocalException in %.1f ms: %s" % (ms, " ".join(text.split()))


@scenario
def locator_unreachable(env):
    """Ice.Default.Locator names a port nobody listens on: a call to an indirect proxy fails
    with UnknownLocalException (the connection failure to the locator), the router goes on
    serving direct proxies."""
    router = env.router("locator-dead", {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
                                         "Ice.Default.Locator": "IceGrid/Locator:" + H.endpoint(H.free_port())})
    with env.communicator(router) as ic:
        router_prx(ic).createSession("alice", "secret")
        ghost = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
        e, ms = timed(lambda: expect_raises(Ice.UnknownLocalException, lambda: ghost.sayHello("x"),
                                            "hello@" + ADAPTER))
        text = unknown_local_text(e)
        check("ConnectionRefusedException" in text, "locator down: %r" % text)
        direct = Demo.HelloPrx.uncheckedCast(ic.stringToProxy(env.hello_proxy("allowed/hello")))
        check(direct.sayHello("direct") == "hello direct", "a direct proxy through the same router")
    # Without any locator, an indirect proxy has no endpoint.
    plain = main_router(env)
    with env.communicator(plain) as ic:
        router_prx(ic).createSession("alice", "secret")
        ghost = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
        none = unknown_local_text(expect_raises(Ice.UnknownLocalException, lambda: ghost.sayHello("x"),
                                                "hello@%s without a locator" % ADAPTER))
        check("NoEndpointException" in none, "no locator: %r" % none)
    return "locator down -> UnknownLocalException in %.1f ms: %s; no locator: %s" % (
        ms, " ".join(text.split()), " ".join(none.split()))


@scenario
def locator_indirect_verifier_and_manager(env):
    """`Glacier2.PermissionsVerifier=verifier` and `Glacier2.SessionManager=manager`, well-known
    objects that IceGrid maps to the verifier and session-manager peers (registered as direct
    proxies): createSession is checked by the verifier (a wrong password is refused with its
    reason) and the session comes from the manager, then a routed call by adapter id works."""
    locator = start_registry(env)
    grid_backend(env, locator)
    vport, mport = env.peer("verifier"), env.peer("session_manager")
    add_well_known(env, locator, "verifier:" + H.endpoint(vport), "::Glacier2::PermissionsVerifier")
    add_well_known(env, locator, "manager:" + H.endpoint(mport), "::Glacier2::SessionManager")
    router = env.router("locator-auth", {
        "Glacier2.PermissionsVerifier": "verifier", "Glacier2.SessionManager": "manager",
        "Glacier2.SessionTimeout": "30", "Ice.Default.Locator": "IceGrid/Locator:" + H.endpoint(locator)})
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        e = expect_raises(Glacier2.PermissionDeniedException, lambda: prx.createSession("gridwrong", "nope"),
                          "a wrong password through the indirect verifier")
        check(e.reason == "verifier refused gridwrong", "refusal reason %r" % e.reason)
        session, ms = timed(lambda: prx.createSession("grid", "grid-ok"))
        check(session is not None and session.ice_getIdentity().name == "grid",
              "the manager's session: %s" % session)
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
        check(hello.sayHello("auth") == "hello auth", "routed call after an indirect createSession")
    with env.communicator() as plain:
        created = [x for x in recorder(plain, mport).events() if x.startswith("create grid ")]
    check(created, "the session manager saw no create for grid")
    return "verifier and session manager found through the locator; createSession %.1f ms" % ms


@scenario
def locator_cache_timeout(env):
    """`Ice.Default.LocatorCacheTimeout` -1 (default), 0 and 1, the router's locator reached
    through a wire tap, counting the router's findAdapterById: a session makes 5 calls to
    `hello@HelloAdapter` (one lookup: the connection, once made, is used again, as an Ice proxy
    keeps its connection), then a second session (for timeout 1: 1.5 s later) makes one call: a
    new proxy in the router needs a connection, and the cached answer is used only if still
    fresh (-1: no new lookup; 0 and 1: a new one)."""
    from wire_tap import WireTap
    locator = start_registry(env)
    grid_backend(env, locator)
    expected = {"-1": (1, 1), "0": (1, 2), "1": (1, 2)}
    seen = {}
    for timeout in ("-1", "0", "1"):
        with WireTap(locator, name="locator-tap") as tap:
            router = env.router("locator-cache" + timeout, {
                "Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
                "Ice.Default.Locator": "IceGrid/Locator:" + H.endpoint(tap.port),
                "Ice.Default.LocatorCacheTimeout": timeout})
            counts = []
            for calls in (5, 1):
                if counts and timeout == "1":
                    time.sleep(1.5)  # past the 1 s timeout before the second session
                with env.communicator(router) as ic:
                    router_prx(ic).createSession("alice", "secret")
                    hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
                    for i in range(calls):
                        check(hello.sayHello(str(i)) == "hello %d" % i, "timeout %s: call %d" % (timeout, i))
                    counts.append(len(tap.requests(tap.UP, "findAdapterById")))
                    router_prx(ic).destroySession()
            seen[timeout] = tuple(counts)
    check(seen == expected, "findAdapterById after session 1 and session 2, by timeout: %s, expected %s"
          % (seen, expected))
    return "findAdapterById after a 5-call session / a second session: %s" % ", ".join(
        "timeout %s: %d/%d" % (t, a, b) for t, (a, b) in seen.items())


class SilentLocator:
    """An Ice server that takes connections (sends validate connection) and never answers a
    request: a locator that hangs. Stopped by leaving the `with` block."""

    def __init__(self):
        self.port = H.free_port()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((H.HOST, self.port))
        self._sock.listen(8)
        self._sock.settimeout(0.2)
        self._conns, self._stop = [], False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while not self._stop:
            try:
                c, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            c.sendall(H.HEARTBEAT)  # the validate connection message; requests are read by nobody
            self._conns.append(c)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop = True
        self._thread.join(2)
        for c in self._conns + [self._sock]:
            c.close()
        return False


@scenario
def locator_hangs(env):
    """The locator takes the connection and never answers findAdapterById
    (`Ice.Override.ConnectTimeout=1000` on the router). moraine-router fails the call after its
    connect timeout with UnknownLocalException (InvocationTimeoutException text) and serves
    direct proxies meanwhile; glacier2router has no deadline of its own: the client's
    invocation timeout (5 s) ends the call (observed)."""
    with SilentLocator() as silent:
        router = env.router("locator-hangs", {
            "Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
            "Ice.Override.ConnectTimeout": "1000",
            "Ice.Default.Locator": "IceGrid/Locator:" + H.endpoint(silent.port)})
        with env.communicator(router) as ic:
            router_prx(ic).createSession("alice", "secret")
            stuck = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@" + ADAPTER))
            start = time.monotonic()
            f = stuck.sayHelloAsync("x")
            direct = Demo.HelloPrx.uncheckedCast(ic.stringToProxy(env.hello_proxy("allowed/hello")))
            check(direct.sayHello("meanwhile") == "hello meanwhile", "a direct proxy while the locator hangs")
            try:
                f.result()
                raise H.Failure("the call to hello@%s succeeded with a silent locator" % ADAPTER)
            except Ice.UnknownLocalException as e:
                outcome = "UnknownLocalException: " + " ".join(unknown_local_text(e).split())
                check(not env.is_glacier2 and "InvocationTimeoutException" in outcome, outcome)
            except Ice.InvocationTimeoutException:
                outcome = "the client's own InvocationTimeoutException"
                check(env.is_glacier2, "moraine-router left the call to the client's invocation timeout")
            waited = time.monotonic() - start
    return "%s after %.1f s; a direct call meanwhile OK" % (outcome, waited)


@scenario
def locator_replica_group(env):
    """Two back ends register adapters `Replica1` and `Replica2` with `ReplicaGroupId=HelloGroup`
    (dynamic registration creates the group). `hello@HelloGroup` through
    the router: findAdapterById returns both replicas' endpoints, the calls succeed; one replica
    killed (SIGKILL: the registry still lists it), the next calls still succeed (the router tries
    the other endpoint)."""
    locator = start_registry(env)
    procs = [start_grid_backend(env, locator, "Replica%d" % i, "replica-%d" % i, "HelloGroup") for i in (1, 2)]
    router = locator_router(env, locator)
    with env.communicator(router) as ic:
        router_prx(ic).createSession("alice", "secret")
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello@HelloGroup"))
        _, first_ms = timed(lambda: check(hello.sayHello("g") == "hello g", "hello@HelloGroup"))
        with env.communicator() as plain:
            found = plain.stringToProxy("IceGrid/Locator:" + H.endpoint(locator))
            endpoints = Ice.LocatorPrx.uncheckedCast(found).findAdapterById("HelloGroup").ice_getEndpoints()
        check(len(endpoints) == 2, "findAdapterById(HelloGroup) gave %d endpoints" % len(endpoints))
        procs[0][0].popen.send_signal(signal.SIGKILL)
        procs[0][0].popen.wait(5)
        start = time.monotonic()
        for i in range(5):
            check(hello.sayHello(str(i)) == "hello %d" % i, "call %d after replica 1 died" % i)
        after_ms = (time.monotonic() - start) * 1000.0 / 5
        # Replica 1 back on a new port, then replica 2 killed: only the new endpoint, which the
        # router has not cached, answers now.
        again, _ = start_grid_backend(env, locator, "Replica1", "replica-1-again", "HelloGroup")
        procs[1][0].popen.send_signal(signal.SIGKILL)
        procs[1][0].popen.wait(5)
        _, moved_ms = timed(lambda: check(hello.sayHello("moved") == "hello moved", "after replica 2 died"))
        again.stop()
    return ("replica group of 2: first call %.1f ms; replica 1 killed, next 5 calls OK (%.1f ms each); "
            "replica 1 restarted elsewhere and replica 2 killed: next call OK in %.1f ms" % (first_ms, after_ms, moved_ms))
