"""Chaos scenarios: a peer of the router dies (SIGKILL by PID) while real Ice 3.7 clients use it
and comes back on the same port. Registered last (run.py imports this file after the others).

Each scenario owns the peers it kills: a private back end (peers/backend.py on its own port) or a
private upstream IceStorm (icebox); the shared peers and router configurations of the other
scenarios are never killed. The routers under test (and, with glacier2router, the icebox
IceStorm next to it) must stay up throughout. Both scenarios print their figures in the PASS
note (calls failed and how, time to first success, delivery times).
"""
import collections
import os
import re
import threading
import time

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import IceStorm  # noqa: E402
from harness import Demo, Failure, check
from scenarios import expect_raises, main_router, router_prx, scenario, short, unique
from scenarios_icestorm import direct, icestorm_router, routed

# Bounds of chaos_backend_restart.
SESSIONS = 3            # sessions (one communicator and one router connection each)
THREADS_PER_SESSION = 2  # calling threads per session
PACE = 0.02             # s between two calls of one thread: 6 threads, <= 300 calls/s in all
CALL_BOUND = 2.0        # s: no call, ok or failed, may take longer
RECOVERY_BOUND = 3.0    # s: from the restarted back end listening to every session's first success
DOWN_TIME = 1.5         # s the back end stays dead under load


def describe(e):
    """An exception as the client sees it; for UnknownLocalException (Glacier2's way to report a
    back end's local failure), with the Ice exception its text names: e.g.
    `UnknownLocalException(ConnectionRefusedException)`."""
    if isinstance(e, Ice.UnknownLocalException):
        m = re.search(r"::Ice::(\w+)", e.unknown)
        return "UnknownLocalException(%s)" % (m.group(1) if m else short(e.unknown)[:60])
    return type(e).__name__


def start_backend(env, port, incarnation):
    """peers/backend.py on port, as a child of this run (own log): it is killed by PID later."""
    return env.start_ready("backend-chaos-%d" % incarnation,
                           [H.PYTHON, os.path.join(H.PEERS, "backend.py"), str(port)], [port])


class Caller:
    """One session (alice or bob): a communicator with a router session, and THREADS_PER_SESSION
    threads calling the back end at `port` in a loop (see _loop) once started. Each call is
    recorded as (start, end, None if it succeeded or the describe()d exception)."""

    def __init__(self, env, router, index, port):
        self.index = index
        self.calls = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.closed = None  # set by the router connection's close callback
        self.ic = env.communicator(router)
        try:
            user, password = ("alice", "secret") if index % 2 == 0 else ("bob", "builder")
            self.router = router_prx(self.ic)
            self.router.createSession(user, password)
            self.conn = self.router.ice_getCachedConnection()
            self.conn.setCloseCallback(lambda conn: self._on_close(conn))  # IcePy takes functions only
            self.hello = Demo.HelloPrx.uncheckedCast(self.ic.stringToProxy("hello:" + H.endpoint(port)))
            # A hang shows as InvocationTimeoutException instead of blocking the scenario.
            self.hello = self.hello.ice_invocationTimeout(int(2 * CALL_BOUND * 1000))
            self.slow = Demo.HelloPrx.uncheckedCast(self.hello.ice_identity(Ice.stringToIdentity("slowhello")))
        except BaseException:
            self.ic.destroy()
            raise
        self.threads = [threading.Thread(target=self._loop, args=(t,), daemon=True)
                        for t in range(THREADS_PER_SESSION)]

    def _on_close(self, conn):
        self.closed = time.monotonic()

    def _loop(self, t):
        # Thread 0 calls sayHello (answered at once); the others call `note` on `slowhello`, which
        # takes 20 ms in the back end, so that calls are in flight in the back end when it dies.
        n = 0
        while not self.stop.is_set():
            n += 1
            tag = "s%d-t%d-%d" % (self.index, t, n)
            t0 = time.monotonic()
            try:
                if t == 0:
                    got = self.hello.sayHello(tag)
                    outcome = None if got == "hello " + tag else "wrong answer %r" % got
                else:
                    self.slow.note(tag)
                    outcome = None
            except Ice.Exception as e:
                outcome = describe(e)
            with self.lock:
                self.calls.append((t0, time.monotonic(), outcome))
            self.stop.wait(PACE)

    def snapshot(self):
        with self.lock:
            return list(self.calls)

    def successes_since(self, t):
        return [c for c in self.snapshot() if c[2] is None and c[0] >= t]

    def close(self):
        self.stop.set()
        for th in self.threads:
            if th.ident is not None:  # started
                th.join(2 * CALL_BOUND + 1)
        self.ic.destroy()


