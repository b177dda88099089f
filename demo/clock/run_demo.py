#!/usr/bin/python3
"""The clock demo: moraine-router with its embedded topic service, one clock-publisher, and
clock-subscriber with N sessions at 1 tick/s each. Prints the subscriber's live status and
summary, then the router's CPU and memory in steady state (after every session is up).

  run_demo.py [--sessions 8000] [--duration 60] [--bin build/bin] [--config conf/moraine.yaml] [--isolated]

--isolated runs on free loopback ports (a temporary copy of the config), for tests that must not
depend on the demo's fixed ports 4063, 4064, 10000 and 10001 being free.
"""
import argparse, os, re, resource, signal, socket, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


DEMO_PORTS = {"client": 4063, "server": 4064, "topic_manager": 10000, "publish": 10001}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_config(config, tmpdir):
    """A copy of `config` on free ports, with its password file path made absolute.
    Returns (path, ports by role)."""
    with open(config) as f:
        text = f.read()
    ports = {role: free_port() for role in DEMO_PORTS}
    for role, port in DEMO_PORTS.items():
        text = text.replace("-p %d\"" % port, "-p %d\"" % ports[role])
    conf_dir = os.path.dirname(os.path.abspath(config))
    text = re.sub(r"(crypt_passwords:\s*)(\S+)",
                  lambda m: m.group(1) + os.path.join(conf_dir, m.group(2)), text)
    path = os.path.join(tmpdir, "moraine.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path, ports


def wait_port(port, proc, timeout=15):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            sys.exit("moraine-router exited (rc %s) before listening on %d" % (proc.returncode, port))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("port %d not open after %d s" % (port, timeout))


def stop(proc):
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        sys.exit("need %d open files for %d sessions, the limit is %d (ulimit -n)" % (need, need - 256, soft))


def run_subscriber(cmd, router_pid):
    """Runs clock-subscriber, echoing its output; snapshots the router when all sessions are up.
    Returns (returncode, steady-state snapshot dict, ticks counted in steady state)."""
    sub = subprocess.Popen(cmd, stdout=subprocess.PIPE, bufsize=0)
    steady, ticks, line = None, 0, b""
    try:
        while True:
            ch = sub.stdout.read(1)
            if not ch:
                break
            sys.stdout.buffer.write(ch)
            sys.stdout.flush()
            if ch not in b"\r\n":
                line += ch
                continue
            text = line.decode(errors="replace")
            line = b""
            if steady is None and "sessions up in" in text:
                steady = {"t": time.monotonic(), "cpu": cpu_seconds(router_pid), "rss": rss_kib(router_pid)}
            elif steady is not None and not text.startswith("summary"):
                m = re.search(r"ticks/s (\d+)", text)
                if m:
                    ticks += int(m.group(1))
        return sub.wait(), steady, ticks
    finally:
        stop(sub)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=8000)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--config", default=os.path.join(ROOT, "conf", "moraine.yaml"))
    ap.add_argument("--isolated", action="store_true", help="use free ports instead of the config's")
    a = ap.parse_args()
    raise_fd_limit(a.sessions + 256)  # inherited by the router and the subscriber

    tmpdir = tempfile.mkdtemp(prefix="moraine-demo-")
    config, ports = (isolated_config(a.config, tmpdir) if a.isolated else (a.config, DEMO_PORTS))
    tm_endpoint = "tcp -h 127.0.0.1 -p %d" % ports["topic_manager"]
    router = publisher = None
    try:
        router = subprocess.Popen([os.path.join(a.bin, "moraine-router"), "--config", config])
        for role in ("client", "topic_manager", "publish"):
            wait_port(ports[role], router)
        time.sleep(0.2)
        if router.poll() is not None:  # the ports answered, but not ours: someone else listens there
            sys.exit("moraine-router exited (rc %s): its ports are taken by another process" % router.returncode)
        rss_idle = rss_kib(router.pid)
        publisher = subprocess.Popen([os.path.join(a.bin, "clock-publisher"), "--rate", "1",
                                      "--topic-manager", tm_endpoint])
        time.sleep(0.5)
        cmd = [os.path.join(a.bin, "clock-subscriber"), "--sessions", str(a.sessions), "--duration", str(a.duration),
               "--router", "tcp -h 127.0.0.1 -p %d" % ports["client"], "--topic-manager", tm_endpoint]
        rc, steady, ticks = run_subscriber(cmd, router.pid)
        end = {"t": time.monotonic(), "cpu": cpu_seconds(router.pid)}
        if steady:
            wall = end["t"] - steady["t"]
            cpu = end["cpu"] - steady["cpu"]
            per_session = (steady["rss"] - rss_idle) * 1024.0 / max(1, a.sessions)
            print("router: steady state %.0f s: CPU %.1f%% of one core, %.1f us CPU per delivered event "
                  "(%d events); RSS %.1f MiB idle, %.1f MiB with %d sessions = %.0f bytes per session"
                  % (wall, 100.0 * cpu / wall, 1e6 * cpu / max(1, ticks), ticks, rss_idle / 1024.0,
                     steady["rss"] / 1024.0, a.sessions, per_session))
        return rc
    finally:
        stop(publisher)
        stop(router)
        for name in os.listdir(tmpdir):
            os.unlink(os.path.join(tmpdir, name))
        os.rmdir(tmpdir)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
