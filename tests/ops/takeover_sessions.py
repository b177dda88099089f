#!/usr/bin/python3
"""Live upgrade, phase 2a: established tcp and ws Glacier2 sessions move to the new router.

  /usr/bin/python3 tests/ops/takeover_sessions.py [--moraine-bin build/bin/moraine-router] [--clients N]
      [--cpp-clients M] [--cpp-build-dir DIR] [--buffered] [--keep]

All on loopback, with tests/interop/harness.py (the Python Demo back end, real Ice 3.7 clients
with no retries: Ice.RetryIntervals=-1): N Python clients (default 10) and M C++ clients
(tests/interop/cpp/takeover_client.cpp, one process each; default 4 when DIR, default
build/interop-cpp, exists, else 0 with a note). Asking for C++ clients (--cpp-clients M > 0 or
--cpp-build-dir) when DIR does not exist is a failure, not a skip; when it exists, the C++
clients are brought up to date in it as tests/interop/run.py builds them.

One property file serves both routers: tcp and ws client endpoints, a tcp server endpoint,
Glacier2.Trace.Session=1, the takeover socket and a long takeover drain deadline (20 s), so that
an early exit of the old router shows the sessions moved.

  1. router A (2 shards) starts; N + M clients (in each language every other one over ws) each
     create a session, register a callback object in their category and start calling: sayHello
     and callMeBack (a twoway callback through the router's server endpoint); a Python client
     makes one call every 50 ms, a C++ client both calls, then a 50 ms pause;
  2. router B (3 shards) starts with --takeover; A must log that it moved N + M sessions and exit
     0 well before its 20 s drain deadline; B must log that it adopted N + M sessions;
  3. the clients go on calling for 1.5 s after A exited, now only through B;
  4. checks: 0 calls failed (a C++ client counts and prints every exception); every client made
     calls and got callbacks after A exited; each client's getCategoryForClient is what it was
     on A; each C++ client's router connection is of the transport asked for; B traced no
     session created; A said how many callbacks for sessions already in B it relayed there
     (docs/takeover.md "Back ends"; printed: under --clients 200 they are hundreds);
  5. B exits 0 on SIGTERM.

--buffered: Glacier2 buffered mode both ways (Glacier2.Client/Server.Buffered=1, SleepTime
300 ms), and each Python client, instead of pausing, sends a oneway note every 5 ms between its
calls, so its request queue always holds something. A takeover cuts the hold short (the queues
are flushed, not carried: docs/takeover.md "Buffered mode"): every session must have moved within
1 s of the handover, and the back end must have every note of every client exactly once (in
any order: the back end dispatches on 4 threads).

Prints PASS with the figures (sessions moved, ms for the move, calls made and failed), or FAIL
with the reason (logs kept), and exits 0 or 1. Every process is stopped by PID; every wait is bounded.
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
import Glacier2  # noqa: E402  (after harness: see harness._import_glacier2)
import Ice  # noqa: E402
from routed_client import log_text  # noqa: E402
from takeover_common import take_over, wait_log  # noqa: E402

Demo = H.Demo
DRAIN_MS = 20000
PAUSE_S = 0.05
HOLD_MS = 300  # --buffered: Glacier2.Client/Server.SleepTime
NOTE_EVERY_S = 0.005  # --buffered: a oneway note this often during the pause


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

    def __init__(self, env, proxy, hello, index, notes=False):
        super().__init__(daemon=True)
        self.index = index
        self.notes = 0 if notes else None  # oneway notes sent (--buffered), or None
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
            self.pause()

    def pause(self):
        """PAUSE_S between calls; with notes, a oneway note every NOTE_EVERY_S meanwhile."""
        if self.notes is None:
            time.sleep(PAUSE_S)
            return
        oneway = self.hello.ice_oneway()
        until = time.monotonic() + PAUSE_S
        while time.monotonic() < until and not self.stopping.is_set():
            try:
                oneway.note(self.note_prefix() + str(self.notes))
                self.notes += 1
            except Ice.Exception as e:
                self.failed += 1
                self.errors.append("note: %s: %s" % (type(e).__name__, str(e).strip()[:200]))
            time.sleep(NOTE_EVERY_S)

    def note_prefix(self):
        return "client %d note " % self.index

    def set_mark(self):
        self.mark = (self.calls, self.servant.got)

    def since_mark(self):
        return self.calls - self.mark[0], self.servant.got - self.mark[1]

    def stop(self):
        self.stopping.set()
        self.join(10)

    def close(self):
        self.ic.destroy()


class CppClient:
    """One C++ Ice 3.7 client process (moraine-interop-takeover-client): its session, callback
    object and calls run in the process; this side reads its stdout lines and asks for its counts
    with `mark` on its stdin (see takeover_client.cpp)."""

    def __init__(self, env, exe, proxy, hello, index, transport):
        self.index, self.transport = index, transport
        self.lines = []
        self.cond = threading.Condition()
        self.log = open(os.path.join(env.dir, "cpp-client-%d.log" % index), "w")
        self.popen = subprocess.Popen([exe, proxy, hello, "alice", H.CRYPT_USERS["alice"]],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                      text=True, bufsize=1, preexec_fn=H._die_with_parent)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.mark = None  # the `mark` counts when marked
        self.summary = None
        try:
            ready = self.wait_line("ready", 15)
        except H.Failure:
            self.close()
            raise
        self.category, self.connection = ready["category"], ready["transport"]

    def _read(self):
        for line in self.popen.stdout:
            self.log.write(line)
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)  # EOF
            self.cond.notify_all()

    def wait_line(self, word, timeout, after=0):
        """The key=value fields of the first line from index `after` on that starts with `word`;
        a Failure if the client exits, prints FAIL, or `timeout` s pass first."""
        def found():
            for line in self.lines[after:]:
                if line is None or line.startswith("FAIL") or line.split(" ", 1)[0] == word:
                    return line
            return False
        with self.cond:
            line = found() if self.cond.wait_for(lambda: found() is not False, timeout) else False
        if line is False or line is None or not line.startswith(word):
            raise H.Failure("C++ client %d (%s): no `%s` line (%s)%s" % (
                self.index, self.transport, word, "timeout" if line is False else "exited" if line is None else line,
                self.errors()[:3]))
        return dict(f.split("=", 1) for f in line.split(" ")[1:] if "=" in f)

    def errors(self):
        with self.cond:
            return [line for line in self.lines if line and line.startswith("error")]

    def counts(self):
        """(calls, failed, callbacks) so far, asked on stdin."""
        with self.cond:
            after = len(self.lines)
        self.popen.stdin.write("mark\n")
        self.popen.stdin.flush()
        m = self.wait_line("mark", 10, after)
        return int(m["calls"]), int(m["failed"]), int(m["callbacks"])

    def set_mark(self):
        self.mark = self.counts()

    def stop(self):
        """Ends the loop (closes stdin) and reads the summary; the exit status must agree."""
        self.popen.stdin.close()
        self.summary = self.wait_line("summary", 15)
        try:
            rc = self.popen.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        failed = int(self.summary["failed"])
        H.check(rc == (0 if failed == 0 and self.summary["category_end"] == self.category else 1),
                "C++ client %d: exit status %s after %s" % (self.index, rc, self.summary))
        return int(self.summary["calls"]), failed, int(self.summary["callbacks"])

    def since_mark(self):
        return int(self.summary["calls"]) - self.mark[0], int(self.summary["callbacks"]) - self.mark[2]

    def close(self):
        if self.popen.poll() is None:
            self.popen.kill()  # by PID: our child
            self.popen.wait(5)
        self.reader.join(5)
        self.log.close()


def check_notes(clients, hello):
    """--buffered: the back end received every note of every Python client exactly once (asked
    through one client's session, which reaches the back end through B). Their order is not
    checked: the back end dispatches on 4 threads. @return the notes sent; a Failure otherwise."""
    asker = Demo.HelloPrx.uncheckedCast(clients[0].ic.stringToProxy(hello))
    sent = 0
    for c in clients:
        expected = [c.note_prefix() + str(n) for n in range(c.notes)]
        got = asker.notesFrom(c.note_prefix())
        H.check(sorted(got) == sorted(expected), "client %d: the back end has %d of its notes, %d sent (%d twice, %d"
                " missing)" % (c.index, len(got), len(expected), len(got) - len(set(got)),
                               len(set(expected) - set(got))))
        sent += len(expected)
    return sent


def cpp_setup(env, args):
    """How many C++ clients, and their executable (None for none); a Failure if they were asked
    for and the build dir is missing or the build fails."""
    default_dir = os.path.join(H.REPO, "build", "interop-cpp")
    build_dir = os.path.abspath(args.cpp_build_dir or default_dir)
    n = args.cpp_clients
    if n is None:
        n = 4 if args.cpp_build_dir is not None or os.path.isdir(build_dir) else 0
    if n <= 0:
        if args.cpp_clients is None:
            print("    no C++ clients: no C++ build dir at %s (--cpp-build-dir DIR or --cpp-clients M asks for them)"
                  % build_dir)
        return 0, None
    H.check(os.path.isdir(build_dir),
            "%d C++ clients asked for, but the C++ build dir %s does not exist: build tests/interop/cpp there first"
            " (tests/interop/run.py --cpp-build-dir DIR builds it, as tests/run does), or run with --cpp-clients 0"
            % (n, build_dir))
    env.cpp_build_dir = build_dir
    env.build_cpp_client()  # incremental: makes sure the takeover client is there and current
    exe = os.path.join(build_dir, "moraine-interop-takeover-client")
    H.check(os.access(exe, os.X_OK), "the C++ takeover client %s was not built" % exe)
    return n, exe


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--clients", type=int, default=10, help="Python clients")
    ap.add_argument("--cpp-clients", type=int, default=None,
                    help="C++ clients (default: 4 if the C++ build dir exists, else 0)")
    ap.add_argument("--cpp-build-dir", default=None,
                    help="where tests/interop/cpp is built (default build/interop-cpp); giving it asks for C++ clients")
    ap.add_argument("--buffered", action="store_true",
                    help="Glacier2 buffered mode, with queues that always hold oneway notes: they are flushed at the move")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(120)
    clients = []
    cpp = []
    ok = False
    name = "takeover_sessions%s (established tcp and ws sessions move to the new router%s)" % (
        (" --buffered", ", their buffered queues flushed at the move") if args.buffered else ("", ""))
    try:
        n_cpp, cpp_exe = cpp_setup(env, args)
        total = args.clients + n_cpp
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
        if args.buffered:
            props.update({"Glacier2.Client.Buffered": "1", "Glacier2.Server.Buffered": "1",
                          "Glacier2.Client.SleepTime": str(HOLD_MS), "Glacier2.Server.SleepTime": str(HOLD_MS)})
        cfg = os.path.join(env.dir, "router.cfg")
        H.write_properties(cfg, props)
        ready = [(ports["client"], "Glacier2.Client.Endpoints")]

        # 1. Router A, N sessions with callbacks, calling.
        a = env.start_ready("router-A", [env.moraine_bin, "--threads", "2", "--ice-config", cfg], ready)
        proxies = ["Glacier2/router:" + H.endpoint(ports["client"]), "Glacier2/router:" + H.endpoint(ports["ws"], "ws")]
        for i in range(args.clients):
            clients.append(SessionClient(env, proxies[i % 2], hello, i, notes=args.buffered))
        categories = {c.index: c.category for c in clients}
        for c in clients:
            c.start()
        transports = ["tcp", "ws"]
        for i in range(n_cpp):
            cpp.append(CppClient(env, cpp_exe, proxies[i % 2], hello, i, transports[i % 2]))
        H.check(all(c.connection == c.transport for c in cpp), "C++ clients' router connections: %s, expected %s"
                % ([c.connection for c in cpp], [c.transport for c in cpp]))
        time.sleep(1.0)
        H.check(all(c.calls > 0 and c.servant.got > 0 for c in clients), "clients did not call through A: %s"
                % [(c.calls, c.servant.got, c.errors[:1]) for c in clients])
        early = [c.counts() for c in cpp]
        H.check(all(calls > 0 and cbs > 0 for calls, _, cbs in early), "C++ clients did not call through A: %s %s"
                % (early, [c.errors()[:1] for c in cpp]))

        # 2. B takes over; A moves its sessions and exits.
        def mark():
            for c in clients + cpp:
                c.set_mark()
        t = take_over(env, a, cfg, sock_path, DRAIN_MS, at_exit=mark)
        b, t_exit, a_log = t.b, t.t_exit, t.a_log
        n_moved, n_bytes, move_ms = t.moved, t.moved_bytes, t.move_ms
        relayed = re.search(r"takeover: relayed (\d+) back-end request", a_log)
        H.check(relayed is not None, "router A did not say how many callbacks it relayed: %s" % a_log[-800:])
        H.check(n_moved == total, "router A moved %d of %d sessions: %s" % (n_moved, total, a_log[-800:]))
        H.check(t_exit < DRAIN_MS / 2000.0, "router A exited %.1f s after B started: the sessions did not move early"
                % t_exit)
        if args.buffered:  # held queues would keep sessions in A for as long as their clients send
            H.check(move_ms <= 1000, "the sessions took %d ms to move (at most 1000 expected): the buffered"
                    " queues did not let them go" % move_ms)
        adopted = wait_log(b, r"takeover: adopted (\d+) session\(s\) \((\d+) bytes", 5)
        H.check(adopted is not None and int(adopted.group(1)) == total,
                "router B did not log %d sessions adopted%s" % (total, b.log_tail()))

        # 3. The same clients go on calling, through B only.
        time.sleep(1.5)
        for c in clients:
            c.stop()
        cpp_totals = [c.stop() for c in cpp]

        # 4. Checks.
        failed = sum(c.failed for c in clients)
        H.check(failed == 0, "%d calls failed: %s" % (failed, [e for c in clients for e in c.errors][:5]))
        cpp_failed = sum(f for _, f, _ in cpp_totals)
        H.check(cpp_failed == 0, "%d calls of the C++ clients failed: %s"
                % (cpp_failed, [e for c in cpp for e in c.errors()][:5]))
        after = [c.since_mark() for c in clients]
        H.check(all(calls > 0 and cbs > 0 for calls, cbs in after),
                "calls and callbacks per client after A exited: %s" % after)
        cpp_after = [c.since_mark() for c in cpp]
        H.check(all(calls > 0 and cbs > 0 for calls, cbs in cpp_after),
                "calls and callbacks per C++ client after A exited: %s" % cpp_after)
        if args.buffered:
            notes = check_notes(clients, hello)
        same = [c.router.getCategoryForClient() == categories[c.index] for c in clients]
        H.check(all(same), "categories changed after the move: %s" % same)
        cpp_same = [c.summary["category_start"] == c.summary["category_end"] == c.category for c in cpp]
        H.check(all(cpp_same), "C++ clients' categories changed after the move: %s" % [c.summary for c in cpp])
        b_log = log_text(b)
        created_on_b = b_log.count("created session")
        H.check(created_on_b == 0, "router B traced %d new sessions: the clients' sessions were not moved" % created_on_b)
        calls = sum(c.calls for c in clients)
        callbacks = sum(c.servant.got for c in clients)
        print("    %d sessions (%d Python, %d C++; %d tcp, %d ws) moved from A (2 shards) to B (3 shards): %d bytes of "
              "session state, %d ms from the handover to the last one; A exited 0 %.2f s after B started (drain "
              "deadline %d s)" % (n_moved, args.clients, n_cpp, (args.clients + 1) // 2 + (n_cpp + 1) // 2,
                                  args.clients // 2 + n_cpp // 2, n_bytes, move_ms, t_exit, DRAIN_MS // 1000))
        print("    Python clients: %d calls (sayHello, callMeBack) and %d callbacks in all, %d calls and %d callbacks"
              " after A exited; 0 failed; categories unchanged"
              % (calls, callbacks, sum(x for x, _ in after), sum(y for _, y in after)))
        if cpp:
            print("    C++ clients: %d calls (sayHello, callMeBack) and %d callbacks in all, %d calls and %d callbacks"
                  " after A exited; 0 failed; categories unchanged"
                  % (sum(x for x, _, _ in cpp_totals), sum(z for _, _, z in cpp_totals),
                     sum(x for x, _ in cpp_after), sum(y for _, y in cpp_after)))
        if args.buffered:
            print("    buffered mode (SleepTime %d ms): %d oneway notes sent through the queues, each received by the"
                  " back end exactly once" % (HOLD_MS, notes))
        print("    callbacks that reached A for a session already in B, relayed by A: %s" % relayed.group(1))
        print("    no session created on B")
        ok = True
    except (H.Failure, OSError, Ice.Exception) as e:
        print("FAIL %s: %s" % (name, e))
    finally:
        for c in clients:
            if c.is_alive():
                c.stop()
            c.close()
        for c in cpp:
            c.close()
        watchdog.cancel()
    return env.finish(name, ok)  # B must exit 0 on SIGTERM


if __name__ == "__main__":
    sys.exit(main())
