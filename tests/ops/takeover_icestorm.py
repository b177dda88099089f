#!/usr/bin/python3
"""Live upgrade with IceStorm behind the router: subscribed sessions move, and no event is lost
or repeated.

  /usr/bin/python3 tests/ops/takeover_icestorm.py [--moraine-bin build/bin/moraine-router]
      [--clients N] [--cpp-clients M] [--cpp-build-dir DIR] [--rate R] [--oneway] [--keep]

The classic Glacier2 deployment: the real IceStorm (icebox, Ice 3.7, transient) is a back end
behind the router, and each client subscribes its callback object to a topic through its
session. IceStorm delivers to the router's server endpoint, which forwards to the client. All on
loopback, with tests/interop/harness.py; no retries in the clients (Ice.RetryIntervals=-1).

  1. IceStorm starts (topic `ticks`); router A (2 shards) starts; N Python clients (default 10)
     and M C++ clients (tests/interop/cpp/subscriber_client.cpp, one process each; default 2 when
     DIR, default build/interop-cpp, exists, else 0; asking for them without DIR is a failure),
     in each language every other one over ws, each create a session, register a Demo::Callback servant in their
     category and subscribe it through the router with QoS reliability=ordered (IceStorm then
     sends each event twoway and waits for its reply before the next), or with --oneway a oneway
     proxy of it (IceStorm sends oneway events, nothing comes back);
  2. a publisher, connected to IceStorm directly, publishes ping("N") for N = 1, 2, ... at R
     events/s (default 50);
  3. router B (3 shards) starts with --takeover: A moves the N sessions and relays the events
     IceStorm still sends to it (docs/takeover.md "Back ends"), then, holding no session,
     closes IceStorm's connection with Ice's close-connection message, and IceStorm goes on
     through B; A must exit 0 well before its 20 s drain deadline;
  4. 1.5 s after A exited the publisher stops; every subscriber must then have received every
     event from its first one to the last published, each once and in order.

Prints PASS with the figures (sessions moved, events published and received, events A relayed),
or FAIL with the reason (logs kept), and exits 0 or 1. Every process is stopped by PID; every
wait is bounded.
"""
import argparse
import os
import re
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
from takeover_sessions import cpp_setup, wait_log  # noqa: E402
import subprocess  # noqa: E402

Demo = H.Demo
DRAIN_MS = 20000
TOPIC = "ticks"


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
    """One Ice client: a session, a servant in its category, subscribed to TOPIC through the router."""

    def __init__(self, env, proxy, topic_manager, index, oneway):
        self.index = index
        self.ic = env.communicator(extra={"Ice.Default.Router": proxy})
        self.router = Glacier2.RouterPrx.checkedCast(self.ic.getDefaultRouter())
        self.router.createSession("alice", H.CRYPT_USERS["alice"])
        self.category = self.router.getCategoryForClient()
        adapter = self.ic.createObjectAdapterWithRouter("Sub%d" % index, self.router)
        self.servant = SequenceRecorder()
        me = adapter.add(self.servant, Ice.Identity("sub", self.category))
        adapter.activate()
        manager = IceStorm.TopicManagerPrx.checkedCast(self.ic.stringToProxy(topic_manager))
        if oneway:  # IceStorm sends oneway events to a oneway subscriber proxy
            manager.retrieve(TOPIC).subscribeAndGetPublisher({}, me.ice_oneway())
        else:
            manager.retrieve(TOPIC).subscribeAndGetPublisher({"reliability": "ordered"}, me)

    def close(self):
        self.ic.destroy()