@scenario
def chaos_backend_restart(env):
    """Back end killed under load and restarted on the same port.

    3 sessions (alice/bob, one communicator and router connection each) call a private back end
    (peers/backend.py on its own port) behind the `main` router from 2 threads each, every 20 ms:
    one thread `sayHello`, the other `slowhello.note` (20 ms in the back end, so calls are in
    flight there when it dies). Once every thread has succeeded, the back end is SIGKILLed; 1.5 s
    later it is restarted on the same port. Checked:
    - every call returns within 2 s, ok or not (no hang; the invocation timeout is 4 s);
    - calls fail only with UnknownLocalException, Glacier2's report of the back end's local
      failure (the note counts them by the exception its text names: ConnectionRefusedException
      while the back end is down, ConnectionLostException for calls in flight at the kill);
    - every call of every session started from 0.2 s after the kill until the restart fails;
    - the sessions stay up: no client's router connection is closed, each is the one it had
      before the kill, and refreshSession works afterwards;
    - each session succeeds again within 3 s of the restarted back end listening.
    The note gives the calls and failures, the slowest call, the first failure after the kill and
    the first success after the restart (worst session). Observed with both routers: only
    UnknownLocalException(ConnectionRefused/ConnectionLost), failures within ~10 ms of the kill,
    success within ~40 ms of the restart."""
    router = main_router(env)
    port = H.free_port()
    backend = start_backend(env, port, 1)
    callers = []
    try:
        for i in range(SESSIONS):
            callers.append(Caller(env, router, i, port))
        ports_before = [c.conn.getInfo().localPort for c in callers]
        t_start = time.monotonic()
        for c in callers:
            for th in c.threads:
                th.start()
        ok = H.wait_until(lambda: all(len(c.successes_since(t_start)) >= 2 * THREADS_PER_SESSION for c in callers),
                          10.0)
        check(ok, "the load did not start: successes per session %s, last outcomes %s"
              % ([len(c.successes_since(t_start)) for c in callers], [c.snapshot()[-1:] for c in callers]))

        t_kill = time.monotonic()
        backend.popen.kill()  # SIGKILL by PID
        backend.popen.wait(5)
        time.sleep(DOWN_TIME)
        check(router.proc.alive(), "the router exited after the back end was killed%s" % router.proc.log_tail())
        t_restart = time.monotonic()
        start_backend(env, port, 2)
        t_ready = time.monotonic()
        H.wait_until(lambda: all(c.successes_since(t_ready) for c in callers), RECOVERY_BOUND + 2.0)
        time.sleep(0.5)  # more load on the restarted back end
        for c in callers:
            c.stop.set()
        for c in callers:
            for th in c.threads:
                th.join(2 * CALL_BOUND + 1)
        # The sessions are still the ones created before the kill: same router connection (never
        # closed), and the router still knows the session.
        problems = []
        for c, before in zip(callers, ports_before):
            if c.closed is not None:
                problems.append("session %d: its router connection was closed %.2f s after the kill"
                                % (c.index, c.closed - t_kill))
                continue
            conn = c.router.ice_getCachedConnection()
            if conn is None or conn.getInfo().localPort != before:
                problems.append("session %d: router connection changed (local port %s, was %d)"
                                % (c.index, conn and conn.getInfo().localPort, before))
            try:
                c.router.refreshSession()
            except Ice.Exception as e:
                problems.append("session %d: refreshSession failed: %s: %s" % (c.index, type(e).__name__, short(e)))
        check(not problems, "; ".join(problems))
    finally:
        for c in callers:
            c.close()
    check(router.proc.alive(), "the router exited%s" % router.proc.log_tail())

    calls = sorted((c for caller in callers for c in caller.calls), key=lambda c: c[0])
    failed = [c for c in calls if c[2] is not None]
    by_kind = collections.Counter(c[2] for c in failed)
    slowest = max((c[1] - c[0] for c in calls), default=0.0)
    slowest_failed = max((c[1] - c[0] for c in failed), default=0.0)
    figures = "%d calls, %d failed %s, slowest call %.0f ms (failed: %.0f ms)" % (
        len(calls), len(failed), dict(by_kind), 1000 * slowest, 1000 * slowest_failed)

    check(slowest <= CALL_BOUND, "a call took %.2f s (bound %.1f s): %s" % (slowest, CALL_BOUND, figures))
    unexpected = {k: n for k, n in by_kind.items() if not k.startswith("UnknownLocalException(")}
    check(not unexpected, "calls failed otherwise than with UnknownLocalException: %s" % figures)
    first_success = []
    for caller in callers:
        mine = sorted(caller.calls, key=lambda c: c[0])
        down = [c for c in mine if t_kill + 0.2 <= c[0] and c[1] <= t_restart]
        check(down, "session %d made no call while the back end was dead (hung?): %s" % (caller.index, figures))
        check(all(c[2] is not None for c in down), "session %d: %d of %d calls made while the back end was dead "
              "succeeded: %s" % (caller.index, sum(1 for c in down if c[2] is None), len(down), figures))
        after = [c for c in mine if c[2] is None and c[0] >= t_ready]
        check(after, "session %d: no successful call within %.1f s of the restart (last outcomes %s): %s"
              % (caller.index, RECOVERY_BOUND + 2.0, [c[2] for c in mine[-3:]], figures))
        first_success.append(after[0][1] - t_ready)
    check(max(first_success) <= RECOVERY_BOUND,
          "first success after the restart took up to %.2f s (bound %.1f s; per session %s): %s"
          % (max(first_success), RECOVERY_BOUND, ["%.2f" % s for s in first_success], figures))
    first_fail = min((c[1] for c in failed), default=t_kill) - t_kill
    return ("%s; first failure %.0f ms after the kill; first success %.0f ms after the restarted back end listened "
            "(worst session; restart took %.0f ms)" % (figures, 1000 * first_fail, 1000 * max(first_success),
                                                       1000 * (t_ready - t_restart)))


