#!/usr/bin/python3
"""Live upgrade, phase 2a: established tcp and ws Glacier2 sessions move to the new router.

  /usr/bin/python3 tests/ops/takeover_sessions.py [--moraine-bin build/bin/moraine-router] [--clients N] [--keep]

All on loopback, with tests/interop/harness.py (the Python Demo back end, real Ice 3.7 clients
with no retries: Ice.RetryIntervals=-1). One property file serves both routers: tcp and ws client
endpoints, a tcp server endpoint, Glacier2.Trace.Session=1, the takeover socket and a long
takeover drain deadline (20 s), so that an early exit of the old router shows the sessions moved.

  1. router A (2 shards) starts; N clients (default 10; every other one over ws) each create a session, register a
     callback object in their category and start calling: sayHello and callMeBack (a twoway
     callback through the router's server endpoint), one call every 50 ms each;
  2. router B (3 shards) starts with --takeover; A must log that it moved N sessions and exit 0
     well before its 20 s drain deadline; B must log that it adopted N sessions;
  3. the clients go on calling for 1.5 s after A exited, now only through B;
  4. checks: 0 calls failed; every client made calls and got callbacks after A exited; each
     client's getCategoryForClient is what it was on A; B traced no session created;
  5. B exits 0 on SIGTERM.

Prints PASS with the figures (sessions moved, ms for the move, calls made and failed), or FAIL
with the reason (logs kept), and exits 0 or 1. Every process is stopped by PID; every wait is bounded.
"""
import argparse
import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
import Glacier2  # noqa: E402  (after harness: see harness._import_glacier2)
import Ice  # noqa: E402
from routed_client import log_text  # noqa: E402

Demo = H.Demo
DRAIN_MS = 20000
PAUSE_S = 0.05