class Publisher(threading.Thread):
    """Publishes ping("1"), ping("2"), ... on TOPIC at `rate` events/s, straight to IceStorm."""

    def __init__(self, env, topic_manager, rate):
        super().__init__(daemon=True)
        self.ic = env.communicator()
        manager = IceStorm.TopicManagerPrx.checkedCast(self.ic.stringToProxy(topic_manager))
        try:
            topic = manager.create(TOPIC)
        except IceStorm.TopicExists:
            topic = manager.retrieve(TOPIC)
        self.callback = Demo.CallbackPrx.uncheckedCast(topic.getPublisher())  # twoway: IceStorm took it
        self.period = 1.0 / rate
        self.sent = 0
        self.errors = []
        self.stopping = threading.Event()

    def run(self):
        next_at = time.monotonic()
        while not self.stopping.is_set():
            try:
                self.callback.ping(str(self.sent + 1))
                self.sent += 1
            except Ice.Exception as e:
                self.errors.append("%s: %s" % (type(e).__name__, str(e).strip()[:200]))
            next_at += self.period
            time.sleep(max(0.0, next_at - time.monotonic()))

    def stop(self):
        self.stopping.set()
        self.join(10)

    def close(self):
        self.ic.destroy()


class CppSubscriber:
    """One C++ Ice 3.7 subscriber process (moraine-interop-subscriber-client): its session and
    subscription live in the process; `stop` on its stdin asks for its summary line."""

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


