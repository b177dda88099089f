#!/usr/bin/python3
"""The routers as an IceGrid replica group: unchanged Ice 3.7 clients reach them through the
well-known router proxy, spread over them, and fail over when one dies.

  /usr/bin/python3 tests/interop/router_replica_group.py --router moraine [--moraine-bin build/bin/moraine-router]
  /usr/bin/python3 tests/interop/router_replica_group.py --router glacier2
  options: --keep, --timeout S (overall bound, default 90)

Starts a real IceGrid registry (icegridregistry 3.7.8 with IceGrid.Registry.DynamicRegistration,
as tests/interop/scenarios_locator.py does), the Python Demo back end, and two routers with the
same property file but for the ports (as tests/interop/failover.py: crypt passwords,
SessionTimeout=30, a server endpoint each) plus

    Ice.Default.Locator=IceGrid/Locator:<registry>
    Glacier2.Client.AdapterId=R1 (R2)
    Glacier2.Client.ReplicaGroupId=RouterGroup

Each router registers its client endpoints with the registry at start
(LocatorRegistry::setReplicatedAdapterDirectProxy); dynamic registration creates the replica
group `RouterGroup` on the first one. The well-known object `Glacier2/router`, type
::Glacier2::Router, is then added as `Glacier2/router@RouterGroup` through an IceGrid admin
session, as `<object identity="Glacier2/router" type="::Glacier2::Router"/>` in a deployed
replica group would. Checks, in order:

  1. findAdapterById("RouterGroup") gives both routers' client endpoints (within 10 s);
  2. clients (tests/interop/failover_client.py, Ice 3.7 Python, with Ice.Default.Locator) are
     started one at a time, their Ice.Default.Router alternately `Glacier2/router` (the
     well-known object) and `Glacier2/router@RouterGroup`; each creates a session, checks a
     callback and calls the back end, then keeps calling. Clients are added until sessions are on
     both routers (Ice picks an endpoint at random: at most 20 clients, so a run with every one on
     one router has odds of 2 in a million);
  3. router R1 is killed (SIGKILL, by PID): each client whose session was there sees a call
     fail, creates a new session through the same router proxy, which lands on R2, checks a
     callback and makes more calls (PASS); the clients on R2 have seen no failure;
  4. R2 is stopped in order (SIGTERM): it withdraws its endpoints (the same operation with a
     nil proxy), so findAdapterById("RouterGroup") then gives only R1's (dead) endpoint, which
     the registry keeps since R1 was killed. Clients skip such an endpoint: it refuses.

glacier2router 3.7.8 passes the same checks with the same properties (its client object adapter
registers on activation and unregisters on deactivation). One PASS/FAIL line per check; exit
status 1 if any failed (2: overall timeout). Every process is stopped by PID; logs are kept on
failure. Run time: about 10 s.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness as H  # noqa: E402  (before Glacier2 and IceGrid: see harness._import_glacier2)
import Ice  # noqa: E402
from failover import CONNECTION_EXCEPTIONS, Routers  # noqa: E402
from line_client import LineClient  # noqa: E402
from scenarios_locator import add_well_known, start_registry  # noqa: E402

GROUP = "RouterGroup"
ROUTER_PROXIES = ["Glacier2/router", "Glacier2/router@" + GROUP]
MAX_CLIENTS = 20


def group_ports(env, locator_port):
    """The ports of the endpoints the registry gives for the replica group (empty: none)."""
    with env.communicator() as ic:
        locator = Ice.LocatorPrx.uncheckedCast(ic.stringToProxy("IceGrid/Locator:" + H.endpoint(locator_port)))
        try:
            found = locator.findAdapterById(GROUP)
        except Ice.AdapterNotFoundException:
            return []
        return sorted(e.getInfo().port for e in found.ice_getEndpoints()) if found else []


class Client:
    """One failover_client.py: its router proxy and the router port its first session is on."""

    def __init__(self, env, n, locator_port):
        self.proxy = ROUTER_PROXIES[n % 2]
        cmd = [H.PYTHON, os.path.join(HERE, "failover_client.py"), self.proxy, env.hello_proxy(), "alice",
               H.CRYPT_USERS["alice"], "--wait", "60",
               "--locator", "IceGrid/Locator:" + H.endpoint(locator_port),
               "--Ice.LogFile=" + os.path.join(env.dir, "client-%d-ice.log" % n)]
        self.line = LineClient(cmd, os.path.join(env.dir, "client-%d.log" % n), "client %d" % n)
        self.port = int(self.line.wait_for(r"^ready session=1 port=(\d+) ", 20, "first session, callback, calls")
                        .group(1))

    def fails_over_to(self, port):
        """Waits for the failed call, the new session on `port`, its callback and calls, PASS."""
        exc = self.line.wait_for(r"^failed exc=(\S+)", 15, "a call failing after the kill").group(1)
        H.check(exc in CONNECTION_EXCEPTIONS, "the call after the kill raised %s, not a connection exception" % exc)
        new = int(self.line.wait_for(r"^session session=2 port=(\d+)", 20, "a new session").group(1))
        H.check(new == port, "the new session is on port %d, not the surviving router's %d" % (new, port))
        self.line.wait_for(r"^calls ok ", 10, "calls on the new session")
        self.line.wait_for(r"^PASS$", 10, "the end")
        H.check(self.line.popen.wait(10) == 0, "exit status %s" % self.line.popen.returncode)

    def still_calling(self):
        """True if the client has printed nothing since `ready`: its calls keep succeeding."""
        return self.line.lines.empty() and self.line.popen.poll() is None


class Checks:
    def __init__(self):
        self.failed = []

    def run(self, title, fn):
        start = time.monotonic()
        try:
            detail = fn()
            print("PASS %s %.1fs%s" % (title, time.monotonic() - start, "\n    " + detail if detail else ""),
                  flush=True)
            return True
        except (H.Failure, OSError) as e:
            print("FAIL %s %.1fs: %s" % (title, time.monotonic() - start, e), flush=True)
            self.failed.append(title)
            return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--timeout", type=float, default=90.0, help="overall bound in seconds")
    ap.add_argument("--keep", action="store_true", help="keep configs and logs even on success")
    args = ap.parse_args()
    env = H.Env(args.router, os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(args.timeout)
    checks = Checks()
    clients = []
    try:
        locator = start_registry(env)
        locator_proxy = "IceGrid/Locator:" + H.endpoint(locator)
        routers = Routers(env, False, lambda i: {"Ice.Default.Locator": locator_proxy,
                                                 "Glacier2.Client.AdapterId": "R%d" % (i + 1),
                                                 "Glacier2.Client.ReplicaGroupId": GROUP})
        routers.ensure_up()
        both = sorted(routers.client_ports)

        def registered():
            H.check(H.wait_until(lambda: group_ports(env, locator) == both, 10),
                    "findAdapterById(%s) gives ports %s, not the routers' %s" % (GROUP, group_ports(env, locator), both))
            add_well_known(env, locator, "Glacier2/router@" + GROUP, "::Glacier2::Router")
            return "findAdapterById(%s): %s; well-known Glacier2/router -> Glacier2/router@%s" % (GROUP, both, GROUP)

        def spread():
            while len(clients) < MAX_CLIENTS and len({c.port for c in clients}) < 2:
                clients.append(Client(env, len(clients), locator))
            on = [sum(1 for c in clients if c.port == p) for p in routers.client_ports]
            H.check(all(on), "%d clients, all on one router: %s" % (len(clients), on))
            H.check(all(c.port in routers.client_ports for c in clients), "a session on an unknown port")
            return "%d clients (router proxies %s), sessions on R1/R2: %d/%d" % (
                len(clients), " and ".join(ROUTER_PROXIES), on[0], on[1])

        def failover():
            victims = [c for c in clients if c.port == routers.client_ports[0]]
            t_kill = time.monotonic()
            routers.kill(0)
            for c in victims:
                c.fails_over_to(routers.client_ports[1])
            H.check(all(c.still_calling() for c in clients if c not in victims),
                    "a client on R2 saw a failure")
            return "%d client(s) on R1 failed over to R2 in %.0f ms; %d on R2 unaffected" % (
                len(victims), (time.monotonic() - t_kill) * 1e3, len(clients) - len(victims))

        def withdrawn():
            for c in clients:
                c.line.popen.terminate()
            proc = routers.procs[1]
            rc = proc.stop()
            env.procs.remove(proc)
            routers.procs[1] = None
            H.check(args.router == "glacier2" or rc == 0, "R2 exit status %s after SIGTERM%s" % (rc, proc.log_tail()))
            left = group_ports(env, locator)
            H.check(left == [routers.client_ports[0]],
                    "after R2's orderly stop, findAdapterById(%s) gives ports %s, expected only R1's %d"
                    % (GROUP, left, routers.client_ports[0]))
            return "findAdapterById(%s) after R2 stopped: %s (R1's, killed, kept)" % (GROUP, left)

        steps = [("routers registered in replica group %s (router %s)" % (GROUP, args.router), registered),
                 ("sessions through the well-known router proxy land on both routers", spread),
                 ("R1 killed: its clients get a new session on R2 through the same proxy", failover),
                 ("R2 stopped with SIGTERM: its endpoints withdrawn from the registry", withdrawn)]
        for title, fn in steps:
            if not checks.run(title, fn):
                break
    except H.Failure as e:
        print("FAIL setup: %s" % e, flush=True)
        checks.failed.append("setup")
    finally:
        watchdog.cancel()
        for c in clients:
            c.line.popen.terminate()
            c.line.popen.wait(5)
        for proc_name, rc, tail in env.close(success=not checks.failed):
            print("FAIL %s did not shut down cleanly on SIGTERM (exit status %s)%s" % (proc_name, rc, tail), flush=True)
            checks.failed.append(proc_name)
    print("%d failed%s" % (len(checks.failed), (": " + ", ".join(checks.failed)) if checks.failed else ""))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
