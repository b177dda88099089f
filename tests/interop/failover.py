#!/usr/bin/python3
"""Router failover with unchanged Ice 3.7 clients: a two-endpoint router proxy, one router killed.

  /usr/bin/python3 tests/interop/failover.py --router moraine [--moraine-bin build/bin/moraine-router]
  /usr/bin/python3 tests/interop/failover.py --router glacier2
  options: --clients python,cpp (default both; --no-cpp: python only), --cpp-build-dir DIR,
           --reuse-port (moraine only: both routers on ONE client port, SO_REUSEPORT), --keep,
           --timeout S (overall bound, default 180)

Starts the Python Demo back end and two routers in front of it (the same property file but for
the ports: crypt passwords, SessionTimeout=30, a server endpoint each), all on loopback. Each
round runs one client (tests/interop/failover_client.py, or the C++ one built from
tests/interop/cpp/failover_client.cpp) with Ice.Default.Router set to

    Glacier2/router:tcp -h 127.0.0.1 -p A:tcp -h 127.0.0.1 -p B

The client creates a session, checks a callback, makes a few calls, prints the remote port of
its router connection (ice_getConnection().getInfo()) and keeps calling. This script kills the
router at that port (SIGKILL, by PID). The client's next call must raise a connection exception
(whether Ice retried it first is read from the client's Ice.Trace.Retry log and reported); the
client then creates a new session through the same router proxy, which must land on the other
router, checks a callback under the new category and makes more calls. Rounds: the Python
client with Ice's default retries (Ice.RetryIntervals=0: one retry), the Python client with
Ice.RetryIntervals=-1, the C++ client with the default retries. Before each round the router
killed in the previous one is started again on its ports.

With --reuse-port (moraine-router only) both routers listen on one client port with
Moraine.Client.ReusePort=1, so the router proxy has a single endpoint: the kernel spreads the
connections, and after the kill the client's new connection to the same port reaches the survivor.

Prints one PASS/FAIL line per round with the timeline (ms from the kill: the failed call, the
new session, its callback, the first call on it) and exits 1 if a round failed (2: overall
timeout). Every process is stopped by PID; logs are kept on failure.
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness as H  # noqa: E402
from line_client import LineClient  # noqa: E402

# What the first call after the kill may raise: the connection is gone, or the retry reached the
# other router without a session and that router closed the connection.
CONNECTION_EXCEPTIONS = ("Ice::ConnectionLostException", "Ice::ConnectFailedException",
                         "Ice::ConnectionRefusedException", "Ice::CloseConnectionException",
                         "Ice::SocketException", "Ice::ConnectionTimeoutException")


class Routers:
    """The two routers: their ports, property files and running processes (None when killed)."""

    def __init__(self, env, reuse_port, extra_props=None):
        """extra_props(i): more properties for router i (router_replica_group.py: its AdapterId)."""
        self.env, self.reuse_port = env, reuse_port
        shared = H.free_port() if reuse_port else None
        self.client_ports = [shared or H.free_port(), shared or H.free_port()]
        self.server_ports = [H.free_port(), H.free_port()]
        self.procs = [None, None]
        self.starts = 0
        self.cmds = []
        for i in range(2):
            props = {
                "Glacier2.InstanceName": "Glacier2",
                "Glacier2.Client.Endpoints": H.endpoint(self.client_ports[i]),
                "Glacier2.Server.Endpoints": H.endpoint(self.server_ports[i]),
                "Glacier2.Trace.Session": "1",
                "Glacier2.CryptPasswords": env.passwords,
                "Glacier2.SessionTimeout": "30",
            }
            if reuse_port:
                props["Moraine.Client.ReusePort"] = "1"
            if extra_props:
                props.update(extra_props(i))
            cfg = os.path.join(env.dir, "router-failover-%d.cfg" % i)
            H.write_properties(cfg, props)
            if env.flavour == "glacier2":
                self.cmds.append(["/usr/bin/glacier2router", "--Ice.Config=" + cfg])
            else:
                self.cmds.append([env.moraine_bin, "--ice-config", cfg])

    @property
    def proxy(self):
        ports = sorted(set(self.client_ports))
        return "Glacier2/router:" + ":".join(H.endpoint(p) for p in ports)

    def ensure_up(self):
        for i in range(2):
            if self.procs[i] is None:
                self.starts += 1
                # With a shared port the client port answers as soon as either router listens:
                # wait for this one's own server port too, which only it binds.
                self.procs[i] = self.env.start_ready(
                    "router-failover-%d-%d" % (i, self.starts), self.cmds[i],
                    [(self.client_ports[i], "Glacier2.Client.Endpoints"),
                     (self.server_ports[i], "Glacier2.Server.Endpoints")])

    def index_of_connection(self, port, category):
        """Which router holds the client's connection: by port, or, on a shared port, by which
        router's log traced the session's creation (Glacier2.Trace.Session) with that category."""
        if not self.reuse_port:
            return self.client_ports.index(port)
        for i, proc in enumerate(self.procs):
            if proc is not None and H.wait_until(lambda: _logged(proc, category), 2.0):
                return i
        raise H.Failure("no router traced the session with category %s" % category)

    def kill(self, i):
        """SIGKILL router i by PID (Env.kill)."""
        self.env.kill(self.procs[i])
        self.procs[i] = None


def _logged(proc, text):
    proc.log.flush()
    with open(proc.log_path, errors="replace") as f:
        return text in f.read()


def retries_logged(path):
    """How many times Ice retried an invocation (Ice.Trace.Retry=1 lines in the client's log),
    leaving out the re-adds of proxies the new session's routing table does not know yet
    (ObjectNotExist for ice_add_proxy: Ice always retries those, that is the reply's purpose)."""
    try:
        with open(path, errors="replace") as f:
            return sum(1 for line in f if "retrying operation call" in line and "add proxy to router" not in line)
    except OSError:
        return 0


def connections_logged(path, port):
    """How many connections the client established to port (Ice.Trace.Network=1 lines)."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return 0
    return len(re.findall(r"established tcp connection\n\s*local address = \S+\n\s*remote address = [\d.]+:%d\b"
                          % port, text))


def run_round(env, routers, name, cmd_of, extra_props):
    """One client through the failover; returns the report line."""
    routers.ensure_up()
    ice_log = os.path.join(env.dir, "%s-ice.log" % name)
    props = dict({"Ice.Trace.Retry": "1", "Ice.Trace.Network": "1", "Ice.LogFile": ice_log}, **extra_props)
    cmd = cmd_of(routers.proxy, env.hello_proxy(), "alice", H.CRYPT_USERS["alice"]) + \
        ["--%s=%s" % kv for kv in sorted(props.items())]
    client = LineClient(cmd, os.path.join(env.dir, name + ".log"))
    try:
        m = client.wait_for(r"^ready session=1 port=(\d+) category=(\S+)", 20, "first session, callback, calls")
        victim = routers.index_of_connection(int(m.group(1)), m.group(2))
        t_kill = time.monotonic()
        routers.kill(victim)
        m = client.wait_for(r"^failed exc=(\S+) ok_calls=(\d+) t=(\S+)", 15, "a call failing after the kill")
        exc, t_failed = m.group(1), float(m.group(3))
        H.check(exc in CONNECTION_EXCEPTIONS,
                "the call after the kill raised %s, not a connection exception" % exc)
        m = client.wait_for(r"^session session=2 port=(\d+) category=(\S+) attempts=(\d+) t=(\S+)", 20,
                            "a new session")
        survivor = 1 - victim
        H.check(routers.index_of_connection(int(m.group(1)), m.group(2)) == survivor,
                "the new session is not on the surviving router %d" % survivor)
        attempts, t_session = int(m.group(3)), float(m.group(4))
        t_callback = float(client.wait_for(r"^callback ok t=(\S+)", 10, "callback on the new session").group(1))
        t_call = float(client.wait_for(r"^call ok t=(\S+)", 10, "first call on the new session").group(1))
        client.wait_for(r"^calls ok ", 10, "calls on the new session")
        client.wait_for(r"^PASS$", 10, "the end")
        rc = client.popen.wait(10)
        H.check(rc == 0, "client exit status %s" % rc)
        retries = retries_logged(ice_log)
        # Shared port: both routers' connections go to it (the first session's included).
        opened = connections_logged(ice_log, routers.client_ports[survivor]) - (1 if routers.reuse_port else 0)
        # One connection to the survivor: the session's, so the failed call went out on the dead
        # connection. Two: Ice had seen the connection close, sent the call on a new connection
        # (to the survivor, the dead endpoint refusing), and the survivor, with no session for
        # it, closed that connection.
        how = {1: "on the killed router's connection", 2: "to the survivor without a session, which closed it"}
        return ("killed router %d (port %d), survivor %d; the failed call (%s) went %s; Ice retried it %d time(s); "
                "attempts to create the new session: %d; "
                "ms from the kill: failed %.0f, new session %.0f, callback %.0f, first call %.0f"
                % (victim, routers.client_ports[victim], survivor, exc,
                   how.get(opened, "? (%d connections opened to the survivor)" % opened), retries, attempts,
                   (t_failed - t_kill) * 1e3, (t_session - t_kill) * 1e3, (t_callback - t_kill) * 1e3,
                   (t_call - t_kill) * 1e3))
    except H.Failure as e:
        raise H.Failure("%s; client said: %s" % (e, " | ".join(client.last_lines(8))))
    finally:
        client.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--clients", default="python,cpp", help="comma-separated: python, cpp")
    ap.add_argument("--no-cpp", action="store_true", help="the Python client only")
    ap.add_argument("--cpp-build-dir", default=os.path.join(H.REPO, "build", "interop-cpp"))
    ap.add_argument("--reuse-port", action="store_true", help="both routers on one client port (moraine only)")
    ap.add_argument("--timeout", type=float, default=180.0, help="overall bound in seconds")
    ap.add_argument("--keep", action="store_true", help="keep configs and logs even on success")
    args = ap.parse_args()
    if args.reuse_port and args.router != "moraine":
        print("--reuse-port needs --router moraine (glacier2router has no such option)", file=sys.stderr)
        return 2
    clients = [c for c in args.clients.split(",") if c and not (args.no_cpp and c == "cpp")]

    env = H.Env(args.router, os.path.abspath(args.moraine_bin), keep=args.keep,
                cpp_build_dir=os.path.abspath(args.cpp_build_dir))

    watchdog = env.start_watchdog(args.timeout)

    python_client = lambda *a: [H.PYTHON, os.path.join(HERE, "failover_client.py")] + list(a)  # noqa: E731
    rounds = []
    if "python" in clients:
        rounds.append(("python-default-retry", python_client, {}))
        rounds.append(("python-no-retry", python_client, {"Ice.RetryIntervals": "-1"}))
    if "cpp" in clients:
        def cpp_client(*a):
            env.build_cpp_client()
            return [os.path.join(env.cpp_build_dir, "moraine-interop-failover-client")] + list(a)
        rounds.append(("cpp-default-retry", cpp_client, {}))

    where = "one shared client port" if args.reuse_port else "a two-endpoint router proxy"
    failed = []
    try:
        routers = Routers(env, args.reuse_port)
        for name, cmd_of, props in rounds:
            title = "failover %s (router %s, %s)" % (name, args.router, where)
            start = time.monotonic()
            try:
                report = run_round(env, routers, name, cmd_of, props)
                print("PASS %s %.1fs\n    %s" % (title, time.monotonic() - start, report), flush=True)
            except (H.Failure, OSError) as e:
                print("FAIL %s %.1fs: %s" % (title, time.monotonic() - start, e), flush=True)
                failed.append(name)
    finally:
        watchdog.cancel()
        for proc_name, rc, tail in env.close(success=not failed):
            print("FAIL %s did not shut down cleanly on SIGTERM (exit status %s)%s" % (proc_name, rc, tail), flush=True)
            failed.append(proc_name)
    print("%d rounds, %d failed%s" % (len(rounds), len(failed), (": " + " ".join(failed)) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
