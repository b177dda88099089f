"""IceStorm's trace categories (IceStorm.Trace.TopicManager, .Topic, .Subscriber) as log lines,
on the embedded topic service and on the real IceStorm 3.7.8 (icebox) from the same file."""
import time

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import IceStorm  # noqa: E402,F401
from harness import check
from scenarios import scenario, unique
from scenarios_icestorm import ClockI, direct, icestorm_router, publisher

TRACE = {"IceStorm.Trace.TopicManager": "1", "IceStorm.Trace.Topic": "1", "IceStorm.Trace.Subscriber": "1"}

# What marks each category's lines: Moraine's `[IceStorm.Trace.<category>]`, IceStorm's
# `<category>: ` (observed: `TopicManager: creating new topic "T"`, `Topic: T: subscribeAndGetPublisher: id`,
# `Subscriber: id subscriber errored out: ...`).
MARK = {"moraine": lambda c: "[IceStorm.Trace.%s]" % c, "glacier2": lambda c: " %s: " % c}


def service_log(router, settle=0.3):
    """The topic service's log: moraine-router's own, or icebox's beside glacier2router."""
    time.sleep(settle)
    proc = router.helpers[0] if router.helpers else router.proc
    proc.log.flush()
    with open(proc.log_path, errors="replace") as f:
        return f.read()


def traffic(env, router, topic_name):
    """create, subscribe, link, unlink, unsubscribe, a subscriber that fails for good (its servant
    removed; retryCount 0) removed at the next publish, destroy. Returns the identities used."""
    with direct(env, router) as side:
        t, other = side.tm.create(topic_name), side.tm.create(topic_name + "-other")
        _, kept = side.subscriber(unique("kept"))
        gone_servant, gone = side.subscriber(unique("gone"))
        t.subscribeAndGetPublisher({}, kept)
        t.link(other, 0)
        t.unlink(other)
        t.unsubscribe(kept)
        t.subscribeAndGetPublisher({}, gone)
        side.adapter.remove(gone.ice_getIdentity())
        pub = publisher(side, topic_name)
        pub.tick("t1")
        time.sleep(0.3)  # the failure is seen
        pub.tick("t2")  # IceStorm removes a failed subscriber on the publish after the failure
        H.wait_until(lambda: not any(i == gone.ice_getIdentity() for i in t.getSubscribers()), 3.0)
        t.destroy()
        other.destroy()
        return Ice.identityToString(kept.ice_getIdentity()), Ice.identityToString(gone.ice_getIdentity())


@scenario
def icestorm_trace_categories(env):
    """With `IceStorm.Trace.TopicManager/Topic/Subscriber=1` the topic service logs the topic's
    creation (TopicManager), its subscribe, unsubscribe and destroy (Topic) and the removal of
    a subscriber that failed for good (Subscriber), each line naming the topic or subscriber.
    moraine-router: nothing of it in the log of the `icestorm` router (no trace keys).
    (glacier2router's IceStorm is always started with Topic and Subscriber tracing by the
    harness, so the off case is checked on moraine-router only.)"""
    router = env.router("icestorm-trace", {"Glacier2.CryptPasswords": env.passwords, **TRACE}, icestorm=True)
    name = unique("traced")
    kept, gone = traffic(env, router, name)
    lines = service_log(router).splitlines()
    mark = MARK[env.flavour]

    def found(category, *parts):
        hits = [l for l in lines if mark(category) in l and all(p in l for p in parts)]
        check(hits, "no %s trace line naming %s in:\n%s" % (category, parts, "\n".join(lines[-40:])))
        return len(hits)

    counts = {"TopicManager": found("TopicManager", name),
              "Topic": found("Topic", name, kept) + found("Topic", name, "destroy"),
              "Subscriber": found("Subscriber", gone)}
    if not env.is_glacier2:
        quiet = icestorm_router(env)
        other = unique("untraced")
        traffic(env, quiet, other)
        log = service_log(quiet)
        check(other not in log, "no trace keys, yet the log names topic %s:\n%s" % (other, log[-2000:]))
    return "trace lines: TopicManager %d, Topic %d, Subscriber %d" % (
        counts["TopicManager"], counts["Topic"], counts["Subscriber"])
