"""The topic service as IceStorm's own tools and newer clients see it: `icestormadmin` (Debian's
zeroc-ice-utils 3.7.8) finding it through `IceStorm/Finder` or a TopicManager proxy, and Ice
3.8's `TopicManager::createOrRetrieve`. Each scenario runs against moraine-router (its embedded
topic service) and against glacier2router + the real IceStorm 3.7.8 (icebox) on the same ports."""

import subprocess

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
from harness import check
from scenarios import scenario, unique
from scenarios_icestorm import icestorm_router

ADMIN = "/usr/bin/icestormadmin"


def admin(args, commands):
    """Runs icestormadmin with `args` and `-e commands`; (exit code, stdout + stderr)."""
    r = subprocess.run([ADMIN] + args + ["-e", commands], capture_output=True, text=True, timeout=30)
    return r.returncode, (r.stdout + r.stderr).strip()


def tm_port(router):
    return int(router.topic_manager.split("-p")[1].split()[0])


@scenario
def icestormadmin_lists_topics(env):
    """`icestormadmin --IceStormAdmin.TopicManager.Default=<TopicManager proxy>` creates two
    topics and lists them, on both. Then `--IceStormAdmin.Host=127.0.0.1 --IceStormAdmin.Port=P`
    (the `IceStorm/Finder` object): moraine-router's topic service serves the Finder and the
    listing works; real IceStorm 3.7.8 serves it only when persistent (observed: with
    `IceStorm.Transient=1`, as here, `IceStorm/Finder` is ObjectNotExist and icestormadmin says
    "no manager proxies configured"), which the glacier2 run records."""
    router = icestorm_router(env)
    a, b = unique("admin-a"), unique("admin-b")
    by_proxy = ["--IceStormAdmin.TopicManager.Default=" + router.topic_manager]
    rc, out = admin(by_proxy, "create %s %s; topics" % (a, b))
    check(rc == 0 and a in out and b in out,
          "icestormadmin (TopicManager proxy) create + topics: exit %d, output %s" % (rc, out[-400:]))
    by_finder = ["--IceStormAdmin.Host=127.0.0.1", "--IceStormAdmin.Port=%d" % tm_port(router)]
    rc, out = admin(by_finder, "topics")
    if env.is_glacier2:
        finder = "listed" if rc == 0 and a in out else "not served by the transient IceStorm (%s)" % out[-80:]
    else:
        check(rc == 0 and a in out and b in out,
              "icestormadmin (Finder, host and port) topics: exit %d, output %s" % (rc, out[-400:]))
        finder = "listed"
    return "TopicManager proxy: created and listed; Finder: %s" % finder


@scenario
def topic_create_or_retrieve(env):
    """`TopicManager::createOrRetrieve(name)` (Ice 3.8) as a raw twoway call (the 3.7 Python
    mapping lacks it): twice for one name, both answers name the same topic, and `retrieve` then
    finds it. IceStorm 3.7.8 has no such operation: OperationNotExistException there."""
    router = icestorm_router(env)
    name = unique("cor")
    with env.communicator() as ic:
        tm = ic.stringToProxy(router.topic_manager)
        got = []
        # One string in a 1.1 encapsulation, by hand: the 3.7 Python mapping has no streams.
        text = name.encode()
        body = bytes([len(text)]) + text
        params = (6 + len(body)).to_bytes(4, "little") + b"\x01\x01" + body
        for _ in range(2):
            try:
                ok, results = tm.ice_invoke("createOrRetrieve", Ice.OperationMode.Normal, params)
            except Ice.OperationNotExistException:
                check(env.is_glacier2, "moraine-router's topic service does not know createOrRetrieve")
                return "IceStorm 3.7.8: OperationNotExistException (the operation is Ice 3.8's)"
            check(ok, "createOrRetrieve raised a user exception: %r" % bytes(results))
            got.append(bytes(results))
        check(got[0] == got[1] and ("topic." + name).encode() in got[0],
              "createOrRetrieve answered %r then %r" % (got[0], got[1]))
        ids = ["topic." + name]
        import IceStorm  # noqa: E402  (after Glacier2, as the harness requires)
        found = IceStorm.TopicManagerPrx.uncheckedCast(tm).retrieve(name)
        check(found.getName() == name, "retrieve after createOrRetrieve: %s" % found.getName())
    return "created, then retrieved, same topic %s" % ids[0]