# ---------------------------------------------------------------------------------------------
# Topic links to an upstream IceStorm that dies and comes back

class UpstreamIceStorm:
    """A private real IceStorm 3.7.8 (icebox, instance "Upstream") on two fixed loopback ports,
    killed (SIGKILL by PID) and restarted by the scenario on the same ports: persistent (LMDB in
    the run's temporary directory, kept across restarts) or transient, chosen per start."""

    def __init__(self, env, tag):
        self.env, self.tag = env, tag
        self.tm_port, self.pub_port = H.free_port(), H.free_port()
        self.db = os.path.join(env.dir, "chaos-upstream-%s-lmdb" % tag)
        os.makedirs(self.db, exist_ok=True)
        self.starts = 0
        self.proc = None

    @property
    def topic_manager(self):
        return "Upstream/TopicManager:" + H.endpoint(self.tm_port)

    def start(self, transient):
        """Starts it and waits for both ports; returns the start-up time in seconds."""
        self.starts += 1
        name = "icebox-chaos-%s-%d" % (self.tag, self.starts)
        cfg = os.path.join(self.env.dir, name + ".cfg")
        props = {
            "IceBox.Service.IceStorm": "IceStormService,37:createIceStorm --Ice.Config=%s" % cfg,
            "IceStorm.InstanceName": "Upstream",
            "IceStorm.TopicManager.Endpoints": H.endpoint(self.tm_port),
            "IceStorm.Publish.Endpoints": H.endpoint(self.pub_port),
            "IceStorm.Transient": "1" if transient else "0",
            "IceStorm.Trace.Topic": "1",
            "IceStorm.Trace.Subscriber": "1",
            "Ice.Warn.Connections": "0"}
        if not transient:
            props["IceStorm.LMDB.Path"] = self.db
            props["IceStorm.LMDB.MapSize"] = "16"  # MiB
        H.write_properties(cfg, props)
        t0 = time.monotonic()
        self.proc = self.env.start_ready(name, ["/usr/bin/icebox", "--Ice.Config=" + cfg],
                                         [(self.tm_port, "upstream TopicManager"), (self.pub_port, "upstream Publish")])
        return time.monotonic() - t0

    def kill(self):
        self.proc.popen.kill()  # SIGKILL by PID
        self.proc.popen.wait(5)

    def manager(self, ic):
        return IceStorm.TopicManagerPrx.uncheckedCast(ic.stringToProxy(self.topic_manager))


