#!/usr/bin/python3
"""Several moraine-router processes on one client port (Moraine.Client.ReusePort, SO_REUSEPORT).

  /usr/bin/python3 tests/ops/reuse_port.py [--moraine-bin build/bin/moraine-router] [--sessions 24] [--keep]

All on loopback, with tests/interop/harness.py (the Python Demo back end, real Ice 3.7 clients):

  1. router A with Moraine.Client.ReusePort=1 on client port P (its own server port);
  2. a router without the key on P must stop at start-up by itself (exit 1) with a message naming
     the endpoint, "Address already in use" and Moraine.Client.ReusePort;
  3. router B with the key on P starts and logs that it shares the port;
  4. --sessions Ice clients (one communicator each, router proxy `Glacier2/router:tcp -h
     127.0.0.1 -p P`) create sessions: both routers must hold some (the kernel hashes the
     connections over the 2 x 2 shards' sockets; which router holds a session is read from the
     routers' Glacier2.Trace.Session lines);
  5. router A is killed (SIGKILL, by PID): every client calls once; A's clients get a connection
     exception, B's clients' calls succeed; A's clients create new sessions through the same
     proxy (same port), which must all land on B, and call again;
  6. A is started again with the key on P and --sessions more clients spread over both again.

Each router also serves the topic service on TopicManager and Publish ports of its own, but
both publish one shared address that neither binds (IceStorm.TopicManager.PublishedEndpoints,
IceStorm.Publish.PublishedEndpoints: 127.0.0.1 and a port nobody listens on). In step 4 every
client, through its session, creates a topic of its own at `IceStorm/TopicManager` on that
shared address, subscribes a servant of its session, publishes a tick through the topic's
publisher proxy (also on the shared address) and receives it: the router it landed on must
have served all of it from its own topic service (the topic is found at that router's bound
TopicManager port, and not at the other's).

Prints PASS with the counts and times, or FAIL with the reason (logs kept), and exits 0 or 1.
Every process is stopped by PID; each wait is bounded.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
import Glacier2  # noqa: E402  (after harness: see harness._import_glacier2)
import Ice  # noqa: E402
import IceStorm  # noqa: E402
from routed_client import RoutedClient, log_text  # noqa: E402

Demo = H.Demo


def topic_props(ports, shared):
    """The topic service on this router's own ports, published on the shared address."""
    return {
        "IceStorm.InstanceName": "IceStorm",
        "IceStorm.TopicManager.Endpoints": H.endpoint(ports["tm"]),
        "IceStorm.TopicManager.PublishedEndpoints": H.endpoint(shared["tm"]),
        "IceStorm.Publish.Endpoints": H.endpoint(ports["pub"]),
        "IceStorm.Publish.PublishedEndpoints": H.endpoint(shared["pub"]),
        "IceStorm.Transient": "1",
    }


class ClockI(Demo.Clock):
    """A session's subscriber: the ticks it got."""

    def __init__(self):
        self.got = []

    def tick(self, t, current):
        self.got.append(t)


def router_props(env, client_port, server_port, reuse):
    props = {
        "Glacier2.InstanceName": "Glacier2",
        "Glacier2.Client.Endpoints": H.endpoint(client_port),
        "Glacier2.Server.Endpoints": H.endpoint(server_port),
        "Glacier2.Trace.Session": "1",
        "Glacier2.CryptPasswords": env.passwords,
        "Glacier2.SessionTimeout": "30",
    }
    if reuse:
        props["Moraine.Client.ReusePort"] = "1"
    return props


class Client(RoutedClient):
    def use_topics(self, proxy):
        """Through the session: a topic of its own on the shared TopicManager address, a
        subscriber servant, one tick through the topic's publisher, received within 3 s."""
        tm = IceStorm.TopicManagerPrx.uncheckedCast(self.ic.stringToProxy("IceStorm/TopicManager:" + proxy))
        self.topic_name = "t-" + self.category
        topic = tm.create(self.topic_name)
        adapter = self.ic.createObjectAdapterWithRouter("", self.router)
        adapter.activate()
        clock = ClockI()
        sub = adapter.add(clock, Ice.Identity("clock", self.category))
        topic.subscribeAndGetPublisher({}, sub.ice_oneway())
        Demo.ClockPrx.uncheckedCast(topic.getPublisher().ice_oneway()).tick(self.topic_name)
        H.check(H.wait_until(lambda: clock.got == [self.topic_name], 3.0),
                "a session's subscriber got %s from its own topic, expected [%r]" % (clock.got, self.topic_name))

    def where(self, routers):
        """The name of the router whose log traced this client's session, or None."""
        names = self.traced_by(routers)
        return names[0] if names else None


