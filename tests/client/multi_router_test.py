#!/usr/bin/python3
"""moraine::client with a two-endpoint router string: sessions spread over two moraine-routers,
and after one is killed they all come back through the other.

  /usr/bin/python3 tests/client/multi_router_test.py [--moraine-bin build/bin/moraine-router]
      [--subscriber-bin build/bin/clock-subscriber] [--publisher-bin build/bin/clock-publisher]
      [--sessions 40] [--transport tcp|ws] [--bound 15] [--timeout 120] [--keep]

Starts, on loopback, a moraine-router serving only its topic service (the topic outlives the
kill), and routers A and B in front of it (crypt passwords, server endpoints, /metrics on a free
port), plus clock-publisher (5 ticks/s). clock-subscriber then opens --sessions sessions with
--reconnect and

    --router "tcp -h 127.0.0.1 -p A:tcp -h 127.0.0.1 -p B"

(client::router_endpoints: a random order per connection attempt). Checks: every session is up,
and the routers' `moraine_sessions` (GET /metrics) add up to --sessions with BOTH above 0. Then
the router holding more sessions is killed (SIGKILL, by PID): the survivor's `moraine_sessions`
must reach --sessions within --bound seconds, through the library's reconnection. Finally
clock-subscriber is stopped (SIGINT, by PID): its summary must say the killed router's sessions
were restored, none is still reconnecting and each subscribed again, and it must exit 0.
Prints PASS/FAIL with the split and the times measured; exits 1 on failure (logs kept), 2 on
the overall --timeout. Every process is stopped by PID.
"""
import argparse
import os
import re
import signal
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
from line_client import LineClient  # noqa: E402

SESSIONS_LINE = re.compile(r"^moraine_sessions(?:\{[^}]*\})? (\S+)$", re.M)
METRICS_LINE = re.compile(r"metrics at http://127\.0\.0\.1:(\d+)/metrics")


class Routers:
    """Routers A and B: ports, processes (None once killed) and /metrics ports."""

    def __init__(self, env, transport):
        self.env, self.transport = env, transport
        self.client_ports = [H.free_port(), H.free_port()]
        self.procs, self.metrics = [], []
        for i in range(2):
            server_port = H.free_port()
            cfg = os.path.join(env.dir, "router-%s.cfg" % "AB"[i])
            H.write_properties(cfg, {
                "Glacier2.InstanceName": "Glacier2",
                "Glacier2.Client.Endpoints": H.endpoint(self.client_ports[i], transport),
                "Glacier2.Server.Endpoints": H.endpoint(server_port),
                "Glacier2.CryptPasswords": env.passwords,
                "Glacier2.SessionTimeout": "30",
                "Moraine.Metrics.Listen": "127.0.0.1:0",
            })
            proc = env.start_ready("router-%s" % "AB"[i], [env.moraine_bin, "--ice-config", cfg],
                                   [(self.client_ports[i], "Glacier2.Client.Endpoints", transport),
                                    (server_port, "Glacier2.Server.Endpoints", "tcp")])
            self.procs.append(proc)
            self.metrics.append(metrics_port(proc))

    @property
    def endpoints(self):
        return ":".join(H.endpoint(p, self.transport) for p in self.client_ports)

    def sessions(self, i):
        """moraine_sessions of router i (summed over its shards), from GET /metrics."""
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics[i], timeout=3) as r:
            text = r.read().decode(errors="replace")
        return int(sum(float(v) for v in SESSIONS_LINE.findall(text)))

    def kill(self, i):
        """SIGKILL router i by PID (Env.kill)."""
        self.env.kill(self.procs[i])
        self.procs[i] = None


def metrics_port(proc):
    """The /metrics port a router started with Moraine.Metrics.Listen=127.0.0.1:0 logged."""
    def from_log():
        proc.log.flush()
        with open(proc.log_path, errors="replace") as f:
            m = METRICS_LINE.search(f.read())
        return int(m.group(1)) if m else None
    port = H.wait_until(from_log, 5.0)
    H.check(port, "%s logged no metrics port%s" % (proc.name, proc.log_tail()))
    return port