def clock_publisher(topic):
    return Demo.ClockPrx.uncheckedCast(topic.getPublisher().ice_oneway())


def publish_and_time(pub, servant, tags, what, timeout=5.0):
    """Publishes tags (oneway, in order) and waits until servant has the last one; returns the
    seconds from the first publish to the first tag's arrival (polled every 5 ms)."""
    t0 = time.monotonic()
    for t in tags:
        pub.tick(t)
    first = H.wait_until(lambda: tags[0] in servant.times(), timeout, interval=0.005)
    t_first = time.monotonic() - t0
    check(first and servant.wait_for(tags[-1], max(0.1, timeout - t_first)),
          "%s: %s not delivered within %.0f s (received %s)" % (what, tags, timeout, servant.times()[-8:]))
    return t_first


def check_exactly(servant, expected, what):
    time.sleep(0.1)  # a duplicate or a straggler would arrive by now
    got = servant.times()
    check(got == expected, "%s: received %s, expected %s" % (what, got, expected))


def start_bystander(env, router):
    """Another session (bob) calling the back end through the same router from 2 threads for the
    whole scenario: every call must succeed and its connection must stay open."""
    c = Caller(env, router, 1, env.backend())
    for th in c.threads:
        th.start()
    return c


def check_bystander(c, router):
    c.stop.set()
    for th in c.threads:
        th.join(2 * CALL_BOUND + 1)
    calls = c.snapshot()
    bad = collections.Counter(o for _, _, o in calls if o is not None)
    slowest = max((t1 - t0 for t0, t1, _ in calls), default=0.0)
    check(router.proc.alive(), "the router exited%s" % router.proc.log_tail())
    check(calls and not bad and c.closed is None,
          "the other session's calls through the router: %d, failed %s, connection closed: %s"
          % (len(calls), dict(bad), c.closed is not None))
    return "other session: %d calls ok, slowest %.0f ms" % (len(calls), 1000 * slowest)