def locate(clients, routers, timeout=3.0):
    """{client: router name} once every session is found in a log (trace lines are written at once,
    but read through the file system)."""
    found = {}
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for c in clients:
            if c not in found:
                w = c.where(routers)
                if w:
                    found[c] = w
        if len(found) == len(clients):
            return found
        time.sleep(0.05)
    raise H.Failure("%d of %d sessions not found in any router's log" % (len(clients) - len(found), len(clients)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--sessions", type=int, default=24)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    clients = []
    ok = False
    name = "reuse_port (2 moraine-routers on one client port)"
    try:
        hello = env.hello_proxy()
        port = H.free_port()
        servers = {"A": H.free_port(), "B": H.free_port(), "X": H.free_port()}
        topic_ports = {r: {"tm": H.free_port(), "pub": H.free_port()} for r in ("A", "B")}
        shared = {"tm": H.free_port(), "pub": H.free_port()}  # published by both, bound by neither
        cfgs = {}
        for r, reuse in (("A", True), ("B", True), ("X", False)):
            cfgs[r] = os.path.join(env.dir, "router-%s.cfg" % r)
            props = router_props(env, port, servers[r], reuse)
            if r in topic_ports:
                props.update(topic_props(topic_ports[r], shared))
            H.write_properties(cfgs[r], props)

        def start(r, n):
            cmd = [env.moraine_bin, "--threads", "2", "--ice-config", cfgs[r]]
            return env.start_ready("router-%s%d" % (r, n), cmd,
                                   [(port, "Glacier2.Client.Endpoints"), (servers[r], "Glacier2.Server.Endpoints"),
                                    (topic_ports[r]["tm"], "IceStorm.TopicManager.Endpoints")])

        routers = {"A": start("A", 1), "B": None}

        # 2. Without the key: refused at start, by itself, saying why.
        x = env.start("router-X", [env.moraine_bin, "--threads", "2", "--ice-config", cfgs["X"]])
        try:
            rc = x.popen.wait(5)
        except Exception:  # noqa: BLE001  (subprocess.TimeoutExpired: still running is the failure)
            rc = None
        text = log_text(x)
        x.stop()
        env.procs.remove(x)
        H.check(rc == 1, "a router without the key on a port in use: exit status %s, expected 1%s" % (rc, x.log_tail()))
        for needle in ("cannot listen on tcp -h 127.0.0.1 -p %d" % port, "Address already in use",
                       "Moraine.Client.ReusePort"):
            H.check(needle in text, "the refusal does not say %r: %s" % (needle, text.strip()[-400:]))

        # 3. With the key: B joins.
        routers["B"] = start("B", 1)
        H.check("sharing it (SO_REUSEPORT)" in log_text(routers["B"]),
                "router B did not log that it shares the port:%s" % routers["B"].log_tail())

        # 4. Sessions spread over both.
        proxy = "Glacier2/router:" + H.endpoint(port)
        for _ in range(args.sessions):
            c = Client(env, proxy, hello)
            clients.append(c)
            c.open()
        where = locate(clients, routers)
        on_a = [c for c in clients if where[c] == "A"]
        on_b = [c for c in clients if where[c] == "B"]
        H.check(on_a and on_b, "sessions not spread: %d on A, %d on B" % (len(on_a), len(on_b)))
        report = ["%d sessions on one port: %d on A, %d on B" % (len(clients), len(on_a), len(on_b))]

        # 4b. Topics through the shared published address: each session's own router serves them.
        for c in clients:
            c.use_topics(H.endpoint(shared["tm"]))
        with env.communicator() as ic:
            own = {r: IceStorm.TopicManagerPrx.uncheckedCast(
                ic.stringToProxy("IceStorm/TopicManager:" + H.endpoint(topic_ports[r]["tm"]))) for r in ("A", "B")}
            names = {r: set(own[r].retrieveAll().keys()) for r in ("A", "B")}
        for c in clients:
            other = "B" if where[c] == "A" else "A"
            H.check(c.topic_name in names[where[c]] and c.topic_name not in names[other],
                    "topic %s of a session on %s: on A %s, on B %s" % (c.topic_name, where[c],
                    c.topic_name in names["A"], c.topic_name in names["B"]))
        report.append("every session created, subscribed to and published on its topic at the shared TopicManager"
                      " address 127.0.0.1:%d; each topic is in its own router's topic service (%d on A, %d on B)"
                      % (shared["tm"], len(names["A"]), len(names["B"])))

        # 5. Kill A: its clients fail over to the same port, and reach B.
        a = routers["A"]
        t_kill = time.monotonic()
        env.kill(a)
        routers["A"] = None
        failed = []
        for c in clients:
            try:
                c.hello.sayHello("after-kill")
            except Ice.LocalException as e:
                failed.append((c, e.ice_id()))
        H.check(sorted(id(c) for c, _ in failed) == sorted(id(c) for c in on_a),
                "after the kill, %d calls failed (%s), expected exactly A's %d clients"
                % (len(failed), sorted(set(e for _, e in failed)), len(on_a)))
        for c, _ in failed:
            c.open()
        t_back = time.monotonic()
        moved = locate([c for c, _ in failed], routers)
        H.check(all(w == "B" for w in moved.values()), "a new session is not on B")
        report.append("A killed: its %d clients' next call raised %s; all %d had new sessions on B (same port)"
                      " %.0f ms after the kill; B's %d clients were not disturbed"
                      % (len(on_a), ", ".join(sorted(set(e.lstrip(":") for _, e in failed))), len(failed),
                         (t_back - t_kill) * 1e3, len(on_b)))

        # 6. A comes back on the same port and takes its share of new connections.
        routers["A"] = start("A", 2)
        fresh = []
        for _ in range(args.sessions):
            c = Client(env, proxy, hello)
            clients.append(c)
            fresh.append(c)
            c.open()
        where = locate(fresh, routers)
        back_a = sum(1 for c in fresh if where[c] == "A")
        H.check(0 < back_a < len(fresh), "after A restarted, %d of %d new sessions on A" % (back_a, len(fresh)))
        report.append("A restarted with the key: %d of %d new sessions on A" % (back_a, len(fresh)))
        ok = True
        for line in report:
            print("    " + line)
    except (H.Failure, OSError, Ice.Exception) as e:
        print("FAIL %s: %s" % (name, e))
    finally:
        for c in clients:
            c.close()
    return env.finish(name, ok)  # PASS, or where the logs are; a router not exiting 0 on SIGTERM fails


if __name__ == "__main__":
    sys.exit(main())
