"""Drop-in details: moraine-router started exactly as glacier2router is, by unit files and scripts
written for glacier2router. Each scenario runs against both routers with the same arguments."""

import json
import os
import subprocess
import time

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
from harness import Demo, check
from scenarios import hello_prx, main_router, manager_router, recorder, router_prx, scenario, session, short, unique

COMMAND_LINE_TIMEOUT = 17  # s: differs from the file's 30, so the option is seen to win


@scenario
def glacier2_command_line(env):
    """`ROUTER --Ice.Config=FILE --Glacier2.Client.Endpoints=... --Glacier2.SessionTimeout=17`:
    the options override the file, as glacier2router's communicator does. The file names a client
    port nobody listens on and SessionTimeout 30; the router must listen where the option says,
    report the option's session timeout, and forward a call to the back end."""
    env.backend()
    router = env.router("command-line", {"Glacier2.CryptPasswords": env.passwords,
                                         "Glacier2.SessionTimeout": "30"},
                        command_line={"Glacier2.SessionTimeout": str(COMMAND_LINE_TIMEOUT)})
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        try:
            prx.createSession("alice", "secret")
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            raise H.Failure("createSession on the command line's client endpoint: %s: %s" % (type(e).__name__, short(e)))
        timeout = prx.getSessionTimeout()
        check(timeout == COMMAND_LINE_TIMEOUT, "getSessionTimeout() = %s: the file's value won over "
              "--Glacier2.SessionTimeout=%d" % (timeout, COMMAND_LINE_TIMEOUT))
        answer = hello_prx(env, ic).sayHello("cli")
        check("cli" in answer, "sayHello through the router answered %r" % answer)
    return "client endpoint and SessionTimeout %d taken from the command line over the file" % COMMAND_LINE_TIMEOUT


# ---------------------------------------------------------------------------------------------
# Ice 3.8 clients: liveness of idle sessions

ICE38_IDLE = float(os.environ.get("MORAINE_ICE38_IDLE", "75"))  # s; shorter only for trying the scenario out


def ice38_python():
    """The Python with Ice 3.8 (scripts/ice38-setup makes it once, then answers at once)."""
    r = subprocess.run(["bash", os.path.join(H.REPO, "scripts", "ice38-setup")], capture_output=True, text=True,
                       timeout=1200)
    if r.returncode != 0:
        raise H.Failure("Ice 3.8 for Python is not available: %s" % (r.stderr.strip()[-400:] or r.returncode))
    return r.stdout.strip().splitlines()[-1]


