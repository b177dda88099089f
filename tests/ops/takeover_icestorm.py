#!/usr/bin/python3
"""Live upgrade with a topic service: subscribed sessions move, and no event is lost or repeated.

  /usr/bin/python3 tests/ops/takeover_icestorm.py [--moraine-bin build/bin/moraine-router]
      [--topics icestorm|embedded] [--clients N] [--cpp-clients M] [--cpp-build-dir DIR] [--rate R]
      [--oneway] [--store] [--drain-ms MS] [--keep]

--topics icestorm (the default), the classic Glacier2 deployment: the real IceStorm (icebox, Ice
3.7, transient) is a back end behind the router, and each client subscribes its callback object
to a topic through its session. IceStorm delivers to the router's server endpoint, which forwards
to the client.

--topics embedded: no icebox; the routers serve the topic service themselves (the embedded,
transient topic service: IceStorm.TopicManager.Endpoints and IceStorm.Publish.Endpoints in the
routers' own property file, docs/glacier2.md §8), as in the clock demo. Each client subscribes
its callback object through its session to the router's own TopicManager (the proxy names the
TopicManager endpoint; the request is routed), and the publisher publishes to the router's
Publish endpoint directly. The topic service delivers straight to the session's connection.

--store (with embedded): the topic service keeps a database (IceStorm.Transient=0,
IceStorm.LMDB.Path: a directory of the test's own). B starts while A holds it, and opens it once
A has sent its catalog (docs/takeover.md "The topic database"). After the events are checked, a
topic is created through B and B is stopped; the database must then hold the topic A created and
the one B created, and both routers' logs must say who closed and who opened it.

All on loopback, with tests/interop/harness.py; no retries in the clients (Ice.RetryIntervals=-1).

  1. with icestorm, IceStorm starts; router A (2 shards) starts (with embedded, serving the topic
     service too); N Python clients (default 10) and M C++ clients
     (tests/interop/cpp/subscriber_client.cpp, one process each, given the TopicManager proxy;
     default 2 when DIR, default build/interop-cpp, exists, else 0; asking for them without DIR
     is a failure), in each language every other one over ws, each create a session, register a
     Demo::Callback servant in their category and subscribe it through the router to topic
     `ticks` with QoS reliability=ordered (the topic service then sends each event twoway and
     waits for its reply before the next), or with --oneway a oneway proxy of it (oneway events,
     nothing comes back);
  2. a publisher, connected to the topic service's endpoints directly (no router), publishes
     ping("N") for N = 1, 2, ... at R events/s (default 50), twoway; a publish that fails still
     uses its number (the subscribers miss that event) and is reported;
  3. router B (3 shards, the same property file) starts with --takeover: A moves the N + M
     sessions. icestorm: A relays the events IceStorm still sends to it (docs/takeover.md "Back
     ends"), then, holding no session, closes IceStorm's connection with Ice's close-connection
     message, and IceStorm goes on through B. embedded: the topic service moves with its
     subscribers (docs/takeover.md "The embedded topic service: the plan that the relay
     allows"); the publisher may have to reconnect, to B. A must exit 0 well before its drain
     deadline (Moraine.Takeover.DrainTimeout = --drain-ms: default 20 s with icestorm, 8 s with
     embedded, where Moraine.Drain.Timeout is also 2 s, so that a router that cannot move the
     subscribed sessions fails the test in about 20 s);
  4. 1.5 s after A exited the publisher stops; every subscriber must then have received every
     event from its first one to the last published, each once and in order.

Prints the figures (sessions moved and stayed, A's exit, events published and received, events
A relayed, the publisher's connections: whether it had to reconnect), then PASS, or FAIL with
every problem seen (which subscriber lost or repeated which events; logs kept), and exits 0 or 1.
Every process is stopped by PID; every wait is bounded (the whole run: 120 s).

With --topics embedded, a subscribed session over TLS would keep the whole topic service in A
(docs/takeover.md "What is not done yet"); this test's sessions are tcp and ws only.
"""
import argparse
import collections
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
sys.path.insert(0, HERE)
import harness as H  # noqa: E402
import Glacier2  # noqa: E402  (after harness: see harness._import_glacier2)
import Ice  # noqa: E402
import IceStorm  # noqa: E402
from routed_client import log_text  # noqa: E402
from takeover_common import take_over  # noqa: E402
from takeover_sessions import cpp_setup  # noqa: E402