@scenario
def chaos_topic_link_restart(env):
    """An upstream IceStorm that feeds the router's topic service over a link is killed and
    restarted; events published upstream reach a session subscriber through the router before the
    kill and after each restart, and the router serves another session throughout.

    Set-up: `icestorm` configuration (moraine-router's embedded topic service, or glacier2router +
    icebox IceStorm); a private upstream real IceStorm (instance "Upstream", icebox). Topic T on
    the router's topic service, topic U upstream, `U.link(T, 0)`: the upstream holds the link (a
    link subscriber inside U whose target is T's TopicLink object, from `T.getLinkProxy()`); the
    router's side holds no state about it and only receives `TopicLink::forward` calls. A session
    (alice) subscribes a oneway servant to T; another session (bob) calls the back end all along.

    1. 3 events published on U reach the session subscriber, in order.
    2. The upstream is SIGKILLed. The router stays up; an event published on T itself (the
       router's own Publish endpoint) still reaches the subscriber.
    3. Restart, persistent: the upstream was started with `IceStorm.Transient=0` (LMDB). Real
       IceStorm keeps topics and links (link records) in its database and re-creates the link
       subscriber at start, so U still exists, `U.getLinkInfoSeq()` still names T, and with no
       relink 3 events published on U reach the subscriber through the router.
    4. Kill again and restart transient (`IceStorm.Transient=1`, same ports): U and its link are
       gone (`retrieve` raises NoSuchTopic): the operator must re-create U and relink it to T.
       After that, 3 events published on U reach the subscriber.
    The subscriber receives exactly the events of 1-4, once each, in order. The note gives the
    time from the first publish to its delivery after each restart.

    The other direction (the router's topic linked to a topic of the upstream) is
    chaos_topic_link_out_restart."""
    router = icestorm_router(env)
    up = UpstreamIceStorm(env, "in")
    name = unique("chaos-in")
    figures = {}
    figures["start"] = up.start(transient=False)
    bystander = start_bystander(env, router)
    try:
        with routed(env, router) as s, direct(env, router, adapter=False) as d:
            local = d.tm.create(name)
            servant, sub = s.subscriber("chaos-in")
            s.topic(name).subscribeAndGetPublisher({}, sub.ice_oneway())
            expected = []

            # 1. Linked, upstream up.
            with env.communicator() as uic:
                upstream = up.manager(uic).create(name)
                upstream.link(local, 0)
                tags = ["pre-1", "pre-2", "pre-3"]
                expected += tags
                figures["before"] = publish_and_time(clock_publisher(upstream), servant, tags, "before the kill")

            # 2. Upstream killed: the router's own topic still delivers.
            up.kill()
            time.sleep(0.3)
            check(router.proc.alive(), "the router exited after the upstream IceStorm was killed%s"
                  % router.proc.log_tail())
            expected.append("local-while-down")
            publish_and_time(clock_publisher(local), servant, ["local-while-down"], "the router's own publisher, "
                             "upstream dead")

            # 3. Persistent restart: topic and link come back from the database.
            figures["persistent restart"] = up.start(transient=False)
            with env.communicator() as uic:
                try:
                    upstream = up.manager(uic).retrieve(name)
                    links = [li.name for li in upstream.getLinkInfoSeq()]
                except Ice.Exception as e:
                    raise Failure("persistent upstream after restart: %s: %s" % (type(e).__name__, short(e)))
                check(links == [name], "persistent upstream after restart: getLinkInfoSeq() names %s, expected [%s]"
                      % (links, name))
                tags = ["persistent-1", "persistent-2", "persistent-3"]
                expected += tags
                figures["after persistent restart"] = publish_and_time(
                    clock_publisher(upstream), servant, tags, "after the persistent upstream's restart, no relink")

            # 4. Transient restart: topic and link are gone; re-create and relink.
            up.kill()
            figures["transient restart"] = up.start(transient=True)
            with env.communicator() as uic:
                utm = up.manager(uic)
                expect_raises(IceStorm.NoSuchTopic, lambda: utm.retrieve(name), "transient upstream after restart: "
                              "retrieve of the linked topic")
                upstream = utm.create(name)
                upstream.link(local, 0)
                tags = ["transient-1", "transient-2", "transient-3"]
                expected += tags
                figures["after transient restart + relink"] = publish_and_time(
                    clock_publisher(upstream), servant, tags, "after the transient upstream's restart and relink")
            check_exactly(servant, expected, "session subscriber on the router's topic")
        other = check_bystander(bystander, router)
    finally:
        bystander.close()
        if up.proc is not None and up.proc.alive():
            up.kill()
    return "first event delivered: before the kill %.0f ms, after persistent restart (no relink) %.0f ms, after " \
           "transient restart + relink %.0f ms; upstream start-up %.0f/%.0f/%.0f ms; %s" % (
               1000 * figures["before"], 1000 * figures["after persistent restart"],
               1000 * figures["after transient restart + relink"], 1000 * figures["start"],
               1000 * figures["persistent restart"], 1000 * figures["transient restart"], other)


DISCARD_INTERVAL = 1  # s: IceStorm.Discard.Interval of the router's IceStorm (glacier2 flavour)


def icestorm_chaos_router(env):
    """The `icestorm` configuration plus IceStorm.Discard.Interval=1: how long real IceStorm keeps a
    link (or subscriber) offline after a failed delivery, discarding its events, before trying
    again (default 60 s, too long for a test). moraine-router applies it to subscribers, not to links."""
    props = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
             "IceStorm.Discard.Interval": str(DISCARD_INTERVAL)}
    if not env.is_glacier2:
        props["Moraine.Metrics.Listen"] = "127.0.0.1:0"  # moraine_link_events_lost_total
    return env.router("icestorm-chaos", props, icestorm=True)


def link_events_lost(router):
    """moraine-router's moraine_link_events_lost_total (all shards)."""
    from scenarios_ops import Scrape, metrics_port  # the metrics scenarios' scraper
    return Scrape(metrics_port(router)).total("moraine_link_events_lost_total")