def start_idle_client(env, python, router):
    cmd = [python, os.path.join(H.HERE, "ice38", "idle_client.py"),
           "--router", "Glacier2/router:" + H.endpoint(router.client_port),
           "--target", env.hello_proxy(), "--idle", str(ICE38_IDLE)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def idle_outcome(proc, what):
    try:
        out, err = proc.communicate(timeout=ICE38_IDLE + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise H.Failure("%s: the Ice 3.8 client did not finish" % what)
    line = out.strip().splitlines()[-1] if out.strip() else ""
    try:
        return json.loads(line)
    except ValueError:
        raise H.Failure("%s: the Ice 3.8 client printed %r (stderr: %s)" % (what, line, err.strip()[-600:]))


@scenario
def ice38_idle_session(env):
    """An Ice 3.8 client (Python, zeroc-ice 3.8.3) keeps its session through 75 s of idleness.

    Ice 3.8 closes a connection on which it read nothing for 60 s, and with it goes the session.
    Two routers, each with SessionTimeout=120 (so the router's own idle close is not what is
    tested): `default` (nothing else), and `always` (Glacier2.Client.ACM.Heartbeat=3,
    Glacier2.Client.ACM.Timeout=60). One client on each, concurrently: createSession, one routed
    ice_ping, 75 s idle, a second routed ice_ping.
    moraine-router: both sessions survive (it heartbeats idle clients by default).
    glacier2router 3.7.8: `always` survives; `default` is recorded: it sends nothing, the client
    closes the connection at 60 s and the second call fails (the known flaw this fixes)."""
    env.backend()
    python = ice38_python()
    base = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "120"}
    routers = {"default": env.router("ice38-default", dict(base)),
               "always": env.router("ice38-always", dict(base, **{"Glacier2.Client.ACM.Heartbeat": "3",
                                                                 "Glacier2.Client.ACM.Timeout": "60"}))}
    procs = {name: start_idle_client(env, python, r) for name, r in routers.items()}
    results = {name: idle_outcome(p, "router `%s`" % name) for name, p in procs.items()}
    for name, r in results.items():
        check(r["session"] and r["first_call"] == "ok", "router `%s`: the Ice 3.8 client could not start: %s" % (name, r))
    survived = {name: r["closed_at"] is None and r["second_call"] == "ok" for name, r in results.items()}
    check(survived["always"], "router `always` (Heartbeat=3, ACM.Timeout=60): the Ice 3.8 client's session did not "
          "survive %.0f s idle: %s" % (ICE38_IDLE, results["always"]))
    if not env.is_glacier2:
        check(survived["default"], "router `default`: the Ice 3.8 client's connection was closed after %s s idle and "
              "the second call gave %s" % (results["default"]["closed_at"], results["default"]["second_call"]))
    d = results["default"]
    default_text = "survived" if survived["default"] else "lost (client closed the connection at %s s; second call: %s)" \
        % (d["closed_at"], d["second_call"])
    return "Ice %s client, %.0f s idle: default config %s; Heartbeat=3 survived" % (d["ice"], ICE38_IDLE, default_text)


# ---------------------------------------------------------------------------------------------
# Router operations before a session

@scenario
def refresh_session_without_session(env):
    """`refreshSession` on a connection that has no session: Glacier2 3.7 raises
    SessionNotExistException and keeps the connection, so the client can then create a session
    on it. Checked on both routers: the same exception, then createSession and a routed call on
    the same connection."""
    env.backend()
    router = main_router(env)
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        try:
            prx.refreshSession()
            outcome = "no exception"
        except Ice.Exception as e:  # the finding, whatever it is (by name: see harness._import_glacier2)
            outcome = type(e).__name__ if type(e).__name__ == "SessionNotExistException" else \
                "%s: %s" % (type(e).__name__, short(e))
        check(outcome == "SessionNotExistException", "refreshSession without a session: %s" % outcome)
        first = prx.ice_getCachedConnection()
        prx.createSession("alice", "secret")
        check(prx.ice_getCachedConnection() is first or prx.ice_getCachedConnection() == first,
              "createSession after it went over a new connection: the router closed the first one")
        answer = hello_prx(env, ic).sayHello("after-refresh")
        check("after-refresh" in answer, "sayHello answered %r" % answer)
    return "SessionNotExistException, connection kept, then a session on it"


# ---------------------------------------------------------------------------------------------
# Filters

@scenario
def filter_adapter_id_direct_proxy(env):
    """`Glacier2.Filter.AdapterId.Accept` alone, and a call through a DIRECT proxy (no adapter
    id): what each router does, and that both do the same. An adapter-id rule cannot match a
    proxy that carries no adapter id."""
    env.backend()
    router = env.router("filter-adapter", {"Glacier2.CryptPasswords": env.passwords,
                                           "Glacier2.SessionTimeout": "30",
                                           "Glacier2.Filter.AdapterId.Accept": "SomeAdapter"})
    with env.communicator(router) as ic:
        router_prx(ic).createSession("alice", "secret")
        try:
            answer = hello_prx(env, ic).sayHello("direct")
            outcome = "allowed" if "direct" in answer else "answered %r" % answer
        except Ice.Exception as e:
            outcome = type(e).__name__
    expected = "allowed"
    check(outcome == expected, "direct proxy with only an AdapterId filter: %s, expected %s" % (outcome, expected))
    return "direct proxy, AdapterId.Accept only: %s" % outcome


# ---------------------------------------------------------------------------------------------
# Published endpoints

def local_ipv4_addresses():
    """This machine's IPv4 addresses, loopback last (from `ip -4 -o addr`)."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True).stdout
    addrs = [line.split()[3].split("/")[0] for line in out.splitlines() if " inet " in line]
    return sorted(addrs, key=lambda a: a.startswith("127."))


@scenario
def server_endpoints_wildcard_host(env):
    """`Glacier2.Server.Endpoints=tcp -h 0.0.0.0 -p P` (listen everywhere): the server proxy that
    getServerProxy returns, which back ends use to call clients back, must name this machine's
    addresses, as an Ice object adapter publishes them, not 0.0.0.0 or an empty host. Both
    routers must publish the same set of hosts."""
    port = H.free_port()
    router = env.router("wildcard-server", {"Glacier2.CryptPasswords": env.passwords,
                                            "Glacier2.SessionTimeout": "30",
                                            "Glacier2.Server.Endpoints": "tcp -h 0.0.0.0 -p %d" % port},
                        server=False)  # the harness's probe knows only its own server port
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        prx.createSession("alice", "secret")
        server = prx.getServerProxy()
        hosts = sorted(e.getInfo().host for e in server.ice_getEndpoints())
        ports = {e.getInfo().port for e in server.ice_getEndpoints()}
    check(ports == {port}, "server proxy ports %s, expected %d" % (ports, port))
    check(hosts and all(h not in ("", "0.0.0.0", "*") for h in hosts),
          "server proxy hosts %s: a wildcard is not an address a back end can connect to" % hosts)
    machine = set(local_ipv4_addresses())
    check(set(hosts) <= machine, "server proxy hosts %s are not this machine's addresses %s" % (hosts, sorted(machine)))
    return "published hosts %s (machine: %s)" % (hosts, sorted(machine))


# ---------------------------------------------------------------------------------------------
# refreshSession with an external SessionManager

@scenario
def refresh_session_pings_manager_session(env):
    """With a SessionManager, `refreshSession` pings the Session it returned: glacier2router
    3.7 does so, and ends the session when the ping fails (the manager dropped it).

    1. user `ping-*`: refreshSession succeeds and the manager's Session records an ice_ping.
    2. user `vanish-*`: the manager returns a Session proxy it does not host; refreshSession
       fails (SessionNotExistException, or the connection closes) and a routed call on that
       connection then fails too: the session is gone."""
    env.backend()
    router = manager_router(env)
    with env.communicator() as plain:
        rec = recorder(plain, env.peer("session_manager"))
        user = unique("ping")
        with session(env, router, user, user + "-ok") as (ic, prx):
            prx.refreshSession()
            pinged = H.wait_until(lambda: "ping " + user in rec.events(), 3.0, 0.05)
            check(pinged, "refreshSession did not ping the manager's Session (events: %s)" % rec.events()[-4:])
            check(hello_prx(env, ic).sayHello("still") == "hello still", "routed call after refreshSession failed")
        gone = unique("vanish")
        with env.communicator(router) as ic:
            prx = router_prx(ic)
            prx.createSession(gone, gone + "-ok")
            try:
                prx.refreshSession()
                refresh = "ok"
            except Ice.Exception as e:
                refresh = type(e).__name__
            check(refresh != "ok", "refreshSession succeeded although the manager's Session does not exist")
            try:
                hello_prx(env, ic).sayHello("after")
                after = "ok"
            except Ice.Exception as e:
                after = type(e).__name__
            check(after != "ok", "a routed call still worked after the failed refresh: the session was kept")
    return "ping recorded; vanished Session: refreshSession -> %s, next routed call -> %s" % (refresh, after)


# ---------------------------------------------------------------------------------------------
# Proxies with several endpoints

@scenario
def two_endpoint_proxy_first_dead(env):
    """A direct proxy with two endpoints whose first server is dead (nothing listens on its
    port): the call still succeeds, because the router, as Ice does, tries the next endpoint when
    a connection fails. Twice: with Ice's default (Random) endpoint selection, and with
    `Ice.Default.EndpointSelection=Ordered` (the dead one is then always tried first). A proxy
    whose endpoints are all dead fails with an Ice exception, not a hang."""
    env.backend()
    live = env.hello_proxy().split(":", 1)[1]
    dead = H.endpoint(H.free_port())
    base = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30"}
    notes = []
    for name, extra in (("random", {}), ("ordered", {"Ice.Default.EndpointSelection": "Ordered"})):
        router = env.router("two-endpoints-" + name, dict(base, **extra))
        with env.communicator(router) as ic:
            router_prx(ic).createSession("alice", "secret")
            for i in range(2):  # the first call makes the connection (the routing table keeps that proxy)
                prx = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello:%s:%s" % (dead, live)))
                answer = prx.sayHello("%s-%d" % (name, i))
                check(answer == "hello %s-%d" % (name, i), "%s: sayHello answered %r" % (name, answer))
            t0 = time.monotonic()
            try:
                # Another identity: the routing table keeps the first proxy added for an identity.
                Demo.HelloPrx.uncheckedCast(ic.stringToProxy("nobody:%s:%s" % (dead, H.endpoint(H.free_port())))).sayHello("x")
                outcome = "answered"
            except Ice.Exception as e:
                outcome = type(e).__name__
            check(outcome != "answered", "%s: a proxy with only dead endpoints was answered" % name)
            notes.append("%s ok, all dead -> %s in %.0f ms" % (name, outcome, 1000 * (time.monotonic() - t0)))
    return "; ".join(notes)


# ---------------------------------------------------------------------------------------------
# Heartbeats on a busy connection (Glacier2.Client.ACM.Heartbeat=3, HeartbeatAlways)

BUSY_SECONDS = 3.2   # s of a busy connection
BUSY_PACE = 0.05     # s between two ice_ping requests: the connection is never idle for long
HEARTBEAT_ACM = "2"  # s: Glacier2.Client.ACM.Timeout, so heartbeats are due about every second


def busy_heartbeats(router):
    """A raw connection that pings the router object every BUSY_PACE s for BUSY_SECONDS; returns
    (replies, heartbeats received) after the connection's first validate connection."""
    conn = H.RawConn(router.client_port)
    replies = heartbeats = 0
    rid = 0
    try:
        end = time.monotonic() + BUSY_SECONDS
        while time.monotonic() < end:
            rid += 1
            conn.send(H.request(rid, "router", "Glacier2", "ice_ping", mode=1))
            deadline = time.monotonic() + BUSY_PACE
            while True:  # read everything that arrives before the next ping is due
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                msg = conn.read(timeout=left)
                if msg == "timeout":
                    break
                check(isinstance(msg, bytes), "the router's connection ended: %s" % msg)
                if msg == H.VALIDATE:
                    heartbeats += 1
                elif msg[8] == 2:
                    replies += 1
    finally:
        conn.close()
    return replies, heartbeats


@scenario
def heartbeat_always_busy_connection(env):
    """`Glacier2.Client.ACM.Heartbeat=3` (HeartbeatAlways) heartbeats a connection that is never
    idle; `=2` (on idle) does not. Routers `heartbeat-idle` and `heartbeat-always`, each with
    `Glacier2.Client.ACM.Timeout=2`; a raw client pings the router object every 50 ms for 3.2 s
    and counts the validate connection messages it receives besides the replies."""
    base = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.Client.ACM.Timeout": HEARTBEAT_ACM}
    counts = {}
    for mode, name in (("2", "idle"), ("3", "always")):
        router = env.router("heartbeat-" + name, dict(base, **{"Glacier2.Client.ACM.Heartbeat": mode}), server=False)
        counts[name] = busy_heartbeats(router)
    (idle_replies, idle_beats), (always_replies, always_beats) = counts["idle"], counts["always"]
    check(idle_replies > 40 and always_replies > 40, "too few replies to call the connection busy: %s" % counts)
    check(idle_beats == 0, "Heartbeat=2 sent %d heartbeat(s) to a connection busy with replies" % idle_beats)
    check(always_beats >= 2, "Heartbeat=3 sent %d heartbeat(s) in %.1f s to a busy connection (ACM timeout %s s)"
          % (always_beats, BUSY_SECONDS, HEARTBEAT_ACM))
    return "busy %.1f s (%d/%d replies): Heartbeat=2 sent %d heartbeats, Heartbeat=3 sent %d" % (
        BUSY_SECONDS, idle_replies, always_replies, idle_beats, always_beats)
