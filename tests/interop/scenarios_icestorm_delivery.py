"""Topic-service delivery scenarios: reliability=ordered under a slow subscriber, the window of a
plain twoway subscriber, retryCount and the removal of dead subscribers (docs/icestorm.md §3).

`icestorm-delivery` configuration: the `icestorm` one plus IceStorm.Discard.Interval=1, so a
subscriber taken offline by a failure is retried after 1 s instead of 60. `--router glacier2`
runs the real IceStorm 3.7.8 (icebox) from the same file; `--router moraine` its own topic
service. Imported by run.py after scenarios_icestorm_admin.py.
"""
import threading
import time

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import IceStorm  # noqa: E402,F401
from harness import Demo, check
from scenarios import scenario, unique
from scenarios_icestorm import direct, idstr, ids, publisher, routed

DISCARD_INTERVAL = 1  # s: IceStorm.Discard.Interval of this configuration
SLOW = 0.05           # s: how long a slow servant takes per event
POOL = {"Ice.ThreadPool.Client.Size": "8", "Ice.ThreadPool.Client.SizeMax": "8",
        "Ice.ThreadPool.Server.Size": "8", "Ice.ThreadPool.Server.SizeMax": "8"}


def delivery_router(env):
    return env.router("icestorm-delivery", {"Glacier2.CryptPasswords": env.passwords,
                                            "Glacier2.SessionTimeout": "30",
                                            "IceStorm.Discard.Interval": str(DISCARD_INTERVAL)}, icestorm=True)


class SlowClockI(Demo.Clock):
    """A subscriber that takes SLOW s per event and counts how many events it was dispatched at
    once (its communicator has 8 dispatch threads, so nothing serialises them but the sender)."""

    def __init__(self):
        self._cond = threading.Condition()
        self.got, self.active, self.max_active = [], 0, 0
        self.first = self.last = None

    def tick(self, t, current):
        with self._cond:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            if self.first is None:
                self.first = time.monotonic()
        time.sleep(SLOW)
        with self._cond:
            self.active -= 1
            self.got.append(t)
            self.last = time.monotonic()
            self._cond.notify_all()

    def wait_count(self, n, timeout):
        with self._cond:
            return self._cond.wait_for(lambda: len(self.got) >= n, timeout)

    def span(self):
        """Seconds from the first dispatch to the last completion."""
        with self._cond:
            return (self.last - self.first) if self.first is not None and self.last is not None else 0.0


def add_slow(side, name):
    servant = SlowClockI()
    return servant, side.adapter.add(servant, Ice.Identity(name, side.category))


@scenario
def icestorm_ordered_slow_subscriber(env):
    """reliability=ordered subscribers (one in a session, one direct) whose servant takes 50 ms
    per event, and a plain twoway session subscriber as slow: 20 events published at once. The
    ordered ones get all 20 in publish order, never two at a time; the plain one gets all 20 with
    at most 5 at a time (IceStorm's window)."""
    n = 20
    router = delivery_router(env)
    name = unique("slow")
    with routed(env, router, props=POOL) as s, direct(env, router, props=POOL) as d:
        topic = s.tm.create(name)
        ordered, ordered_prx = add_slow(s, "ordered")
        plain, plain_prx = add_slow(s, "plain")
        direct_ordered, direct_ordered_prx = add_slow(d, "ordered")
        topic.subscribeAndGetPublisher({"reliability": "ordered"}, ordered_prx)
        topic.subscribeAndGetPublisher({}, plain_prx)
        d.topic(name).subscribeAndGetPublisher({"reliability": "ordered"}, direct_ordered_prx)
        pub = publisher(d, name)
        expected = ["e%02d" % i for i in range(n)]
        t0 = time.monotonic()
        for t in expected:
            pub.tick(t)
        published = time.monotonic() - t0
        for servant, what in ((ordered, "ordered session subscriber"), (direct_ordered, "ordered direct subscriber"),
                              (plain, "plain twoway session subscriber")):
            servant.wait_count(n, 15.0)
            if what.startswith("ordered"):
                check(servant.got == expected, "%s received %s, expected %s in order" % (what, servant.got, expected))
                check(servant.max_active == 1, "%s was dispatched %d events at once, expected 1"
                      % (what, servant.max_active))
                check(servant.span() >= n * SLOW * 0.9, "%s took %.2f s for %d events of %d ms: not one at a time"
                      % (what, servant.span(), n, SLOW * 1000))
            else:
                check(sorted(servant.got) == expected, "%s received %s, expected all of %s" % (what, servant.got, expected))
                check(1 <= servant.max_active <= 5, "%s was dispatched %d events at once, IceStorm allows 5"
                      % (what, servant.max_active))
        return ("published in %.0f ms; ordered session %.2f s, ordered direct %.2f s (max 1 at a time); "
                "plain twoway %.2f s, max %d at a time" % (published * 1000, ordered.span(), direct_ordered.span(),
                                                         plain.span(), plain.max_active))