def publish_until(pub, servant, prefix, what, timeout=5.0, every=0.1):
    """Publishes prefix-1, prefix-2, ... every `every` s until servant receives one of them, then
    3 more; returns (seconds from the first publish to the first delivered event, tags published,
    tags delivered)."""
    sent = []
    t0 = time.monotonic()
    end = t0 + timeout
    while time.monotonic() < end:
        sent.append("%s-%d" % (prefix, len(sent) + 1))
        pub.tick(sent[-1])
        if H.wait_until(lambda: any(t.startswith(prefix + "-") for t in servant.times()), every, interval=0.005):
            break
    got = [t for t in servant.times() if t.startswith(prefix + "-")]
    check(got, "%s: none of %d events published in %.0f s arrived" % (what, len(sent), timeout))
    t_first = time.monotonic() - t0
    tail = ["%s-%d" % (prefix, len(sent) + i) for i in (1, 2, 3)]
    for t in tail:
        pub.tick(t)
    sent += tail
    check(servant.wait_for(tail[-1], 5.0), "%s: the events after the first delivered one did not all arrive: %s"
          % (what, [t for t in servant.times() if t.startswith(prefix + "-")]))
    got = [t for t in servant.times() if t.startswith(prefix + "-")]
    check(got == [t for t in sent if t in got] and all(t in got for t in tail),
          "%s: received %s of %s (out of order, or a later one missing)" % (what, got, sent))
    return t_first, sent, got


