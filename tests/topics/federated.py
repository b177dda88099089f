#!/usr/bin/python3
"""A federated upstream (topics.upstream.federated): two edge topic services keep `time` linked
from each of two backbone members that know nothing of each other; a real Ice 3.7.8 subscriber on
each edge gets every tick, whichever member it was published to, while one member is killed and
started again. Loopback, free ports, bounded waits; stops what it started by PID.

  federated.py --bin build/bin/moraine-topics [--members moraine|icestorm]

The members are two moraine-topics (default) or two real IceStorm 3.7.8 (icebox, transient). The
edges are moraine-topics with `topics.upstream` naming both members and `federated: true`, each
under its own link category (edge1, edge2): both link `time` from both members (seen from the
members' side with Topic::getLinkInfoSeq), which also checks that two links to topics of one name
in two services are two links. Then, twoway through each member's publisher object: a tick to
member A and one to member B reach both subscribers; member A is killed (SIGKILL) and a tick to B
still reaches both; A is started again on its ports, knowing nothing, and once the edges' checks
have linked `time` from it again, a tick to A reaches both. Each subscriber must get each tick
exactly once.
"""
import argparse, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice("-I/usr/share/ice/slice " + os.path.join(HERE, "..", "interop", "Demo.ice"))
Ice.loadSlice("-I/usr/share/ice/slice /usr/share/ice/slice/IceStorm/IceStorm.ice")
import Demo, IceStorm  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import ports  # noqa: E402

ICEBOX = "/usr/bin/icebox"
CHECK_MS = 200  # the edges' check interval: how soon a restarted member is linked again


class Fail(Exception):
    pass


