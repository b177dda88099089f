"""The topic database: topics, subscribers and links survive a restart of the router (a crash:
SIGKILL by PID), as IceStorm's default (LMDB) keeps them.

moraine-router: one process with its topic service, `IceStorm.Transient=0` and
`IceStorm.LMDB.Path` naming a directory of the run. glacier2router: the router and the real
IceStorm 3.7.8 (icebox) from the same property file, killed and restarted together. The
subscribers are servants of this test process on a fixed port (direct proxies): they outlive
the restart, as a back-end subscriber would.
"""
import os
import time

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import IceStorm  # noqa: E402
from harness import Demo, Failure, check
from scenarios import scenario, short, unique
from scenarios_icestorm import ClockI, ids, idstr


class PersistentTopics:
    """The router under test with a persistent topic service on fixed ports, restarted on demand
    (SIGKILL, then a fresh process on the same file and database)."""

    def __init__(self, env):
        self.env = env
        self.client_port, self.tm_port, self.pub_port = H.free_port(), H.free_port(), H.free_port()
        self.db = os.path.join(env.dir, "topic-store-db")
        os.makedirs(self.db, exist_ok=True)
        self.cfg = os.path.join(env.dir, "router-topic-store.cfg")
        H.write_properties(self.cfg, {
            "Glacier2.InstanceName": "Glacier2",
            "Glacier2.Client.Endpoints": H.endpoint(self.client_port),
            "Glacier2.CryptPasswords": env.passwords,
            "IceStorm.InstanceName": "IceStorm",
            "IceStorm.TopicManager.Endpoints": H.endpoint(self.tm_port),
            "IceStorm.Publish.Endpoints": H.endpoint(self.pub_port),
            "IceStorm.Transient": "0",
            "IceStorm.LMDB.Path": self.db,
            "IceStorm.LMDB.MapSize": "16",  # MiB (IceStorm; a warning for moraine-router)
            "Ice.Warn.Connections": "0"})
        self.starts = 0
        self.procs = []

    def start(self):
        """Starts the router (and icebox for glacier2router); returns seconds until all listen."""
        self.starts += 1
        t0 = time.monotonic()
        topic_ports = [(self.tm_port, "IceStorm.TopicManager.Endpoints"), (self.pub_port, "IceStorm.Publish.Endpoints")]
        client = [(self.client_port, "Glacier2.Client.Endpoints")]
        if self.env.flavour == "glacier2":
            box = os.path.join(self.env.dir, "icebox-topic-store.cfg")
            H.write_properties(box, {"IceBox.Service.IceStorm": "IceStormService,37:createIceStorm --Ice.Config=" + self.cfg,
                                     "Ice.Warn.Connections": "0"})
            self.procs = [self.env.start_ready("icebox-topic-store-%d" % self.starts,
                                               ["/usr/bin/icebox", "--Ice.Config=" + box], topic_ports),
                          self.env.start_ready("topic-store-router-%d" % self.starts,
                                               ["/usr/bin/glacier2router", "--Ice.Config=" + self.cfg], client)]
        else:
            # Not named router-*: the harness would count the killed ones as unclean exits; stop()
            # checks the last one's instead.
            self.procs = [self.env.start_ready("topic-store-router-%d" % self.starts,
                                               [self.env.moraine_bin, "--Ice.Config=" + self.cfg], client + topic_ports)]
        return time.monotonic() - t0

    def kill(self):
        for p in self.procs:
            p.popen.kill()  # SIGKILL by PID: a crash, nothing flushed on the way out
            p.popen.wait(5)

    def stop(self):
        """SIGTERM; moraine-router must exit 0 (under ASan: no leak report). Returns a problem or None."""
        problems = []
        for p in self.procs:
            was_alive = p.alive()
            rc = p.stop()
            if self.env.flavour == "moraine" and (not was_alive or rc != 0):
                problems.append("%s did not shut down cleanly on SIGTERM (exit status %s)%s"
                                % (p.name, rc if was_alive else p.popen.returncode, p.log_tail()))
        return "; ".join(problems) or None

    def manager(self, ic):
        return IceStorm.TopicManagerPrx.uncheckedCast(
            ic.stringToProxy("IceStorm/TopicManager:" + H.endpoint(self.tm_port)))

    def session_works(self, ic):
        """A session through the restarted router's client endpoint (the router itself is back)."""
        prx = Glacier2.RouterPrx.uncheckedCast(ic.stringToProxy("Glacier2/router:" + H.endpoint(self.client_port)))
        prx.createSession("alice", "secret")
        prx.destroySession()


def retrieve_all(tm, timeout=5.0):
    """TopicManager::retrieveAll, retried while the restarted service's connection is made again."""
    end = time.monotonic() + timeout
    while True:
        try:
            return tm.retrieveAll()
        except Ice.LocalException:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


def publish(topic, tags):
    pub = Demo.ClockPrx.uncheckedCast(topic.getPublisher().ice_oneway())
    for t in tags:
        pub.tick(t)


def expect_events(servants, tags, timeout=5.0):
    """Waits until every (servant, what) of servants has tags, in order and once each; returns
    the time.monotonic() at which the last one had them all."""
    for servant, what in servants:
        check(servant.wait_for(tags[-1], timeout), "%s: %s not delivered within %.0f s (received %s)"
              % (what, tags, timeout, servant.times()[-8:]))
    arrived = time.monotonic()
    time.sleep(0.1)  # a duplicate or a straggler would arrive by now
    for servant, what in servants:
        got = [t for t in servant.times() if t in tags]
        check(got == tags, "%s: received %s, expected %s in order" % (what, got, tags))
    return arrived


