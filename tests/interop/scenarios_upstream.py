"""The topic service kept linked from an upstream IceStorm by the router itself
(`Moraine.Topics.Upstream.*`, YAML `topics.upstream`): the building block of several edge routers
on one event backbone (docs/deployment.md, perf/cluster.py). moraine-router only: glacier2router
has no embedded topic service; with real IceStorm an operator makes the same link by hand
(`U.link(T, 0)`, covered by scenarios_chaos.chaos_topic_link_restart)."""

import os
import signal
import subprocess
import time

import Ice

import icestorm_replicas  # tests/interop/icestorm_replicas.py
import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import IceStorm  # noqa: E402
from harness import Demo, check
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


# ---------------------------------------------------------------------------------------------
# A replicated upstream: IceStorm's replicated mode under a real IceGrid (perf/cluster.py
# --backbone replicated builds the same across network namespaces)

REPLICATED = "Replicated"  # the instance name; adapter ids <instance><k>.TopicManager / .Node
REPLICAS = 3


def start_grid(env):
    """icegridnode 3.7.8 with a collocated registry, loopback endpoints on free ports; returns
    (process, the registry's client port)."""
    client = H.free_port()
    cfg = os.path.join(env.dir, "replicated-grid.cfg")
    for d in ("replicated-registry", "replicated-node", "replicated-output"):
        os.makedirs(os.path.join(env.dir, d), exist_ok=True)
    H.write_properties(cfg, {
        "Ice.Default.Locator": "IceGrid/Locator:" + H.endpoint(client),
        "IceGrid.InstanceName": "IceGrid",
        "IceGrid.Registry.Client.Endpoints": H.endpoint(client),
        "IceGrid.Registry.Server.Endpoints": "tcp -h %s" % H.HOST,
        "IceGrid.Registry.Internal.Endpoints": "tcp -h %s" % H.HOST,
        "IceGrid.Registry.LMDB.Path": os.path.join(env.dir, "replicated-registry"),
        "IceGrid.Registry.LMDB.MapSize": "16",
        "IceGrid.Registry.PermissionsVerifier": "IceGrid/NullPermissionsVerifier",
        "IceGrid.Registry.AdminPermissionsVerifier": "IceGrid/NullPermissionsVerifier",
        "IceGrid.Registry.Discovery.Enabled": "0",
        "IceGrid.Node.Name": "node1",
        "IceGrid.Node.Endpoints": "tcp -h %s" % H.HOST,
        "IceGrid.Node.Data": os.path.join(env.dir, "replicated-node"),
        "IceGrid.Node.Output": os.path.join(env.dir, "replicated-output"),
        "IceGrid.Node.CollocateRegistry": "1",
        # As root (a container), a server without `user` runs as nobody, who cannot read the
        # suite's directory: the descriptor names root, which this allows.
        "IceGrid.Node.AllowRunningServersAsRoot": "1" if os.geteuid() == 0 else "0",
        "Ice.Warn.Connections": "0"})
    proc = env.start_ready("replicated-grid", ["/usr/bin/icegridnode", "--Ice.Config=" + cfg],
                           [(client, "IceGrid.Registry.Client.Endpoints")])
    return proc, client


def replicated_application():
    """3 IceStorm replicas (IceBox servers, activation always) on node1, their TopicManager and
    Publish adapters in replica groups, 1 s election timeouts. Returns (the descriptor, {replica:
    its Publish port})."""
    publish_ports = {}
    boxes = []
    for k in range(1, REPLICAS + 1):
        tm, pub, node = H.free_port(), H.free_port(), H.free_port()
        publish_ports[k] = pub
        boxes.append(icestorm_replicas.replica_icebox(
            REPLICATED, k, H.endpoint(tm), H.endpoint(pub), H.endpoint(node), REPLICATED + ".TopicManagerGroup",
            REPLICATED + ".PublishGroup", 1, run_as_root=os.geteuid() == 0))
    return publish_ports, icestorm_replicas.application(
        "ReplicatedUpstream", REPLICATED, REPLICATED + ".TopicManagerGroup", REPLICATED + ".PublishGroup",
        [("node1", boxes)])