def wait_port(port, proc, what, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise Fail("%s exited with %s" % (what, proc.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise Fail("%s not listening on %d" % (what, port))


class Clock(Demo.Clock):
    def __init__(self):
        self.got, self.cond = [], threading.Condition()

    def tick(self, t, current):
        with self.cond:
            self.got.append(t)
            self.cond.notify_all()

    def wait_for(self, t, timeout=10):
        with self.cond:
            return self.cond.wait_for(lambda: t in self.got, timeout)


class Member:
    """One backbone member on its own TopicManager and Publish ports, started again on the same."""

    def __init__(self, kind, bin_path, tmp, name):
        self.kind, self.bin, self.tmp, self.name = kind, bin_path, tmp, name
        self.tm, self.pub = ports.free_port("127.0.0.1"), ports.free_port("127.0.0.1")
        self.proc = None

    def start(self):
        if self.kind == "icestorm":
            cfg = os.path.join(self.tmp, self.name + ".cfg")
            with open(cfg, "w") as f:
                f.write("IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config=%s\n"
                        "IceStorm.InstanceName=Storm\nIceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p %d\n"
                        "IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p %d\nIceStorm.Transient=1\n"
                        "IceStorm.Discard.Interval=1\nIce.Warn.Connections=0\n" % (cfg, self.tm, self.pub))
            cmd = [ICEBOX, "--Ice.Config=" + cfg]
        else:
            cmd = [self.bin, "--instance-name", "Storm", "--topic-manager", "tcp -h 127.0.0.1 -p %d" % self.tm,
                   "--publish", "tcp -h 127.0.0.1 -p %d" % self.pub, "--threads", "1"]
        self.proc = subprocess.Popen(cmd)
        wait_port(self.tm, self.proc, self.name)
        wait_port(self.pub, self.proc, self.name)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)

    def manager(self, ic):
        return IceStorm.TopicManagerPrx.uncheckedCast(
            ic.stringToProxy("Storm/TopicManager:tcp -h 127.0.0.1 -p %d" % self.tm))

    def links(self, ic):
        """The link categories of `time`'s links here (empty while the topic does not exist)."""
        try:
            topic = self.manager(ic).retrieve("time")
        except (IceStorm.NoSuchTopic, Ice.LocalException):
            return set()
        return {i.theTopic.ice_getIdentity().category for i in topic.getLinkInfoSeq()}

    def publisher(self, ic):
        """The topic's publisher object here, twoway (the Publish port is this member's own)."""
        return Demo.ClockPrx.uncheckedCast(self.manager(ic).retrieve("time").getPublisher().ice_twoway())


def start_edge(bin_path, tmp, name, members):
    tm, pub = ports.free_port("127.0.0.1"), ports.free_port("127.0.0.1")
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write("topics:\n  enabled: true\n  instance_name: %s\n  transient: true\n"
                "  topic_manager_endpoints: \"tcp -h 127.0.0.1 -p %d\"\n  publish_endpoints: \"tcp -h 127.0.0.1 -p %d\"\n"
                "  upstream:\n    topic_manager: \"Storm/TopicManager:%s\"\n    topics: [time]\n"
                "    link_category: %s\n    check_interval_ms: %d\n    federated: true\n"
                % (name, tm, pub, ":".join("tcp -h 127.0.0.1 -p %d" % m.tm for m in members), name, CHECK_MS))
    proc = subprocess.Popen([bin_path, "--config", path, "--threads", "1"])
    wait_port(tm, proc, name)
    return proc, tm


def wait_until(pred, what, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise Fail(what)


def run(a, tmp, procs):
    members = [Member(a.members, a.bin, tmp, n) for n in ("member-a", "member-b")]
    for m in members:
        m.start()
        procs.append(lambda m=m: m.proc)
    edges = []
    for name in ("edge1", "edge2"):
        proc, tm = start_edge(a.bin, tmp, name, members)
        procs.append(lambda p=proc: p)
        edges.append((name, tm))
    with Ice.initialize(["t", "--Ice.Warn.Connections=0"]) as ic:
        for m in members:
            wait_until(lambda m=m: m.links(ic) == {"edge1", "edge2"},
                       "%s: `time` not linked from both edges (links: %s)" % (m.name, m.links(ic)))
        adapter = ic.createObjectAdapterWithEndpoints("Sub", "tcp -h 127.0.0.1")
        adapter.activate()
        clocks = []
        for name, tm in edges:
            clock = Clock()
            sub = adapter.addWithUUID(clock).ice_oneway()
            manager = IceStorm.TopicManagerPrx.uncheckedCast(ic.stringToProxy("%s/TopicManager:tcp -h 127.0.0.1 -p %d"
                                                                               % (name, tm)))
            manager.retrieve("time").subscribeAndGetPublisher({}, sub)
            clocks.append((name, clock))

        def tick(member, t):
            member.publisher(ic).tick(t)
            for name, clock in clocks:
                if not clock.wait_for(t):
                    raise Fail("%s's subscriber did not get tick %s (published to %s); it got %s"
                               % (name, t, member.name, clock.got))

        a_, b_ = members
        tick(a_, "a1")
        tick(b_, "b1")
        a_.kill()
        tick(b_, "b2")
        a_.start()
        wait_until(lambda: a_.links(ic) == {"edge1", "edge2"},
                   "%s started again: `time` not linked from both edges again (links: %s)" % (a_.name, a_.links(ic)))
        tick(a_, "a2")
        time.sleep(0.3)  # a duplicate would come right behind
        for name, clock in clocks:
            if sorted(clock.got) != ["a1", "a2", "b1", "b2"]:
                raise Fail("%s's subscriber got %s, expected each of a1, b1, b2, a2 once" % (name, clock.got))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-topics"))
    ap.add_argument("--members", choices=("moraine", "icestorm"), default="moraine")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="moraine-federated-")
    procs = []
    try:
        run(a, tmp, procs)
        print("PASS federated upstream (%s members): two edges linked from both members, every tick once through "
              "either member, through a member's death and its restart" % a.members)
        return 0
    except (Fail, Ice.Exception) as e:
        print("FAIL federated upstream (%s members): %s" % (a.members, e))
        return 1
    finally:
        for get in procs:
            p = get()
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