def gaps(seen, last):
    """What is wrong with one subscriber's sequence: empty if it is first..last, each once, in order."""
    if not seen:
        return "nothing received"
    expected = list(range(seen[0], last + 1))
    if seen == expected:
        return ""
    missing = sorted(set(expected) - set(seen))
    repeated = len(seen) - len(set(seen))
    return "first %d, last %d of %d: %d missing (%s), %d repeated, %s" % (
        seen[0], seen[-1], last, len(missing), missing[:5], repeated,
        "in order" if seen == sorted(seen) else "out of order")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--clients", type=int, default=10, help="subscribed Python clients")
    ap.add_argument("--rate", type=float, default=50.0, help="events/s published")
    ap.add_argument("--cpp-clients", type=int, default=None,
                    help="C++ subscribers (default: 2 if the C++ build dir exists, else 0)")
    ap.add_argument("--cpp-build-dir", default=None,
                    help="where tests/interop/cpp is built (default build/interop-cpp); giving it asks for C++ clients")
    ap.add_argument("--oneway", action="store_true",
                    help="subscribe oneway proxies (IceStorm sends oneway events) instead of twoway, ordered")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(120)
    subscribers = []
    cpp = []
    publisher = None
    ok = False
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
        topic_manager = start_icestorm(env)
        ports = {k: H.free_port() for k in ("client", "ws", "server")}
        sock_path = os.path.join(env.dir, "takeover.sock")
        cfg = os.path.join(env.dir, "router.cfg")
        H.write_properties(cfg, {
            "Glacier2.InstanceName": "Glacier2",
            "Glacier2.Client.Endpoints": H.endpoint(ports["client"]) + ":" + H.endpoint(ports["ws"], "ws"),
            "Glacier2.Server.Endpoints": H.endpoint(ports["server"]),
            "Glacier2.CryptPasswords": env.passwords,
            "Glacier2.SessionTimeout": "30",
            "Moraine.Takeover.Socket": sock_path,
            "Moraine.Takeover.DrainTimeout": str(DRAIN_MS),
        })

        # 1. Router A, N subscribed sessions; 2. the publisher.
        a = env.start_ready("router-A", [env.moraine_bin, "--threads", "2", "--ice-config", cfg],
                            [(ports["client"], "Glacier2.Client.Endpoints")])
        publisher = Publisher(env, topic_manager, args.rate)  # creates the topic
        proxies = ["Glacier2/router:" + H.endpoint(ports["client"]), "Glacier2/router:" + H.endpoint(ports["ws"], "ws")]
        for i in range(args.clients):
            subscribers.append(Subscriber(env, proxies[i % 2], topic_manager, i, args.oneway))
        transports = ["tcp", "ws"]
        for i in range(n_cpp):
            cpp.append(CppSubscriber(env, cpp_exe, proxies[i % 2], topic_manager, i, transports[i % 2], args.oneway))
        H.check(all(c.ready["transport"] == c.transport for c in cpp), "C++ subscribers' router connections: %s"
                % [c.ready for c in cpp])
        publisher.start()
        time.sleep(1.0)
        H.check(all(s.servant.snapshot() for s in subscribers), "subscribers got nothing through A: %s"
                % [len(s.servant.snapshot()) for s in subscribers])

        # 3. B takes over; A moves the sessions, relays, closes IceStorm's connection, exits.
        t0 = time.monotonic()
        b = env.start("router-B", [env.moraine_bin, "--threads", "3", "--ice-config", cfg, "--takeover", sock_path])
        moved = wait_log(a, r"takeover: moved (\d+) session\(s\) \((\d+) bytes of session state\) to pid \d+ in (\d+) ms",
                         15)
        H.check(moved is not None, "router A did not log the sessions it moved%s" % a.log_tail())
        try:
            rc = a.popen.wait(DRAIN_MS / 1000.0 + 10)
        except Exception:  # noqa: BLE001  (subprocess.TimeoutExpired: still running is the failure)
            rc = None
        t_exit = time.monotonic() - t0
        sent_at_exit = publisher.sent
        a_log = log_text(a)
        env.procs.remove(a)  # its exit is the test's doing
        a.log.close()
        H.check(rc == 0, "router A: exit status %s, expected 0%s" % (rc, a_log[-800:]))
        n_moved = int(moved.group(1))
        H.check(n_moved == total, "router A moved %d of %d sessions: %s" % (n_moved, total, a_log[-800:]))
        H.check(t_exit < DRAIN_MS / 2000.0, "router A exited %.1f s after B started: the sessions did not move early"
                % t_exit)
        relayed = re.search(r"takeover: relayed (\d+) back-end request", a_log)
        H.check(relayed is not None, "router A did not say how many requests it relayed: %s" % a_log[-800:])

        # 4. Events go on through B only; then every subscriber must have them all.
        time.sleep(1.5)
        publisher.stop()
        H.check(not publisher.errors, "the publisher failed: %s" % publisher.errors[:3])
        last = publisher.sent
        H.check(last > sent_at_exit, "nothing was published after A exited")
        H.wait_until(lambda: all(s.servant.snapshot()[-1:] == [last] for s in subscribers), 5)
        time.sleep(0.3)  # the C++ subscribers' last events, delivered with the Python ones
        problems = {s.index: gaps(s.servant.snapshot(), last) for s in subscribers}
        problems = {i: p for i, p in problems.items() if p}
        H.check(not problems, "subscribers' sequences: %s" % problems)
        received = sum(len(s.servant.snapshot()) for s in subscribers)
        cpp_summaries = [c.stop() for c in cpp]
        bad = [(c.index, f) for c, f in zip(cpp, cpp_summaries)
               if f.get("last") != last or f.get("first", last + 1) > sent_at_exit or f.get("missing")
               or f.get("repeated") or f.get("out_of_order")]
        H.check(not bad, "C++ subscribers' sequences (published up to %d): %s" % (last, bad))
        cpp_received = sum(f["received"] for f in cpp_summaries)
        print("    %d subscribed sessions (%d Python, %d C++; %d tcp, %d ws) moved from A (2 shards) to B (3 shards) "
              "in %s ms; A exited 0 %.2f s after B started"
              % (n_moved, args.clients, n_cpp, (args.clients + 1) // 2 + (n_cpp + 1) // 2,
                 args.clients // 2 + n_cpp // 2, moved.group(3), t_exit))
        print("    %d events published at %.0f/s (%d before A exited); received %d by the Python and %d by the C++ "
              "subscribers, each subscriber every one from its first on, once and in order (%s); events and other "
              "requests A relayed to B: %s"
              % (last, args.rate, sent_at_exit, received, cpp_received, "oneway" if args.oneway else "ordered",
                 relayed.group(1)))
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
