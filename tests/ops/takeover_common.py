"""What the live-upgrade tests share (tests/ops/takeover_sessions.py, tests/ops/takeover_icestorm.py):
router B started with `--takeover` on router A's configuration, A's log of the sessions it moved,
and A's own exit awaited. Import after tests/interop/harness.py."""
import re
import time

import harness as H
from routed_client import log_text

# A's line once no session is left to move, or at its drain deadline (docs/takeover.md): moved,
# bytes, ms, and the sessions that stay in A (optional, for a router that does not say).
MOVED = (r"takeover: moved (\d+) session\(s\) \((\d+) bytes of session state\) to pid \d+ in (\d+) ms"
         r"(?:; (\d+) session\(s\) stay here)?")


def wait_log(proc, pattern, timeout):
    """The first match of regex `pattern` in proc's log within `timeout` s (or as soon as proc
    exited), or None."""
    def look():
        return bool(re.search(pattern, log_text(proc))) or not proc.alive()
    H.wait_until(look, timeout)
    return re.search(pattern, log_text(proc))


class Takeover:
    """What take_over saw: B (a harness process, still running), A's exit status (0), the seconds
    from B's start to A's exit, A's whole log, and A's figures: sessions moved, their bytes, the
    ms the move took, and the sessions that stayed in A (None if A's line does not say)."""

    def __init__(self, b, t_exit, a_log, moved):
        self.b, self.t_exit, self.a_log = b, t_exit, a_log
        self.moved, self.moved_bytes, self.move_ms = (int(x) for x in moved.groups()[:3])
        self.stayed = int(moved.group(4)) if moved.group(4) is not None else None


def take_over(env, a, cfg, sock_path, drain_ms, at_exit=None, threads=3, moved_timeout=15):
    """Starts router B (`threads` shards) with A's property file `cfg` and `--takeover sock_path`;
    waits up to moved_timeout s for A (a harness process) to log the sessions it moved, then up to
    drain_ms + 10 s for A to exit, and calls at_exit() right then (the figures a test takes at A's
    exit). A is taken off env's list (its exit is the test's doing); if it is still running, it is
    stopped by PID. A Failure if A logs no move or does not exit 0; else a Takeover."""
    t0 = time.monotonic()
    b = env.start("router-B", [env.moraine_bin, "--threads", str(threads), "--ice-config", cfg,
                               "--takeover", sock_path])
    moved = wait_log(a, MOVED, moved_timeout)
    H.check(moved is not None, "router A did not log the sessions it moved%s" % a.log_tail())
    try:
        rc = a.popen.wait(drain_ms / 1000.0 + 10)
    except Exception:  # noqa: BLE001  (subprocess.TimeoutExpired: still running is the failure)
        rc = None
    t_exit = time.monotonic() - t0
    if at_exit is not None:
        at_exit()
    a_log = log_text(a)
    env.procs.remove(a)
    if rc is None:
        a.stop()  # by PID: SIGTERM, SIGKILL after 5 s; closes its log
    else:
        a.log.close()
    H.check(rc == 0, "router A: exit status %s, expected 0%s" % (
        rc if rc is not None else "none (still running %.0f s after B started)" % t_exit, a_log[-800:]))
    return Takeover(b, t_exit, a_log, moved)