Demo = H.Demo
DRAIN_MS = {"icestorm": 20000, "embedded": 8000}  # A's takeover drain deadline, by --topics
EMBEDDED_SHUTDOWN_DRAIN_MS = 2000  # Moraine.Drain.Timeout with --topics embedded
TOPIC = "ticks"
TRANSPORTS = ["tcp", "ws"]


class SequenceRecorder(Demo.Callback):
    """Keeps the number each ping(msg) carries, in arrival order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen = []

    def ping(self, msg, current):
        with self.lock:
            self.seen.append(int(msg))

    def snapshot(self):
        with self.lock:
            return list(self.seen)


class Subscriber:
    """One Ice client: a session, a servant in its category, subscribed to TOPIC through the router
    (the TopicManager proxy is routed: IceStorm's behind the router, or the router's own)."""

    def __init__(self, env, proxy, topic_manager, index, transport, oneway):
        self.index, self.transport = index, transport
        self.ic = env.communicator(extra={"Ice.Default.Router": proxy})
        self.router = Glacier2.RouterPrx.checkedCast(self.ic.getDefaultRouter())
        self.router.createSession("alice", H.CRYPT_USERS["alice"])
        self.category = self.router.getCategoryForClient()
        adapter = self.ic.createObjectAdapterWithRouter("Sub%d" % index, self.router)
        self.servant = SequenceRecorder()
        me = adapter.add(self.servant, Ice.Identity("sub", self.category))
        adapter.activate()
        manager = IceStorm.TopicManagerPrx.checkedCast(self.ic.stringToProxy(topic_manager))
        if oneway:  # the topic service sends oneway events to a oneway subscriber proxy
            manager.retrieve(TOPIC).subscribeAndGetPublisher({}, me.ice_oneway())
        else:
            manager.retrieve(TOPIC).subscribeAndGetPublisher({"reliability": "ordered"}, me)

    def close(self):
        self.ic.destroy()


class Publisher(threading.Thread):
    """Publishes ping("1"), ping("2"), ... on TOPIC at `rate` events/s, twoway, straight to the topic
    service (no router). A publish that fails still uses its number: `sent` is the last number
    used, `ok` the publishes answered, `errors` (number, error) the others. `connections` lists
    each connection the publisher's proxy used, (monotonic time first seen, description), and
    `closed` when each was closed (by the peer, or a failure): more than one connection means the
    publisher had to reconnect."""

    def __init__(self, env, topic_manager, rate):
        super().__init__(daemon=True)
        self.ic = env.communicator()
        self.manager = topic_manager
        manager = IceStorm.TopicManagerPrx.checkedCast(self.ic.stringToProxy(topic_manager))
        try:
            topic = manager.create(TOPIC)
        except IceStorm.TopicExists:
            topic = manager.retrieve(TOPIC)
        self.callback = Demo.CallbackPrx.uncheckedCast(topic.getPublisher())  # twoway: the service took it
        self.period = 1.0 / rate
        self.sent = self.ok = 0
        self.errors = []
        self.lock = threading.Lock()
        self.connections = []
        self.closed = []
        self._current = None
        self.stopping = threading.Event()

    def run(self):
        next_at = time.monotonic()
        while not self.stopping.is_set():
            n = self.sent + 1
            try:
                # The connection first (what ping would use), since a failed call forgets it.
                self._note_connection(self.callback.ice_getConnection())
                self.callback.ping(str(n))
                self.ok += 1
            except Ice.Exception as e:
                self.errors.append((n, "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:160])))
            self.sent = n
            next_at += self.period
            time.sleep(max(0.0, next_at - time.monotonic()))

    def _note_connection(self, con):
        desc = " ".join(con.toString().split())  # local and remote address: a new one has another local port
        if desc == self._current:
            return
        self._current = desc
        with self.lock:
            self.connections.append((time.monotonic(), desc))
        con.setCloseCallback(lambda _: self._note_closed())

    def _note_closed(self):
        with self.lock:
            self.closed.append(time.monotonic())

    def stop(self):
        self.stopping.set()
        self.join(10)

    def close(self):
        self.ic.destroy()


class CppSubscriber:
    """One C++ Ice 3.7 subscriber process (moraine-interop-subscriber-client), given the router and
    TopicManager proxies: its session and subscription live in the process; `stop` on its stdin
    asks for its summary line."""

    def __init__(self, env, exe, proxy, topic_manager, index, transport, oneway):
        self.index, self.transport = index, transport
        self.log = open(os.path.join(env.dir, "cpp-subscriber-%d.log" % index), "w")
        cmd = [exe, proxy, topic_manager, TOPIC, "alice", H.CRYPT_USERS["alice"]] + (["--oneway"] if oneway else [])
        self.popen = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                      bufsize=1, preexec_fn=H._die_with_parent)
        self.ready = self._line("ready", 15)

    def _line(self, word, timeout):
        """The key=value fields of the next stdout line, which must start with `word`."""
        box = []
        reader = threading.Thread(target=lambda: box.append(self.popen.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        line = box[0].strip() if box else ""
        self.log.write(line + "\n")
        if not line.startswith(word):
            raise H.Failure("C++ subscriber %d (%s): expected `%s`, got %r" % (self.index, self.transport, word,
                                                                                line or "nothing"))
        return dict(f.split("=", 1) for f in line.split(" ")[1:] if "=" in f)

    def stop(self):
        """Its summary: received, first, last, missing, repeated, out_of_order (ints)."""
        self.popen.stdin.write("stop\n")
        self.popen.stdin.flush()
        fields = {k: int(v) for k, v in self._line("summary", 10).items()}
        try:
            rc = self.popen.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        H.check(rc == 0, "C++ subscriber %d: exit status %s" % (self.index, rc))
        return fields

    def close(self):
        if self.popen.poll() is None:
            self.popen.kill()  # by PID: our child
            self.popen.wait(5)
        self.log.close()


def start_icestorm(env):
    """The real IceStorm (icebox, transient): its TopicManager proxy."""
    tm_port, pub_port = H.free_port(), H.free_port()
    cfg = os.path.join(env.dir, "icestorm.cfg")
    H.write_properties(cfg, {
        "IceStorm.InstanceName": "IceStorm",
        "IceStorm.TopicManager.Endpoints": H.endpoint(tm_port),
        "IceStorm.Publish.Endpoints": H.endpoint(pub_port),
        "IceStorm.Transient": "1",
    })
    box_cfg = os.path.join(env.dir, "icebox.cfg")
    H.write_properties(box_cfg, {
        "IceBox.Service.IceStorm": "IceStormService,37:createIceStorm --Ice.Config=%s"
                                   " --IceStorm.Trace.Subscriber=1" % cfg,
        "Ice.Warn.Connections": "0"})
    env.start_ready("icebox", ["/usr/bin/icebox", "--Ice.Config=" + box_cfg],
                    [(tm_port, "IceStorm.TopicManager.Endpoints"), (pub_port, "IceStorm.Publish.Endpoints")])
    return "IceStorm/TopicManager:" + H.endpoint(tm_port)


def ranges(numbers, most=8):
    """Sorted ints as `3, 5-9, 12` (at most `most` runs, then `...`)."""
    runs = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in runs[:most])
    return text + (", ..." if len(runs) > most else "")


def gaps(seen, last):
    """What is wrong with one subscriber's sequence: empty if it is first..last, each once, in order;
    else which events it lost (between its first and `last`), which came more than once, and
    whether they came out of order."""
    if not seen:
        return "received nothing (published 1-%d)" % last
    expected = range(seen[0], last + 1)
    if seen == list(expected):
        return ""
    got = set(seen)
    missing = [n for n in expected if n not in got]
    counts = collections.Counter(seen)
    repeated = sorted(n for n, k in counts.items() if k > 1)
    parts = ["received %d event(s), %d to %d, published up to %d" % (len(seen), seen[0], max(seen), last)]
    if missing:
        parts.append("lost %d: %s" % (len(missing), ranges(missing)))
    if repeated:
        parts.append("%d repeated (%d extra): %s" % (len(repeated), len(seen) - len(got), ranges(repeated)))
    if seen != sorted(seen):
        parts.append("out of order")
    return ", ".join(parts)


def cpp_gaps(f, last, sent_at_exit):
    """The same for a C++ subscriber's summary fields; it must have started before A exited."""
    if not f.get("received"):
        return "received nothing (published 1-%d)" % last
    parts = []
    if f["first"] > sent_at_exit:
        parts.append("first event %d, after A exited (at %d)" % (f["first"], sent_at_exit))
    if f["missing"]:
        parts.append("lost %d between %d and %d" % (f["missing"], f["first"], f["last"]))
    if f["last"] != last:
        parts.append("lost %s after its last one" % ranges(range(f["last"] + 1, last + 1))
                     if f["last"] < last else "last %d, beyond the %d published" % (f["last"], last))
    if f["repeated"]:
        parts.append("%d repeated" % f["repeated"])
    if f["out_of_order"]:
        parts.append("%d out of order" % f["out_of_order"])
    if not parts:
        return ""
    return "received %d event(s), %d to %d, published up to %d: %s" % (f["received"], f["first"], f["last"], last,
                                                                        ", ".join(parts))


