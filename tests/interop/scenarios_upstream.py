"""The topic service kept linked from an upstream IceStorm by the router itself
(`Moraine.Topics.Upstream.*`, YAML `topics.upstream`): the building block of several edge routers
on one event backbone (docs/deployment.md, perf/cluster.py). moraine-router only: glacier2router
has no embedded topic service; with real IceStorm an operator makes the same link by hand
(`U.link(T, 0)`, covered by scenarios_chaos.chaos_topic_link_restart)."""

import time

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import IceStorm  # noqa: E402
from harness import check
from scenarios import scenario, unique
from scenarios_chaos import UpstreamIceStorm, clock_publisher, publish_and_time
from scenarios_icestorm import routed

CHECK_INTERVAL_MS = 200
LINK_CATEGORY = "edge-under-test"


def upstream_router(env, up, topic):
    return env.router("upstream-" + topic, {
        "Glacier2.CryptPasswords": env.passwords,
        "Glacier2.SessionTimeout": "30",
        "Moraine.Topics.Upstream.TopicManager": up.topic_manager,
        "Moraine.Topics.Upstream.Topics": topic,
        "Moraine.Topics.Upstream.LinkCategory": LINK_CATEGORY,
        "Moraine.Topics.Upstream.CheckInterval": str(CHECK_INTERVAL_MS)}, icestorm=True)


def wait_linked(up, ic, topic, timeout):
    """Seconds until the upstream's topic exists and names one link, to our link category;
    the LinkInfo list at that moment."""
    t0 = time.monotonic()
    links = []

    def linked():
        nonlocal links
        try:
            links = up.manager(ic).retrieve(topic).getLinkInfoSeq()
        except (IceStorm.NoSuchTopic, Ice.LocalException):
            return False
        return len(links) > 0

    check(H.wait_until(linked, timeout, interval=0.02),
          "the router did not create and link upstream topic %s within %.0f s" % (topic, timeout))
    return time.monotonic() - t0, links


@scenario
def topic_upstream_link(env):
    """The router links its topic from an upstream IceStorm by itself, and again after the
    upstream restarts without its memory.

    Set-up: a private real IceStorm 3.7.8 (icebox, transient); the router with the topic service
    and `Moraine.Topics.Upstream.{TopicManager, Topics, LinkCategory, CheckInterval=200}` naming
    it. Nobody creates or links anything by hand.

    1. Within 5 s the upstream has the topic and one link whose topic is the router's, under the
       configured link category (`<category>/topic.<name>`): IceStorm keys links by that identity.
    2. A session subscribes a oneway servant to the router's topic of that name; 3 events
       published upstream reach it, in order.
    3. The upstream is SIGKILLed and restarted transient (topic and link gone): the router
       creates the topic and links it again by itself within 5 s; 3 more events reach the
       subscriber. It received exactly those 6, once each."""
    if env.is_glacier2:
        raise H.Skip("moraine-router only: glacier2router has no embedded topic service (an operator links real "
                     "IceStorm topics by hand: chaos_topic_link_restart)")
    name = unique("edge")
    up = UpstreamIceStorm(env, "upstream-link")
    up.start(transient=True)
    router = upstream_router(env, up, name)
    try:
        with env.communicator() as uic, routed(env, router) as s:
            t_link, links = wait_linked(up, uic, name, 5.0)
            linked_id = links[0].theTopic.ice_getIdentity()
            check(links[0].name == name and linked_id.category == LINK_CATEGORY and linked_id.name == "topic." + name,
                  "upstream link: name %r, topic identity %s; expected %s/topic.%s"
                  % (links[0].name, Ice.identityToString(linked_id), LINK_CATEGORY, name))
            servant, sub = s.subscriber("edge-sub")
            s.topic(name).subscribeAndGetPublisher({}, sub.ice_oneway())
            tags = ["before-1", "before-2", "before-3"]
            t_first = publish_and_time(clock_publisher(up.manager(uic).retrieve(name)), servant, tags,
                                       "published upstream")

            up.kill()
            up.start(transient=True)
            t_relink, _ = wait_linked(up, uic, name, 5.0)
            tags2 = ["after-1", "after-2", "after-3"]
            t_first2 = publish_and_time(clock_publisher(up.manager(uic).retrieve(name)), servant, tags2,
                                        "published upstream after its restart")
            time.sleep(0.1)
            check(servant.times() == tags + tags2, "subscriber received %s, expected %s" % (servant.times(), tags + tags2))
    finally:
        if up.proc is not None and up.proc.alive():
            up.kill()
    return "linked %.0f ms after start, again %.0f ms after the upstream's transient restart; first event " \
           "%.1f / %.1f ms" % (1000 * t_link, 1000 * t_relink, 1000 * t_first, 1000 * t_first2)