class CallbackI(Demo.Callback):
    """Counts the callbacks the back end sent through the router."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = 0

    def ping(self, msg, current):
        with self.lock:
            self.got += 1


class SessionClient(threading.Thread):
    """One Ice client: a session, a callback object in its category, and a loop of calls."""

    def __init__(self, env, proxy, hello, index):
        super().__init__(daemon=True)
        self.index = index
        self.ic = env.communicator(extra={"Ice.Default.Router": proxy})
        self.router = Glacier2.RouterPrx.checkedCast(self.ic.getDefaultRouter())
        self.hello = Demo.HelloPrx.uncheckedCast(self.ic.stringToProxy(hello))
        self.router.createSession("alice", H.CRYPT_USERS["alice"])
        self.category = self.router.getCategoryForClient()
        adapter = self.ic.createObjectAdapterWithRouter("Cb%d" % index, self.router)
        self.servant = CallbackI()
        self.cb = Demo.CallbackPrx.uncheckedCast(adapter.add(self.servant, Ice.Identity("cb", self.category)))
        adapter.activate()
        self.calls = self.failed = 0
        self.errors = []
        self.mark = None  # (calls, callbacks) when marked
        self.stopping = threading.Event()

    def run(self):
        n = 0
        while not self.stopping.is_set():
            n += 1
            try:
                if n % 2:
                    self.hello.sayHello("client %d call %d" % (self.index, n))
                else:
                    self.hello.callMeBack(self.cb, "client %d callback %d" % (self.index, n))
                self.calls += 1
            except Ice.Exception as e:
                self.failed += 1
                self.errors.append("%s: %s" % (type(e).__name__, str(e).strip()[:200]))
            time.sleep(PAUSE_S)

    def set_mark(self):
        self.mark = (self.calls, self.servant.got)

    def since_mark(self):
        return self.calls - self.mark[0], self.servant.got - self.mark[1]

    def stop(self):
        self.stopping.set()
        self.join(10)

    def close(self):
        self.ic.destroy()


def wait_log(proc, pattern, timeout):
    """The first match of regex `pattern` in proc's log within `timeout` s, or None."""
    found = []

    def look():
        m = re.search(pattern, log_text(proc))
        if m:
            found.append(m)
        return bool(m) or not proc.alive()
    H.wait_until(look, timeout)
    m = re.search(pattern, log_text(proc))
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(120)
    clients = []
    ok = False
    name = "takeover_sessions (established tcp and ws sessions move to the new router)"
    try:
        hello = env.hello_proxy()
        ports = {k: H.free_port() for k in ("client", "ws", "server")}
        sock_path = os.path.join(env.dir, "takeover.sock")
        props = {
            "Glacier2.InstanceName": "Glacier2",
            "Glacier2.Client.Endpoints": H.endpoint(ports["client"]) + ":" + H.endpoint(ports["ws"], "ws"),
            "Glacier2.Server.Endpoints": H.endpoint(ports["server"]),
            "Glacier2.Trace.Session": "1",
            "Glacier2.CryptPasswords": env.passwords,
            "Glacier2.SessionTimeout": "30",
            "Moraine.Takeover.Socket": sock_path,
            "Moraine.Takeover.DrainTimeout": str(DRAIN_MS),
        }
        cfg = os.path.join(env.dir, "router.cfg")
        H.write_properties(cfg, props)
        ready = [(ports["client"], "Glacier2.Client.Endpoints")]

        # 1. Router A, N sessions with callbacks, calling.
        a = env.start_ready("router-A", [env.moraine_bin, "--threads", "2", "--ice-config", cfg], ready)
        proxies = ["Glacier2/router:" + H.endpoint(ports["client"]), "Glacier2/router:" + H.endpoint(ports["ws"], "ws")]
        for i in range(args.clients):
            clients.append(SessionClient(env, proxies[i % 2], hello, i))
        categories = {c.index: c.category for c in clients}
        for c in clients:
            c.start()
        time.sleep(1.0)
        H.check(all(c.calls > 0 and c.servant.got > 0 for c in clients), "clients did not call through A: %s"
                % [(c.calls, c.servant.got, c.errors[:1]) for c in clients])

        # 2. B takes over; A moves its sessions and exits.
        t0 = time.monotonic()
        b = env.start("router-B", [env.moraine_bin, "--threads", "3", "--ice-config", cfg, "--takeover", sock_path])
        moved = wait_log(a, r"takeover: moved (\d+) session\(s\) \((\d+) bytes of session state\) to pid \d+ in (\d+) ms",
                         15)
        H.check(moved is not None, "router A did not log the sessions it moved%s" % a.log_tail())
        try:
            rc = a.popen.wait(DRAIN_MS / 1000.0 + 10)
        except Exception:  # noqa: BLE001  (subprocess.TimeoutExpired: still running is the failure)
            rc = None
        t_exit = time.monotonic() - t0
        for c in clients:
            c.set_mark()
        a_log = log_text(a)
        env.procs.remove(a)  # its exit is the test's doing
        a.log.close()
        H.check(rc == 0, "router A: exit status %s, expected 0%s" % (rc, a_log[-800:]))
        n_moved, n_bytes, move_ms = (int(x) for x in moved.groups())
        H.check(n_moved == args.clients, "router A moved %d of %d sessions: %s" % (n_moved, args.clients, a_log[-800:]))
        H.check(t_exit < DRAIN_MS / 2000.0, "router A exited %.1f s after B started: the sessions did not move early"
                % t_exit)
        adopted = wait_log(b, r"takeover: adopted (\d+) session\(s\) \((\d+) bytes", 5)
        H.check(adopted is not None and int(adopted.group(1)) == args.clients,
                "router B did not log %d sessions adopted%s" % (args.clients, b.log_tail()))

        # 3. The same clients go on calling, through B only.
        time.sleep(1.5)
        for c in clients:
            c.stop()

        # 4. Checks.
        failed = sum(c.failed for c in clients)
        H.check(failed == 0, "%d calls failed: %s" % (failed, [e for c in clients for e in c.errors][:5]))
        after = [c.since_mark() for c in clients]
        H.check(all(calls > 0 and cbs > 0 for calls, cbs in after),
                "calls and callbacks per client after A exited: %s" % after)
        same = [c.router.getCategoryForClient() == categories[c.index] for c in clients]
        H.check(all(same), "categories changed after the move: %s" % same)
        b_log = log_text(b)
        created_on_b = b_log.count("created session")
        H.check(created_on_b == 0, "router B traced %d new sessions: the clients' sessions were not moved" % created_on_b)
        calls = sum(c.calls for c in clients)
        callbacks = sum(c.servant.got for c in clients)
        print("    %d sessions (%d tcp, %d ws) moved from A (2 shards) to B (3 shards): %d bytes of session state, %d ms from the "
              "handover to the last one; A exited 0 %.2f s after B started (drain deadline %d s)"
              % (n_moved, (args.clients + 1) // 2, args.clients // 2, n_bytes, move_ms, t_exit, DRAIN_MS // 1000))
        print("    %d calls (sayHello, callMeBack) and %d callbacks in all, %d calls and %d callbacks after A exited;"
              " 0 failed; categories unchanged; no session created on B"
              % (calls, callbacks, sum(x for x, _ in after), sum(y for _, y in after)))
        ok = True
    except (H.Failure, OSError, Ice.Exception) as e:
        print("FAIL %s: %s" % (name, e))
    finally:
        for c in clients:
            if c.is_alive():
                c.stop()
            c.close()
        watchdog.cancel()
    return env.finish(name, ok)  # B must exit 0 on SIGTERM


if __name__ == "__main__":
    sys.exit(main())