def check_store(env, t, publisher, store_dir):
    """--store, after the events: A closed the database and B opened it; a topic created through B
    is stored. Stops B (by PID, exit 0 expected) to read the file. @return the problems seen."""
    problems = []
    if "the topic database is closed here" not in t.a_log:
        problems.append("router A did not say it closed the topic database: %s" % t.a_log[-600:])
    manager = IceStorm.TopicManagerPrx.checkedCast(publisher.ic.stringToProxy(publisher.manager))
    manager.create("after-takeover")
    b_log = log_text(t.b)
    if "open here; its contents came with the takeover" not in b_log:
        problems.append("router B did not say it opened the topic database after the catalog: %s" % b_log[-600:])
    env.procs.remove(t.b)
    rc = t.b.stop()
    if rc != 0:
        problems.append("router B: exit status %s on SIGTERM, expected 0" % rc)
    db = sqlite3.connect(os.path.join(store_dir, "moraine-topics.sqlite3"))
    try:
        stored = sorted(row[0] for row in db.execute("SELECT name FROM topics"))
    finally:
        db.close()
    if stored != sorted([TOPIC, "after-takeover"]):
        problems.append("the topic database holds %s, expected %s (A's topic and B's)" % (stored,
                                                                                         sorted([TOPIC, "after-takeover"])))
    print("    topic database: closed by A after its catalog went, opened by B; it holds %s" % stored)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--topics", choices=["icestorm", "embedded"], default="icestorm",
                    help="icestorm: the real IceStorm (icebox) behind the router; embedded: the routers' own topic "
                         "service (default icestorm)")
    ap.add_argument("--clients", type=int, default=10, help="subscribed Python clients")
    ap.add_argument("--rate", type=float, default=50.0, help="events/s published")
    ap.add_argument("--cpp-clients", type=int, default=None,
                    help="C++ subscribers (default: 2 if the C++ build dir exists, else 0)")
    ap.add_argument("--cpp-build-dir", default=None,
                    help="where tests/interop/cpp is built (default build/interop-cpp); giving it asks for C++ clients")
    ap.add_argument("--oneway", action="store_true",
                    help="subscribe oneway proxies (oneway events) instead of twoway, ordered")
    ap.add_argument("--store", action="store_true",
                    help="with embedded: the topic service keeps a database, which B opens once A lets go of it")
    ap.add_argument("--drain-ms", type=int, default=None,
                    help="A's takeover drain deadline, Moraine.Takeover.DrainTimeout (default: 20000 with icestorm, "
                         "%d with embedded)" % DRAIN_MS["embedded"])
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    embedded = args.topics == "embedded"
    if args.store and not embedded:
        ap.error("--store needs --topics embedded (IceStorm behind the router keeps its own database)")
    drain_ms = args.drain_ms if args.drain_ms is not None else DRAIN_MS[args.topics]
    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(120)
    subscribers = []
    cpp = []
    publisher = None
    ok = False
    if embedded:
        name = ("takeover_icestorm --topics embedded%s (sessions subscribed to the router's own topic service move, "
                "no event lost or repeated%s)" % ((" --store", ", its database with it") if args.store else ("", "")))
    else:
        name = "takeover_icestorm (sessions subscribed to IceStorm behind the router move, no event lost or repeated)"
    try:
        if args.cpp_clients is None and args.cpp_build_dir is None and not os.path.isdir(
                os.path.join(H.REPO, "build", "interop-cpp")):
            args.cpp_clients = 0
        elif args.cpp_clients is None:
            args.cpp_clients = 2
        n_cpp, takeover_exe = cpp_setup(env, args)  # builds tests/interop/cpp when asked for
        cpp_exe = os.path.join(os.path.dirname(takeover_exe), "moraine-interop-subscriber-client") if n_cpp else None
        H.check(not n_cpp or os.access(cpp_exe, os.X_OK), "the C++ subscriber client %s was not built" % cpp_exe)
        total = args.clients + n_cpp
        ports = {k: H.free_port() for k in ("client", "ws", "server")}
        sock_path = os.path.join(env.dir, "takeover.sock")
        cfg = os.path.join(env.dir, "router.cfg")
        props = {
            "Glacier2.InstanceName": "Glacier2",
            "Glacier2.Client.Endpoints": H.endpoint(ports["client"]) + ":" + H.endpoint(ports["ws"], "ws"),
            "Glacier2.Server.Endpoints": H.endpoint(ports["server"]),
            "Glacier2.CryptPasswords": env.passwords,
            "Glacier2.SessionTimeout": "30",
            "Moraine.Takeover.Socket": sock_path,
            "Moraine.Takeover.DrainTimeout": str(drain_ms),
        }
        ready = [(ports["client"], "Glacier2.Client.Endpoints")]
        if embedded:  # the routers' own topic service, in the routers' property file
            ports.update(tm=H.free_port(), pub=H.free_port())
            props.update({
                "IceStorm.InstanceName": "IceStorm",
                "IceStorm.TopicManager.Endpoints": H.endpoint(ports["tm"]),
                "IceStorm.Publish.Endpoints": H.endpoint(ports["pub"]),
                "IceStorm.Transient": "0" if args.store else "1",
                "IceStorm.Trace.Subscriber": "1",
                "Moraine.Drain.Timeout": str(EMBEDDED_SHUTDOWN_DRAIN_MS),
            })
            if args.store:
                store_dir = os.path.join(env.dir, "topics-db")
                os.mkdir(store_dir)
                props["IceStorm.LMDB.Path"] = store_dir
            ready += [(ports["tm"], "IceStorm.TopicManager.Endpoints"), (ports["pub"], "IceStorm.Publish.Endpoints")]
            topic_manager = "IceStorm/TopicManager:" + H.endpoint(ports["tm"])
        else:
            topic_manager = start_icestorm(env)
        H.write_properties(cfg, props)

        # 1. Router A, N subscribed sessions; 2. the publisher.
        a = env.start_ready("router-A", [env.moraine_bin, "--threads", "2", "--ice-config", cfg], ready)
        publisher = Publisher(env, topic_manager, args.rate)  # creates the topic
        proxies = ["Glacier2/router:" + H.endpoint(ports["client"]), "Glacier2/router:" + H.endpoint(ports["ws"], "ws")]
        for i in range(args.clients):
            subscribers.append(Subscriber(env, proxies[i % 2], topic_manager, i, TRANSPORTS[i % 2], args.oneway))
        for i in range(n_cpp):
            cpp.append(CppSubscriber(env, cpp_exe, proxies[i % 2], topic_manager, i, TRANSPORTS[i % 2], args.oneway))
        H.check(all(c.ready["transport"] == c.transport for c in cpp), "C++ subscribers' router connections: %s"
                % [c.ready for c in cpp])
        publisher.start()
        time.sleep(1.0)
        H.check(all(s.servant.snapshot() for s in subscribers), "subscribers got nothing through A: %s"
                % [len(s.servant.snapshot()) for s in subscribers])

        # 3. B takes over; A moves the sessions (icestorm: relays, closes IceStorm's connection), exits.
        at_exit = {}
        t_b = time.monotonic()

        def on_a_exit():
            at_exit.update(sent=publisher.sent, ok=publisher.ok, t=time.monotonic())
        t = take_over(env, a, cfg, sock_path, drain_ms, at_exit=on_a_exit,
                      moved_timeout=max(15, drain_ms / 1000.0 + 5) if embedded else 15)
        # From here on every problem is collected, so that a failure says all that went wrong.
        problems = []
        if t.moved != total:
            problems.append("router A moved %d of %d sessions%s" % (
                t.moved, total, "" if t.stayed is None else " (%d stayed in A, closed at its %.0f s deadline)"
                % (t.stayed, drain_ms / 1000.0)))
        if t.t_exit >= drain_ms / 2000.0:
            problems.append("router A exited %.1f s after B started (drain deadline %.0f s): the sessions did not "
                            "move early" % (t.t_exit, drain_ms / 1000.0))
        relayed = re.search(r"takeover: relayed (\d+) back-end request", t.a_log)
        if relayed is None:
            problems.append("router A did not say how many requests it relayed: %s" % t.a_log[-800:])

        # 4. Events go on through B only; then every subscriber must have them all.
        time.sleep(1.5)
        publisher.stop()
        last = publisher.sent
        if publisher.errors:
            problems.append("%d publish(es) failed: event %d %s; ... event %d %s" % (
                len(publisher.errors), publisher.errors[0][0], publisher.errors[0][1], publisher.errors[-1][0],
                publisher.errors[-1][1]))
        if publisher.ok <= at_exit["ok"]:
            problems.append("nothing was published after A exited (%d attempt(s), all failed)"
                            % (last - at_exit["sent"]))
        H.wait_until(lambda: all(s.servant.snapshot()[-1:] == [last] for s in subscribers), 5)
        time.sleep(0.3)  # the C++ subscribers' last events, delivered with the Python ones
        for s in subscribers:
            gap = gaps(s.servant.snapshot(), last)
            if gap:
                problems.append("Python subscriber %d (%s): %s" % (s.index, s.transport, gap))
        received = sum(len(s.servant.snapshot()) for s in subscribers)
        cpp_summaries = [c.stop() for c in cpp]
        for c, f in zip(cpp, cpp_summaries):
            gap = cpp_gaps(f, last, at_exit["sent"])
            if gap:
                problems.append("C++ subscriber %d (%s): %s" % (c.index, c.transport, gap))
        cpp_received = sum(f.get("received", 0) for f in cpp_summaries)
        lost = any(p.startswith(("Python subscriber", "C++ subscriber")) for p in problems)

        with publisher.lock:
            connections, closed = list(publisher.connections), list(publisher.closed)
        print("    %d subscribed session(s) (%d Python, %d C++; %d tcp, %d ws) of %d moved from A (2 shards) to B "
              "(3 shards) in %d ms, %s stayed in A; A exited 0 %.2f s after B started (drain deadline %.0f s)"
              % (t.moved, args.clients, n_cpp, (args.clients + 1) // 2 + (n_cpp + 1) // 2,
                 args.clients // 2 + n_cpp // 2, total, t.move_ms, "?" if t.stayed is None else t.stayed,
                 t.t_exit, drain_ms / 1000.0))
        print("    %d events published at %.0f/s (%d before A exited, %d failed); received %d by the Python and %d by "
              "the C++ subscribers, %s (%s, topics %s); events and other requests A relayed to B: %s"
              % (last, args.rate, at_exit["sent"], len(publisher.errors), received, cpp_received,
                 "some subscribers lost or repeated events" if lost else
                 "each subscriber every one from its first on, once and in order",
                 "oneway" if args.oneway else "ordered", args.topics, relayed.group(1) if relayed else "?"))
        if len(connections) <= 1:
            print("    publisher: %d connection to the Publish endpoint, never reconnected%s"
                  % (len(connections), "" if not closed else " (closed %+.2f s after B started)" % (closed[0] - t_b)))
        else:
            print("    publisher: reconnected %d time(s) (%d connections to the Publish endpoint; new ones at %s s "
                  "after B started, A exited at %.2f s; closes at %s s)"
                  % (len(connections) - 1, len(connections),
                     ", ".join("%+.2f" % (at - t_b) for at, _ in connections[1:]), at_exit["t"] - t_b,
                     ", ".join("%+.2f" % (at - t_b) for at in closed) or "none"))
        if args.store:
            problems += check_store(env, t, publisher, store_dir)
        H.check(not problems, "%d problem(s):\n      %s" % (len(problems), "\n      ".join(problems)))
        ok = True
    except (H.Failure, OSError, Ice.Exception) as e:
        print("FAIL %s: %s" % (name, e))
    finally:
        if publisher is not None:
            if publisher.is_alive():
                publisher.stop()
            publisher.close()
        for s in subscribers:
            s.close()
        for c in cpp:
            c.close()
        watchdog.cancel()
    return env.finish(name, ok)  # B must exit 0 on SIGTERM


if __name__ == "__main__":
    sys.exit(main())