def icegridadmin(env, locator_port, command):
    r = subprocess.run(["/usr/bin/icegridadmin", "--Ice.Default.Locator=IceGrid/Locator:" + H.endpoint(locator_port),
                        "-u", "test", "-p", "test", "-e", command],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    check(r.returncode == 0, "icegridadmin %s: %s" % (command, r.stdout.strip()))
    return r.stdout.strip()


def publish_twoway(pub, tag, timeout=10.0):
    """Publishes `tag` twoway until a replica takes it (an IceStorm client's own retry: Ice does
    not retry a twoway call whose connection was lost); returns the attempts it took."""
    end, attempts = time.monotonic() + timeout, 0
    while True:
        attempts += 1
        try:
            pub.tick(tag)
            return attempts
        except Ice.LocalException as e:
            check(time.monotonic() < end, "publishing %s: no replica took it within %.0f s: %s" % (tag, timeout, e))
            time.sleep(0.05)


@scenario
def topic_upstream_replicated(env):
    """The router links its topic from a replicated IceStorm found through the locator, and
    events keep coming when a replica dies.

    Set-up: a real IceGrid 3.7.8 (icegridnode with a collocated registry) deploying IceStorm
    3.7.8 replicated 3 times (IceBox servers, activation always, TopicManager and Publish
    adapters in replica groups, the well-known object `Replicated/TopicManager`, election
    timeouts 1 s); the router with `Ice.Default.Locator` and
    `Moraine.Topics.Upstream.TopicManager=Replicated/TopicManager`, an indirect proxy.

    1. Within 30 s (the replicas elect a master first) the replicated topic has one link, to the
       router's topic under the link category.
    2. A session subscribes a oneway servant to the router's topic; 3 events published twoway
       to the replicated topic's publisher (an indirect proxy, through the locator) reach it.
    3. The replica the publisher is connected to is SIGKILLed; 4 more events, 0.4 s apart, each
       published twoway again until a replica takes it, reach the subscriber: it received the 7,
       in order, once each. Its node starts the replica again: the registry shows a new process."""
    if env.is_glacier2:
        raise H.Skip("moraine-router only: glacier2router has no embedded topic service")
    name = unique("replicated")
    _, locator_port = start_grid(env)
    xml = os.path.join(env.dir, "replicated-upstream.xml")
    publish_ports, descriptor = replicated_application()
    with open(xml, "w") as f:
        f.write(descriptor)
    icegridadmin(env, locator_port, "application add '%s'" % xml)
    locator = "IceGrid/Locator:" + H.endpoint(locator_port)
    router = env.router("upstream-replicated", {
        "Glacier2.CryptPasswords": env.passwords,
        "Glacier2.SessionTimeout": "30",
        "Ice.Default.Locator": locator,
        "Moraine.Topics.Upstream.TopicManager": REPLICATED + "/TopicManager",
        "Moraine.Topics.Upstream.Topics": name,
        "Moraine.Topics.Upstream.LinkCategory": LINK_CATEGORY,
        "Moraine.Topics.Upstream.CheckInterval": str(CHECK_INTERVAL_MS)}, icestorm=True)
    with env.communicator(None, {"Ice.Default.Locator": locator}) as uic, routed(env, router) as s:
        manager = IceStorm.TopicManagerPrx.uncheckedCast(uic.stringToProxy(REPLICATED + "/TopicManager"))
        t0 = time.monotonic()
        links = []

        def linked():
            nonlocal links
            try:
                links = manager.retrieve(name).getLinkInfoSeq()
            except (IceStorm.NoSuchTopic, Ice.LocalException):
                return False
            return len(links) > 0
        check(H.wait_until(linked, 30.0, interval=0.1),
              "the router did not link topic %s from the replicated IceStorm within 30 s" % name)
        t_link = time.monotonic() - t0
        linked_id = links[0].theTopic.ice_getIdentity()
        check(linked_id.category == LINK_CATEGORY and linked_id.name == "topic." + name,
              "link to %s, expected %s/topic.%s" % (Ice.identityToString(linked_id), LINK_CATEGORY, name))
        servant, sub = s.subscriber("replicated-sub")
        s.topic(name).subscribeAndGetPublisher({}, sub.ice_oneway())
        topic = manager.retrieve(name)
        pub = Demo.ClockPrx.uncheckedCast(topic.getPublisher())
        check(not pub.ice_getEndpoints() and pub.ice_getAdapterId(),
              "the replicated topic's publisher %s: expected an indirect proxy" % pub)
        tags = ["before-1", "before-2", "before-3"]
        for t in tags:
            publish_twoway(pub, t)
        check(servant.wait_for(tags[-1], 5.0), "before the kill: subscriber received %s" % servant.times())

        # The replica the publisher is connected to dies.
        port = pub.ice_getConnection().getEndpoint().getInfo().port
        k = next((k for k, p in publish_ports.items() if p == port), None)
        check(k is not None, "the publisher's connection is to port %d, no replica's" % port)
        victim = REPLICATED + str(k)
        pid = int(icegridadmin(env, locator_port, "server pid " + victim))
        os.kill(pid, signal.SIGKILL)  # a replica this test's node started
        t_kill = time.monotonic()
        # 0.4 s apart: the last ones fall after the surviving replicas notice the death (their
        # 1 s MasterTimeout check), when a master's death makes them hold events until a new
        # group forms; a twoway publish waits for that.
        tags2 = ["after-1", "after-2", "after-3", "after-4"]
        attempts, slowest = [], 0.0
        for t in tags2:
            t0 = time.monotonic()
            attempts.append(publish_twoway(pub, t))
            slowest = max(slowest, time.monotonic() - t0)
            time.sleep(0.4)
        check(servant.wait_for(tags2[-1], 10.0), "after the kill: subscriber received %s" % servant.times())
        time.sleep(0.1)
        check(servant.times() == tags + tags2, "subscriber received %s, expected %s" % (servant.times(), tags + tags2))

        def restarted():
            try:
                return int(icegridadmin(env, locator_port, "server pid " + victim)) != pid
            except (H.Failure, ValueError):
                return False
        check(H.wait_until(restarted, 10.0, interval=0.2), "replica %s was not started again by its node" % victim)
        t_back = time.monotonic() - t_kill
    return "linked %.1f s after the router started; the publisher's replica (%s) killed: 4 events " \
           "published 0.4 s apart (attempts %s, the slowest took %.0f ms), each received once; its node started it " \
           "again within %.1f s" % (t_link, victim, "/".join(str(a) for a in attempts), 1000 * slowest, t_back)