@scenario
def icestorm_retry_count(env):
    """Dead subscribers leave getSubscribers: twoway and oneway subscribers at a port nobody listens
    on (connection refused, a transient failure) with retryCount=0, one with retryCount=2, and a
    session subscriber whose servant was removed (the client answers ObjectNotExist, a hard failure,
    so retryCount=-1 does not keep it). Events are published every 0.25 s; after each,
    getSubscribers() says who is left. A live session subscriber gets every event."""
    router = delivery_router(env)
    name = unique("retry")
    every = 0.25
    with routed(env, router, props=POOL) as s, direct(env, router, props=POOL) as d:
        topic = d.tm.create(name)

        def refused(ident):
            return d.ic.stringToProxy("%s/%s:%s" % (d.category, ident, H.endpoint(H.free_port())))

        live, live_prx = add_slow(s, "live")
        _, gone_prx = add_slow(s, "removed-servant")
        s.adapter.remove(gone_prx.ice_getIdentity())
        subs = {
            "refused twoway retryCount=0": (refused("tw0"), {"retryCount": "0"}),
            "refused oneway retryCount=0": (refused("ow0").ice_oneway(), {"retryCount": "0"}),
            "refused twoway retryCount=2": (refused("tw2"), {"retryCount": "2"}),
            "no servant, retryCount=-1": (gone_prx, {"retryCount": "-1"}),
        }
        s.topic(name).subscribeAndGetPublisher({}, live_prx.ice_oneway())
        for prx, qos in subs.values():
            topic.subscribeAndGetPublisher(qos, prx)
        check(len(ids(topic)) == 5, "getSubscribers() = %s, expected 5" % sorted(ids(topic)))
        pub = publisher(d, name)
        gone_after = {}  # what -> (publishes, seconds since the first)
        sent = []
        t0 = time.monotonic()
        while len(gone_after) < len(subs) and time.monotonic() - t0 < 8.0:
            sent.append("r%02d" % len(sent))
            pub.tick(sent[-1])
            time.sleep(every)
            listed = ids(topic)
            for what, (prx, _) in subs.items():
                if what not in gone_after and idstr(prx) not in listed:
                    gone_after[what] = (len(sent), time.monotonic() - t0)
        missing = sorted(set(subs) - set(gone_after))
        check(not missing, "still listed after %d publishes over %.1f s: %s" % (len(sent), time.monotonic() - t0, missing))
        check(idstr(live_prx) in ids(topic), "the live subscriber was removed: %s" % sorted(ids(topic)))
        live.wait_count(len(sent), 5.0)
        # Oneway events may be dispatched on several threads: compared as sets.
        check(sorted(live.got) == sent, "the live subscriber received %s, expected %s" % (live.got, sent))
        for what in ("refused twoway retryCount=0", "refused oneway retryCount=0", "no servant, retryCount=-1"):
            check(gone_after[what][0] <= 3, "%s left only after %d publishes" % (what, gone_after[what][0]))
        retried = gone_after["refused twoway retryCount=2"]
        check(retried[1] >= 2 * DISCARD_INTERVAL * 0.9,
              "retryCount=2 left after %.2f s: expected two retries %d s apart first" % (retried[1], DISCARD_INTERVAL))
        return "; ".join("%s: gone after publish %d (%.2f s)" % (w, p, t) for w, (p, t) in sorted(gone_after.items()))


QUEUE_MAX = 5  # IceStorm.Send.QueueSizeMax of the icestorm-queue-* configurations


def queue_router(env, policy):
    """`icestorm-delivery` plus IceStorm.Send.QueueSizeMax=5 and the policy given (service-wide,
    hence one router per policy)."""
    return env.router("icestorm-queue-" + policy.lower(),
                      {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
                       "IceStorm.Discard.Interval": str(DISCARD_INTERVAL),
                       "IceStorm.Send.QueueSizeMax": str(QUEUE_MAX),
                       "IceStorm.Send.QueueSizeMaxPolicy": policy}, icestorm=True)


@scenario
def icestorm_queue_size_max(env):
    """IceStorm.Send.QueueSizeMax=5 against ordered subscribers (a session one and a direct one)
    whose servant takes 50 ms per event, 20 events published at once. RemoveSubscriber: each gets
    a prefix of the events and leaves getSubscribers at the overflow; DropEvents: each stays, and
    gets the first event and then the newest ones, in order, the last one included."""
    n = 20
    expected = ["q%02d" % i for i in range(n)]
    notes = []
    for policy in ("RemoveSubscriber", "DropEvents"):
        router = queue_router(env, policy)
        name = unique("queue")
        with routed(env, router, props=POOL) as s, direct(env, router, props=POOL) as d:
            topic = s.tm.create(name)
            routed_servant, routed_prx = add_slow(s, "ordered")
            direct_servant, direct_prx = add_slow(d, "ordered")
            topic.subscribeAndGetPublisher({"reliability": "ordered"}, routed_prx)
            d.topic(name).subscribeAndGetPublisher({"reliability": "ordered"}, direct_prx)
            pub = publisher(d, name)
            for t in expected:
                pub.tick(t)
            time.sleep(n * SLOW + 0.5)  # time enough for all 20, had none been dropped
            listed = ids(topic)
            for servant, prx, what in ((routed_servant, routed_prx, "session"), (direct_servant, direct_prx, "direct")):
                got = list(servant.got)
                if policy == "RemoveSubscriber":
                    check(idstr(prx) not in listed, "%s: the %s subscriber is still listed after the overflow (got %s)"
                          % (policy, what, got))
                    check(0 < len(got) <= QUEUE_MAX + 1 and got == expected[:len(got)],
                          "%s: the %s subscriber received %s, expected a prefix of at most %d events"
                          % (policy, what, got, QUEUE_MAX + 1))
                else:
                    check(idstr(prx) in listed, "%s: the %s subscriber was removed" % (policy, what))
                    check(got and got == sorted(got) and got[0] == expected[0] and got[-1] == expected[-1]
                          and len(got) < n, "%s: the %s subscriber received %s, expected q00, then the newest "
                          "events in order up to q19" % (policy, what, got))
                    check(got[-QUEUE_MAX:] == expected[-QUEUE_MAX:], "%s: the %s subscriber's last %d events are %s"
                          % (policy, what, QUEUE_MAX, got[-QUEUE_MAX:]))
                notes.append("%s %s: %s" % (policy, what, ",".join(t[1:] for t in got)))
    return "; ".join(notes)
