#!/usr/bin/python3
"""moraine::client reconnection against a real router that dies (SIGKILL) and comes back.

  /usr/bin/python3 tests/client/reconnect_test.py --router moraine --moraine-bin build-client/bin/moraine-router \\
      --client-bin build-client/bin/client_reconnect
  /usr/bin/python3 tests/client/reconnect_test.py --router glacier2 --client-bin build-client/bin/client_reconnect

Starts, with tests/interop/harness.py, the Python Demo back end and the router under test
(crypt passwords, SessionTimeout=30, server endpoints; the client endpoint over --transport),
then client_reconnect (tests/client/client_reconnect.cpp): one session with reconnect on
(back-off 100 ms doubling to 1 s, 8 attempts) and a callback servant. Then, --restarts times:
kill the router by PID (SIGKILL), and once the client reports `lost`, start it again on the same
ports --down seconds later; the client must report lost -> reconnecting -> restored within --bound seconds of the
kill, with a new category, working calls and its servant reachable through the new session
(and not through the proxy of the lost one). Finally the router is killed for good: the client
must report gave_up after its 8 attempts, and end with PASS.
Prints PASS/FAIL with the times measured and exits 1 on failure (logs kept then).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
from line_client import LineClient  # noqa: E402

MAX_ATTEMPTS = 8
INITIAL_MS, MAX_MS = 100, 1000


def events_since(client, t0):
    """The names of the client's `event NAME ...` lines that arrived at or after t0."""
    return [line.split()[1] for t, line in client.seen if t >= t0 and line.startswith("event ")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--client-bin", default=os.path.join(H.REPO, "build", "bin", "client_reconnect"))
    ap.add_argument("--transport", choices=["tcp", "ws"], default="tcp", help="of the router's client endpoint")
    ap.add_argument("--restarts", type=int, default=2, help="kill-and-restart cycles before the final kill")
    ap.add_argument("--down", type=float, default=1.0,
                    help="seconds the router stays down after the client reported the loss")
    ap.add_argument("--bound", type=float, default=10.0, help="seconds from kill to restored")
    ap.add_argument("--keep", action="store_true", help="keep configs and logs even on success")
    args = ap.parse_args()

    env = H.Env(args.router, os.path.abspath(args.moraine_bin), keep=args.keep)
    client = None
    ok = False
    name = "reconnect (router %s, %s)" % (args.router, args.transport)
    try:
        hello = env.hello_proxy()
        client_port, server_port = H.free_port(), H.free_port()
        cfg = os.path.join(env.dir, "router-reconnect.cfg")
        H.write_properties(cfg, {
            "Glacier2.InstanceName": "Glacier2",
            "Glacier2.Client.Endpoints": H.endpoint(client_port, args.transport),
            "Glacier2.Server.Endpoints": H.endpoint(server_port),
            "Glacier2.Trace.Session": "1",
            "Glacier2.CryptPasswords": env.passwords,
            "Glacier2.SessionTimeout": "30",
        })
        if args.router == "glacier2":
            cmd = ["/usr/bin/glacier2router", "--Ice.Config=" + cfg]
        else:
            cmd = [env.moraine_bin, "--ice-config", cfg]
        ports = [(client_port, "Glacier2.Client.Endpoints", args.transport),
                 (server_port, "Glacier2.Server.Endpoints", "tcp")]
        starts = [0]

        def start_router():
            starts[0] += 1
            return env.start_ready("router-%d" % starts[0], cmd, ports)

        router = start_router()
        client = LineClient([os.path.abspath(args.client_bin), "--router", H.endpoint(client_port, args.transport),
                             "--hello", hello, "--user", "alice", "--password", "secret",
                             "--initial-ms", str(INITIAL_MS), "--max-ms", str(MAX_MS),
                             "--max-attempts", str(MAX_ATTEMPTS)],
                            os.path.join(env.dir, "client_reconnect.log"), name="client_reconnect")
        _, m = client.wait_timed(r"^ready category=(\S+)", 20, "session open, callback checked")
        categories = [m.group(1)]
        report = []
        for n in range(1, args.restarts + 1):
            t_kill = time.monotonic()
            env.kill(router)
            t_lost, _ = client.wait_timed(r"^event lost ", 5, "cycle %d: the loss" % n)
            time.sleep(args.down)  # the client's attempts meanwhile are refused
            router = start_router()
            t_up = time.monotonic()
            t_restored, m = client.wait_timed(r"^event restored .*? category=(.*?) lost_category=",
                                            args.bound - (time.monotonic() - t_kill),
                                            "cycle %d: restored within %.0f s of the kill" % (n, args.bound))
            categories.append(m.group(1))
            client.wait_for(r"^restored-ok n=%d " % n, 15, "cycle %d: calls and callback after restore" % n)
            events = events_since(client, t_kill)
            H.check(events[0] == "lost" and events[-1] == "restored"
                    and all(e == "reconnecting" for e in events[1:-1]) and len(events) >= 3,
                    "cycle %d: events %s, expected lost, reconnecting..., restored" % (n, events))
            report.append("cycle %d: lost %.0f ms after the kill, router up after %.0f ms, restored after %.0f ms"
                          " (%d attempts)" % (n, (t_lost - t_kill) * 1e3, (t_up - t_kill) * 1e3,
                                              (t_restored - t_kill) * 1e3, len(events) - 2))
        H.check(len(set(categories)) == len(categories), "categories repeat: %s" % categories)
        t_kill = time.monotonic()
        env.kill(router)
        # 8 attempts: at most 0.1 + 0.2 + 0.4 + 0.8 + 4 x 1 s of back-off, each refused at once.
        t_gave_up, _ = client.wait_timed(r"^event gave_up attempt=%d " % MAX_ATTEMPTS, 20, "gave_up after the final kill")
        client.wait_for(r"^gave-up-ok", 5, "closed after gave_up")
        client.wait_for(r"^PASS$", 5, "the end")
        events = events_since(client, t_kill)
        H.check(events == ["lost"] + ["reconnecting"] * MAX_ATTEMPTS + ["gave_up"],
                "final kill: events %s" % events)
        rc = client.popen.wait(5)
        H.check(rc == 0, "client_reconnect exit status %s" % rc)
        report.append("router gone for good: gave_up after %d attempts, %.0f ms after the kill"
                      % (MAX_ATTEMPTS, (t_gave_up - t_kill) * 1e3))
        ok = True
        print("PASS %s" % name)
        for line in report:
            print("    " + line)
    except (H.Failure, OSError) as e:
        print("FAIL %s: %s" % (name, e))
        if client is not None:
            for _, line in client.seen[-30:]:
                print("    client: " + line)
    finally:
        if client is not None:
            client.stop()
        env.close(ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