@scenario
def topic_store_restart(env):
    """Topics, subscribers (with their QoS) and links survive a crash of the router.
    1. Topics A and B, link A->B (cost 0); subscriber O (twoway, reliability=ordered) on B and
       subscriber W (oneway) on A; SIGKILL right after the last subscribe is answered (a
       subscription acknowledged before a crash is kept).
    2. After the restart: retrieveAll names A and B, A's getLinkInfoSeq names B, getSubscribers
       of A and of B are what they were before the crash (W, resp. O); 3 events published on A reach W directly and O over the
       link, in order; a session through the router works.
    3. W unsubscribed and the link removed, then SIGKILL and restart: A has no subscriber and no
       link, B still has O.
    4. B destroyed, SIGKILL and restart: retrieve(B) raises NoSuchTopic, A is still there."""
    svc = PersistentTopics(env)
    figures = {"start": svc.start()}
    a_name, b_name = unique("persist-a"), unique("persist-b")
    try:
        with env.communicator() as ic:
            ad = ic.createObjectAdapterWithEndpoints(unique("Persist"), "tcp -h %s -p %d" % (H.HOST, H.free_port()))
            ad.activate()
            category = unique("persist")
            ordered, oneway = ClockI(), ClockI()
            ordered_prx = ad.add(ordered, Ice.Identity("ordered", category))
            oneway_prx = ad.add(oneway, Ice.Identity("oneway", category)).ice_oneway()

            # 1. Made, then a crash right after the last answer.
            tm = svc.manager(ic)
            a, b = tm.create(a_name), tm.create(b_name)
            a.link(b, 0)
            b.subscribeAndGetPublisher({"reliability": "ordered"}, ordered_prx)
            # Real IceStorm lists A's link to B among A's subscribers (as B's topic identity),
            # Moraine does not: each router is compared with itself before the crash.
            expected = {a_name: ids(a) | {idstr(oneway_prx)}, b_name: ids(b)}
            check(idstr(ordered_prx) in expected[b_name], "%s.getSubscribers() lacks the ordered subscriber" % b_name)
            a.subscribeAndGetPublisher({}, oneway_prx)
            svc.kill()
            figures["restart 1"] = svc.start()

            # 2. All of it is back and delivers.
            tm = svc.manager(ic)
            names = set(retrieve_all(tm))
            check({a_name, b_name} <= names, "after the restart retrieveAll() names %s, expected %s and %s"
                  % (sorted(names), a_name, b_name))
            a, b = tm.retrieve(a_name), tm.retrieve(b_name)
            links = [l.name for l in a.getLinkInfoSeq()]
            check(links == [b_name], "after the restart %s.getLinkInfoSeq() names %s, expected [%s]" % (a_name, links, b_name))
            for topic, name in ((a, a_name), (b, b_name)):
                check(ids(topic) == expected[name], "after the restart %s.getSubscribers() = %s, before the crash %s"
                      % (name, sorted(ids(topic)), sorted(expected[name])))
            tags = ["p1", "p2", "p3"]
            t0 = time.monotonic()
            publish(a, tags)
            arrived = expect_events([(oneway, "oneway subscriber of %s after the restart" % a_name),
                                     (ordered, "ordered subscriber of %s (over the link) after the restart" % b_name)],
                                    tags)
            figures["delivery after restart"] = arrived - t0
            svc.session_works(ic)

            # 3. Removals are kept too.
            a.unsubscribe(oneway_prx)
            a.unlink(b)
            svc.kill()
            figures["restart 2"] = svc.start()
            tm = svc.manager(ic)
            retrieve_all(tm)
            a, b = tm.retrieve(a_name), tm.retrieve(b_name)
            check(ids(a) == set(), "after unsubscribe and a restart %s.getSubscribers() = %s" % (a_name, sorted(ids(a))))
            check(list(a.getLinkInfoSeq()) == [], "after unlink and a restart %s still has links" % a_name)
            check(ids(b) == expected[b_name], "after the second restart %s.getSubscribers() = %s"
                  % (b_name, sorted(ids(b))))

            # 4. A destroyed topic stays destroyed.
            b.destroy()
            svc.kill()
            figures["restart 3"] = svc.start()
            tm = svc.manager(ic)
            retrieve_all(tm)
            try:
                tm.retrieve(b_name)
                raise Failure("%s was destroyed, yet retrieve() found it after a restart" % b_name)
            except IceStorm.NoSuchTopic:
                pass
            tm.retrieve(a_name)
            a.destroy()
    except Ice.Exception as e:
        raise Failure("%s: %s" % (type(e).__name__, short(e)))
    finally:
        problem = svc.stop()
    check(problem is None, problem)
    return ("2 topics, a link and 2 subscribers kept across SIGKILL; started in %.2f s, restarts %.2f/%.2f/%.2f s; "
            "3 events delivered to both subscribers %.0f ms after the first restart" % (
                figures["start"], figures["restart 1"], figures["restart 2"], figures["restart 3"],
                1000 * figures["delivery after restart"]))