@scenario
def chaos_topic_link_out_restart(env):
    """The router's topic linked to a topic of an upstream IceStorm that is killed and restarted:
    the router stays up, keeps delivering its own subscribers, and its link delivers again.

    Set-up: `icestorm-chaos` configuration (the `icestorm` one with IceStorm.Discard.Interval=1);
    a private upstream real IceStorm, persistent (LMDB). Topic T on the router's topic service,
    topic U upstream, `T.link(U, 0)` made through a session: here the ROUTER's topic service holds
    the link and forwards T's events to U's TopicLink object. A direct subscriber (its own adapter,
    outside the router) is subscribed to U, a session subscriber to T; another session calls the
    back end all along.

    1. 3 events published on T reach both subscribers.
    2. The upstream is SIGKILLed; events published on T still reach the session subscriber (a dead
       link holds nothing up), and the router stays up.
    3. Restart, persistent: U, its subscriber and nothing else are restored (the link is T's).
       Events are published on T every 0.1 s until the upstream subscriber receives one; then 3
       more must all arrive, in order. Real IceStorm keeps a link that failed with a local
       exception (ConnectionRefused) but takes it offline for Discard.Interval, discarding its
       events, and retries after that (a link's retryCount is -1: never removed for that); so
       glacier2 + IceStorm delivers again after about 1 s. Events published before delivery
       resumed are lost upstream (reported, not checked).
    4. Kill again and restart transient: U no longer exists, so a forward to its TopicLink object
       gets ObjectNotExist. Real IceStorm then removes the link (a hard error): `T.getLinkInfoSeq()`
       becomes empty after the next publish, and once U is re-created upstream a new `T.link(U, 0)`
       succeeds and events flow again. Checked on both routers: Moraine's topic service drops the
       link on ObjectNotExist too.
    The note gives, per restart, the time to the first delivered event and the events lost."""
    router = icestorm_chaos_router(env)
    up = UpstreamIceStorm(env, "out")
    name = unique("chaos-out")
    notes = []
    up.start(transient=False)
    bystander = start_bystander(env, router)
    try:
        with routed(env, router) as s, direct(env, router, adapter=False) as d, direct(env, router) as far:
            local = s.tm.create(name)
            servant, sub = s.subscriber("chaos-out-session")
            local.subscribeAndGetPublisher({}, sub.ice_oneway())
            far_servant, far_sub = far.subscriber("chaos-out-upstream")
            pub = clock_publisher(d.tm.retrieve(name))

            with env.communicator() as uic:
                upstream = up.manager(uic).create(name)
                upstream.subscribeAndGetPublisher({}, far_sub.ice_oneway())
                local.link(IceStorm.TopicPrx.uncheckedCast(s.ic.stringToProxy(upstream.ice_toString())), 0)
                check([li.name for li in local.getLinkInfoSeq()] == [name],
                      "T.getLinkInfoSeq() = %s" % [li.name for li in local.getLinkInfoSeq()])
                # 1.
                tags = ["pre-1", "pre-2", "pre-3"]
                publish_and_time(pub, far_servant, tags, "upstream subscriber, before the kill")
                check_exactly(servant, tags, "session subscriber, before the kill")

            # 2.
            up.kill()
            down = ["down-1", "down-2", "down-3"]
            publish_and_time(pub, servant, down, "session subscriber on the router's topic, upstream dead")
            check(router.proc.alive(), "the router exited after the upstream IceStorm was killed%s"
                  % router.proc.log_tail())
            check_exactly(servant, tags + down, "session subscriber, upstream dead")
            if not env.is_glacier2:  # the 3 events the dead link did not carry are counted
                # The forwards' failures arrive asynchronously (connection refused): wait for them.
                lost_down = H.wait_until(lambda: (lambda n: n if n >= len(down) else 0)(link_events_lost(router)), 3.0)
                check(lost_down >= len(down), "moraine_link_events_lost_total = %s after %d events over a dead link"
                      % (lost_down, len(down)))
                notes.append("link events counted lost while the upstream was down: %d" % lost_down)

            # 3.
            up.start(transient=False)
            t_first, sent, got = publish_until(pub, far_servant, "persistent", "upstream subscriber after the "
                                               "persistent upstream's restart")
            notes.append("after persistent restart: first delivered %.0f ms after the first publish, %d of %d lost"
                         % (1000 * t_first, len(sent) - len(got), len(sent)))
            links = [li.name for li in local.getLinkInfoSeq()]
            check(links == [name], "T.getLinkInfoSeq() after the persistent restart = %s" % links)

            # 4.
            up.kill()
            up.start(transient=True)
            with env.communicator() as uic:
                utm = up.manager(uic)
                expect_raises(IceStorm.NoSuchTopic, lambda: utm.retrieve(name), "transient upstream after restart")
                # Publish every 0.1 s, at least 3 times, until the link is gone, at most 3 s: a
                # loaded machine forwards late; what is checked is that it goes, not how fast.
                gone_deadline = time.monotonic() + 3.0
                i = 0
                while True:
                    i += 1
                    pub.tick("gone-%d" % i)
                    time.sleep(0.1)
                    links = [li.name for li in local.getLinkInfoSeq()]
                    if (links == [] and i >= 3) or time.monotonic() >= gone_deadline:
                        break
                # IceStorm removes a link whose forward gets ObjectNotExist; so does Moraine.
                check(links == [], "T.getLinkInfoSeq() = %s after %d forwards in 3 s to a topic that no longer "
                      "exists (the link must go on ObjectNotExist)" % (links, i))
                kept = "kept" if links == [name] else "removed" if links == [] else str(links)
                upstream = utm.create(name)
                upstream.subscribeAndGetPublisher({}, far_sub.ice_oneway())
                try:
                    local.link(IceStorm.TopicPrx.uncheckedCast(s.ic.stringToProxy(upstream.ice_toString())), 0)
                    relink = "relinked"
                except IceStorm.LinkExists:
                    check(False, "relink raised LinkExists: the link to the vanished topic was kept")
                    relink = "relink: LinkExists"
                t_first, sent, got = publish_until(pub, far_servant, "transient", "upstream subscriber after the "
                                                   "transient upstream's restart and relink")
                notes.append("after transient restart: link to the vanished topic %s, %s, first delivered %.0f ms "
                             "after the first publish, %d of %d lost" % (kept, relink, 1000 * t_first,
                                                                       len(sent) - len(got), len(sent)))
            check(not any(t.startswith("gone-") for t in far_servant.times()), "events published while U did not "
                  "exist reached the re-created U's subscriber: %s" % far_servant.times())
            # The upstream subscriber had the last event: the session subscriber, on another
            # connection and another Python thread, may take a moment longer to have it.
            H.wait_until(lambda: all(t in servant.times() for t in sent), 2.0)
            session_got = servant.times()
            missed = [t for t in sent if t not in session_got]
            check(not missed and router.proc.alive(),
                  "session subscriber on T missed events %s (it got, last: %s)" % (missed, session_got[-10:]))
        notes.append(check_bystander(bystander, router))
    finally:
        bystander.close()
        if up.proc is not None and up.proc.alive():
            up.kill()
    return "; ".join(notes)