def wait_value(fn, want, timeout):
    """Polls fn() every 50 ms until it returns want; (seconds taken, last value); None if never."""
    t0 = time.monotonic()
    value = fn()
    while value != want and time.monotonic() - t0 < timeout:
        time.sleep(0.05)
        value = fn()
    return (time.monotonic() - t0 if value == want else None), value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bindir = os.path.join(H.REPO, "build", "bin")
    ap.add_argument("--moraine-bin", default=os.path.join(bindir, "moraine-router"))
    ap.add_argument("--subscriber-bin", default=os.path.join(bindir, "clock-subscriber"))
    ap.add_argument("--publisher-bin", default=os.path.join(bindir, "clock-publisher"))
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--transport", choices=["tcp", "ws"], default="tcp", help="of the routers' client endpoints")
    ap.add_argument("--bound", type=float, default=15.0, help="seconds from the kill to all sessions on the survivor")
    ap.add_argument("--timeout", type=float, default=120.0, help="overall bound in seconds")
    ap.add_argument("--keep", action="store_true", help="keep configs and logs even on success")
    args = ap.parse_args()

    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(args.timeout)
    name = "multi-router client (%d sessions, %s)" % (args.sessions, args.transport)
    sub = None
    ok = False
    try:
        # The topic service on a router of its own: killing A or B does not take the topic along.
        topics = env.router("topics", {}, server=False, icestorm=True)
        env.start("publisher", [os.path.abspath(args.publisher_bin), "--topic-manager", H.endpoint(topics.tm_port),
                                "--rate", "5"])
        routers = Routers(env, args.transport)
        t_start = time.monotonic()
        sub = LineClient([os.path.abspath(args.subscriber_bin), "--router", routers.endpoints,
                          "--user", "alice", "--password", H.CRYPT_USERS["alice"],
                          "--topic-manager", H.endpoint(topics.tm_port), "--sessions", str(args.sessions),
                          "--reconnect", "--duration", "600"],
                         os.path.join(env.dir, "clock-subscriber.log"), name="clock-subscriber")
        t_up, m = sub.wait_timed(r"(\d+) sessions up in", 30, "every session up")
        H.check(int(m.group(1)) == args.sessions, "%s of %d sessions up" % (m.group(1), args.sessions))
        # The subscriber destroyed its topic-lookup session: the gauges settle at --sessions.
        took, total = wait_value(lambda: routers.sessions(0) + routers.sessions(1), args.sessions, 5)
        split = [routers.sessions(0), routers.sessions(1)]
        H.check(took is not None, "the routers hold %s sessions, expected %d" % (total, args.sessions))
        H.check(min(split) > 0, "sessions not spread: A %d, B %d" % tuple(split))

        victim = 0 if split[0] >= split[1] else 1
        survivor = 1 - victim
        routers.kill(victim)
        back, held = wait_value(lambda: routers.sessions(survivor), args.sessions, args.bound)
        H.check(back is not None, "%.0f s after the kill the survivor holds %d of %d sessions"
                % (args.bound, held, args.sessions))
        time.sleep(1.0)  # a few ticks on the restored sessions before the summary

        sub.popen.send_signal(signal.SIGINT)  # by PID: the summary, then exit
        m = sub.wait_for(r"reconnections: (\d+) sessions restored, (\d+) reconnecting at the end, "
                         r"(\d+) failed to subscribe again", 10, "the reconnection summary")
        restored, reconnecting, resub_failed = (int(g) for g in m.groups())
        H.check(restored == split[victim], "%d sessions restored, the killed router held %d" % (restored, split[victim]))
        H.check(reconnecting == 0 and resub_failed == 0,
                "%d still reconnecting, %d failed to subscribe again" % (reconnecting, resub_failed))
        m = sub.wait_for(r"^result (\{.*\})$", 5, "the result line")
        result = m.group(1)
        rc = sub.popen.wait(10)
        H.check(rc == 0, "clock-subscriber exit status %s" % rc)
        ok = True
        print("PASS %s" % name)
        print("    %d sessions up in %.2f s: router A %d, router B %d" % (args.sessions, t_up - t_start, *split))
        print("    killed router %s (%d sessions): all %d on router %s %.0f ms after the kill; "
              "clock-subscriber: %d restored, 0 reconnecting, 0 failed to subscribe again"
              % ("AB"[victim], split[victim], args.sessions, "AB"[survivor], back * 1e3, restored))
        print("    clock-subscriber " + result)
    except (H.Failure, OSError) as e:
        print("FAIL %s: %s" % (name, e))
        if sub is not None:
            for line in sub.last_lines(10):
                print("    clock-subscriber: " + line[-300:])
    finally:
        watchdog.cancel()
        if sub is not None:
            sub.stop()
        for proc_name, rc, tail in env.close(ok):
            ok = False
            print("FAIL %s did not shut down cleanly on SIGTERM (exit status %s)%s" % (proc_name, rc, tail))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
