#!/usr/bin/python3
"""The clock demo: moraine-router with its embedded topic service, one clock-publisher, and
clock-subscriber with N sessions at 1 tick/s each. Prints the subscriber's live status and
summary, then the router's CPU and memory in steady state (after every session is up).

  run_demo.py [--sessions 8000] [--duration 60] [--bin build/bin] [--config conf/moraine.yaml] [--isolated]
              [--web [--screenshot PATH]]

--isolated runs on free loopback ports (a temporary copy of the config), for tests that must not
depend on the demo's fixed ports 4063, 4064, 10000 and 10001 being free.

--web: the clock demo in a web page too (demo/web/README.md). Runs demo/web/setup, gives the
router a ws client endpoint (ws -h 127.0.0.1 -p 4065, in a temporary copy of the config), serves
the page on http://127.0.0.1:4080/ (demo/web/serve.py) and prints its URL: open it while the
demo runs and the page is one more session of the router. --isolated: free ports for both.
--screenshot PATH (implies --web): once the sessions are up, a headless Chromium
(/usr/bin/chromium, demo/web/screenshot.js) opens the page; about 5 s before the end of the run,
with the C++ sessions still up, it saves a PNG of the page to PATH (after at least 3 ticks), and
the summary reports the page's figures. A page that got fewer than 3 ticks or lost any fails the run.
With --web the page also shows, beside its own figures, the C++ sessions running at the same time
in the same router: the latest status line of clock-subscriber and the router's CPU and RSS,
which this script keeps in a DemoStatus that serve.py answers GET /demo-status with.
"""
import argparse, collections, json, os, queue, re, resource, signal, socket, subprocess, sys, tempfile, threading, time
import urllib.request

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
WEB_DIR = os.path.join(ROOT, "demo", "web")
WEB_PORTS = {"ws": 4065, "http": 4080}  # --web: the router's ws client endpoint, the page's server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_config(config, tmpdir, isolated, web_ports=None):
    """A copy of `config`, with its password file path made absolute: on free ports if isolated;
    with a ws client endpoint on web_ports["ws"] if web_ports. Returns (path, ports by role)."""
    with open(config) as f:
        text = f.read()
    ports = dict(DEMO_PORTS)
    if isolated:
        ports = {role: free_port() for role in DEMO_PORTS}
        for role, port in DEMO_PORTS.items():
            text = text.replace("-p %d\"" % port, "-p %d\"" % ports[role])
        text = re.sub(r'(listen:\s*"127\.0\.0\.1:)\d+"', lambda m: m.group(1) + '%d"' % free_port(), text)
    if web_ports:
        ports.update(web_ports)
        # The first `endpoints:` of the `client:` section: Ice endpoints, joined with ':'.
        m = re.search(r'^client:[ \t]*\n(?:[ \t]*(?:#.*)?\n|[ \t]+(?![ \t]|endpoints:).*\n)*?[ \t]+endpoints:[ \t]*"([^"]*)"',
                      text, re.M)
        if not m:
            sys.exit("--web: %s has no client endpoints (a quoted string) to add ws to" % config)
        text = text[:m.end(1)] + ":ws -h 127.0.0.1 -p %d" % ports["ws"] + text[m.end(1):]
    conf_dir = os.path.dirname(os.path.abspath(config))
    text = re.sub(r"(crypt_passwords:\s*)(\S+)",
                  lambda m: m.group(1) + os.path.join(conf_dir, m.group(2)), text)
    path = os.path.join(tmpdir, "moraine.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path, ports


def metrics_url(config):
    """The router's /metrics URL from the config's `metrics: listen:` (None when metrics are off)."""
    with open(config) as f:
        m = re.search(r'^metrics:\s*\n(?:\s*#.*\n)*\s+listen:\s*"?([0-9.]+):(\d+)"?', f.read(), re.M)
    return "http://%s:%s/metrics" % (m.group(1), m.group(2)) if m else None


def scrape(url):
    """Sums of the router's own counters over its shards, from its Prometheus text at `url`."""
    sums = {}
    with urllib.request.urlopen(url, timeout=5) as r:
        for line in r.read().decode().splitlines():
            m = re.match(r"^([a-z_]+)(?:\{([^}]*)\})? (\S+)$", line)
            if not m:
                continue
            key = m.group(1)
            reason = re.search(r'reason="([a-z_]+)"', m.group(2) or "")
            if reason:
                key += ":" + reason.group(1)
            sums[key] = sums.get(key, 0.0) + float(m.group(3))
    return sums


def metrics_line(url):
    """One line of what the router itself counted, read from /metrics (docs/operations.md)."""
    try:
        m = scrape(url)
    except OSError as e:
        return "router /metrics: not read (%s)" % e
    closed = ", ".join("%s %d" % (k.split(":")[1], v) for k, v in sorted(m.items())
                       if k.startswith("moraine_connections_closed_total:") and v)
    return ("router /metrics (%s, after the subscribers left): %d sessions, %d created; %d events delivered, %d dropped; %d protocol errors; "
            "connections closed: %s" % (url, m.get("moraine_sessions", 0), m.get("moraine_sessions_created_total", 0),
                                        m.get("moraine_events_delivered_total", 0),
                                        m.get("moraine_events_dropped_total", 0),
                                        m.get("moraine_protocol_errors_total", 0), closed or "none"))


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


# clock-subscriber's status line, once a second (clock_subscriber.cpp, print_status): ticks/s and
# p50/p99 are of its last second, lost is since the start. Its final status line, printed at once
# after the last one and without a '\r', is read as part of that line: the first match is kept
# (the final one covers a fraction of a second).
STATUS_LINE = re.compile(r"([\d.]+)s  sessions up (\d+) \(failed (\d+), dropped (\d+)\)  ticks/s (\d+)  "
                         r"lost (\d+)  p50 ([\d.]+) ms  p99 ([\d.]+) ms")


class DemoStatus:
    """The latest figures of the C++ sessions (clock-subscriber's last status line) and of the
    router (CPU share and RSS, read from /proc when that line came), for the web page: serve.py
    answers GET /demo-status with snapshot(). update() runs in the thread reading the subscriber,
    snapshot() in the server's; a lock keeps each snapshot whole."""

    CPU_WINDOW = 5  # status lines (about seconds) the router's CPU share and CPU per event cover

    def __init__(self, sessions, router_pid, rss_idle_kib):
        self.lock = threading.Lock()
        self.router_pid = router_pid
        self.rss_idle_kib = rss_idle_kib
        self.samples = collections.deque(maxlen=self.CPU_WINDOW + 1)  # (monotonic, router CPU s, ticks)
        self.updated = None
        self.data = {"sessions": sessions, "phase": "starting", "sessions_up": 0, "failed": 0, "dropped": 0,
                     "ticks_per_s": None, "lost": 0, "p50_ms": None, "p99_ms": None, "elapsed_s": None,
                     "router": None}

    def router_figures(self, ticks, up):
        now = time.monotonic()
        try:
            cpu, rss = cpu_seconds(self.router_pid), rss_kib(self.router_pid)
        except OSError:
            return None  # the router is gone
        self.samples.append((now, cpu, ticks))
        t0, cpu0, _ = self.samples[0]
        events = sum(s[2] for s in list(self.samples)[1:])
        r = {"rss_mib": round(rss / 1024.0, 1), "rss_idle_mib": round(self.rss_idle_kib / 1024.0, 1),
             "rss_per_session_bytes": round((rss - self.rss_idle_kib) * 1024.0 / up) if up else None,
             "cpu_percent": None, "cpu_us_per_event": None, "cpu_window_s": None}
        if now - t0 >= 0.5:
            r["cpu_percent"] = round(100.0 * (cpu - cpu0) / (now - t0), 1)
            r["cpu_window_s"] = round(now - t0, 1)
            if events > 0:
                r["cpu_us_per_event"] = round(1e6 * (cpu - cpu0) / events, 2)
        return r

    def update(self, text, all_up):
        """Takes a line of clock-subscriber's output; ignores all but status lines."""
        m = STATUS_LINE.search(text)
        if not m:
            return
        elapsed, up, failed, dropped, ticks, lost = (float(m.group(1)),) + tuple(int(g) for g in m.groups()[1:6])
        p50, p99 = float(m.group(7)), float(m.group(8))
        router = self.router_figures(ticks, up)
        with self.lock:
            self.updated = time.monotonic()
            self.data.update({"phase": "up" if all_up else "opening", "elapsed_s": elapsed, "sessions_up": up,
                              "failed": failed, "dropped": dropped, "ticks_per_s": ticks, "lost": lost,
                              "p50_ms": p50 if ticks else None, "p99_ms": p99 if ticks else None,
                              "router": router})

    def finished(self):
        with self.lock:
            self.data["phase"] = "finished"

    def snapshot(self):
        with self.lock:
            d = json.loads(json.dumps(self.data))  # a deep copy
            d["age_s"] = None if self.updated is None else round(time.monotonic() - self.updated, 2)
        return d


def run_subscriber(cmd, router_pid, on_line=None, status=None):
    """Runs clock-subscriber, echoing its output; snapshots the router when all sessions are up.
    on_line(all_up), if given, is called after each status line (about once a second); status,
    a DemoStatus, if given, takes each line.
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
            if status:
                status.update(text, steady is not None)
            if on_line:
                on_line(steady is not None)
        rc = sub.wait()
        if status:
            status.finished()
        return rc, steady, ticks
    finally:
        stop(sub)


class WebDemo:
    """--web: the page's static server (demo/web/serve.py) and, with --screenshot, the headless
    Chromium that opens the page (demo/web/screenshot.js, a Node process we start and stop by PID;
    it starts and kills Chromium itself)."""

    MIN_TICKS = 3
    TIMEOUT = 30  # screenshot.js: bound of each of its waits (page subscribed, ticks)
    # The shot is asked for this many seconds before the subscriber's run ends: screenshot.js
    # then waits for the page's next rendering (1.1 s) and shoots, and the page's panel of the
    # C++ sessions (polled each second) must still show them live, not finished.
    SHOT_MARGIN = 5.0

    def __init__(self, http_port, ws_port, topic_manager, screenshot, duration, status):
        sys.path.insert(0, WEB_DIR)
        import serve  # demo/web/serve.py
        try:
            self.server = serve.WebServer(http_port, status=status)
        except OSError as e:
            sys.exit("--web: cannot serve the page on 127.0.0.1:%d: %s" % (http_port, e.strerror))
        self.url = self.server.url("ws -h 127.0.0.1 -p %d" % ws_port, topic_manager)
        self.screenshot = os.path.abspath(screenshot) if screenshot else None
        self.duration = duration
        self.driver = None
        self.lines = queue.Queue()
        self.stderr = []
        self.shoot_at = None
        self.shot_requested = False
        self.started = None
        self.chromium_pid = None  # screenshot.js's browser, leader of its own process group

    def on_line(self, all_up):
        """Starts the browser once every C++ session is up; asks for the screenshot shortly
        before the subscriber's run ends, while its sessions are still up."""
        if not self.screenshot or not all_up:
            return
        now = time.monotonic()
        if self.driver is None:
            self.start_driver()
            self.shoot_at = now + max(0.0, self.duration - self.SHOT_MARGIN)
        elif not self.shot_requested and now >= self.shoot_at:
            self.request_shot()

    def start_driver(self):
        self.started = time.monotonic()
        cmd = ["node", os.path.join(WEB_DIR, "screenshot.js"), self.url, "--out", self.screenshot,
               "--min-ticks", str(self.MIN_TICKS), "--timeout", str(self.TIMEOUT), "--wait-stdin"]
        self.driver = subprocess.Popen(cmd, cwd=WEB_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
        stamped = lambda line: self.lines.put((time.monotonic(), line))  # when each line came
        for stream, sink in ((self.driver.stdout, stamped), (self.driver.stderr, self.stderr.append)):
            threading.Thread(target=lambda st=stream, f=sink: [f(l) for l in st], daemon=True).start()

    def request_shot(self):
        self.shot_requested = True
        try:
            self.driver.stdin.write("shot\n")
            self.driver.stdin.close()
        except OSError:
            pass  # the driver is gone: finish() reports it

    def finish(self):
        """The page's figures (screenshot.js's last JSON line), or None without --screenshot."""
        if self.driver is None:
            return None if not self.screenshot else {"ok": False, "error": "the C++ sessions never came up"}
        if not self.shot_requested:
            self.request_shot()
        result, subscribed_at = None, None
        end = time.monotonic() + 2 * self.TIMEOUT + 10
        while time.monotonic() < end:
            try:
                at, line = self.lines.get(timeout=max(0.1, end - time.monotonic()))
            except queue.Empty:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("event") == "chromium":
                self.chromium_pid = msg.get("pid")
            elif msg.get("event") == "subscribed" and subscribed_at is None:
                subscribed_at = at - self.started
            elif "ok" in msg:
                result = msg
                break
        self.stop_driver()
        if result is None:
            result = {"ok": False, "error": "no result from screenshot.js (%s)" % "".join(self.stderr[-5:]).strip()}
        result["subscribed_after_s"] = subscribed_at
        return result

    def stop_driver(self):
        """screenshot.js stops its Chromium on SIGTERM; should it have been killed first, its
        Chromium's process group (which exists only while one of its processes lives) too."""
        stop(self.driver)
        while self.chromium_pid is None and not self.lines.empty():
            _, msg = self.lines.get()
            if '"chromium"' in msg:
                self.chromium_pid = json.loads(msg).get("pid")
        if self.chromium_pid:
            try:
                os.killpg(self.chromium_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # gone, as it should be
            self.chromium_pid = None

    def stop(self):
        self.stop_driver()
        self.server.stop()


def web_summary(r):
    """The summary line for the page's figures, and whether the page did its job."""
    ms = lambda v: "-" if v is None else "%.2f ms" % v
    ok = bool(r.get("ok")) and r.get("ticks", 0) >= WebDemo.MIN_TICKS and r.get("lost", 1) == 0
    if not r.get("state"):
        return "web page: FAILED: %s" % r.get("error"), False
    subscribed = r.get("subscribed_after_s")
    line = ("web page (Chromium %s, Ice for JavaScript %s over ws, one more session): %s%s; ticks received %d, "
            "lost %d, %s events/s, latency p50 %s, p99 %s, max %s; screenshot %s"
            % (r.get("chromium", "?"), r.get("iceVersion", "?"), r["state"],
               "" if subscribed is None else " %.1f s after the browser started" % subscribed,
               r.get("ticks", 0), r.get("lost", 0),
               "-" if r.get("eventsPerSecond") is None else "%.2f" % r["eventsPerSecond"],
               ms(r.get("p50")), ms(r.get("p99")), ms(r.get("max")), r.get("screenshot")))
    beside = r.get("beside")
    if beside:  # what the page's panel of the C++ sessions (GET /demo-status) showed in the screenshot
        line += ("; beside it, the page showed the C++ sessions %s: %s up, %s ticks/s, lost %s, p50 %s, p99 %s"
                 % ("live" if beside.get("phase") == "up" else beside.get("phase"), beside.get("sessions_up"),
                    beside.get("ticks_per_s"), beside.get("lost"), ms(beside.get("p50_ms")), ms(beside.get("p99_ms"))))
    else:
        line += "; the page showed no C++ sessions panel"
    if not ok:
        line += "  FAILED (%s)" % (r.get("error") or "fewer than %d ticks or lost ticks" % WebDemo.MIN_TICKS)
    return line, ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=8000)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--config", default=os.path.join(ROOT, "conf", "moraine.yaml"))
    ap.add_argument("--isolated", action="store_true", help="use free ports instead of the config's")
    ap.add_argument("--web", action="store_true",
                    help="also serve the clock demo web page (a ws endpoint on the router) and print its URL")
    ap.add_argument("--screenshot", metavar="PATH",
                    help="(implies --web) a headless Chromium opens the page; save a PNG of it to PATH")
    a = ap.parse_args()
    a.web = a.web or bool(a.screenshot)
    raise_fd_limit(a.sessions + 256)  # inherited by the router and the subscriber
    if a.web:
        setup = subprocess.run(["bash", os.path.join(WEB_DIR, "setup")])
        if setup.returncode != 0:
            sys.exit("--web: demo/web/setup failed (exit %d)" % setup.returncode)

    tmpdir = tempfile.mkdtemp(prefix="moraine-demo-")
    web_ports = None
    if a.web:
        web_ports = {"ws": free_port(), "http": 0} if a.isolated else dict(WEB_PORTS)
    if a.isolated or a.web:
        config, ports = demo_config(a.config, tmpdir, a.isolated, web_ports)
    else:
        config, ports = a.config, DEMO_PORTS
    tm_endpoint = "tcp -h 127.0.0.1 -p %d" % ports["topic_manager"]
    router = publisher = web = None
    try:
        router = subprocess.Popen([os.path.join(a.bin, "moraine-router"), "--config", config])
        # (Not the ws port: a probe that connects and sends no upgrade request makes the router
        # log a refused WebSocket. The router binds all its client endpoints before the topic
        # service's, waited for here.)
        for role in ("client", "topic_manager", "publish"):
            wait_port(ports[role], router)
        time.sleep(0.2)
        if router.poll() is not None:  # the ports answered, but not ours: someone else listens there
            sys.exit("moraine-router exited (rc %s): its ports are taken by another process" % router.returncode)
        rss_idle = rss_kib(router.pid)
        publisher = subprocess.Popen([os.path.join(a.bin, "clock-publisher"), "--rate", "1",
                                      "--topic-manager", tm_endpoint])
        time.sleep(0.5)
        status = None
        if a.web:
            status = DemoStatus(a.sessions, router.pid, rss_idle)  # the page's GET /demo-status
            web = WebDemo(ports["http"], ports["ws"], "IceStorm/TopicManager:" + tm_endpoint, a.screenshot, a.duration,
                          status)
            print("web: the clock demo page is at %s" % web.url)
            print("web: %s" % ("a headless Chromium opens it once the sessions are up" if a.screenshot
                               else "open it in a browser on this machine while the demo runs"), flush=True)
        cmd = [os.path.join(a.bin, "clock-subscriber"), "--sessions", str(a.sessions), "--duration", str(a.duration),
               "--router", "tcp -h 127.0.0.1 -p %d" % ports["client"], "--topic-manager", tm_endpoint]
        rc, steady, ticks = run_subscriber(cmd, router.pid, web.on_line if web else None, status)
        end = {"t": time.monotonic(), "cpu": cpu_seconds(router.pid)}
        if steady:
            wall = end["t"] - steady["t"]
            cpu = end["cpu"] - steady["cpu"]
            per_session = (steady["rss"] - rss_idle) * 1024.0 / max(1, a.sessions)
            print("router: steady state %.0f s: CPU %.1f%% of one core, %.1f us CPU per delivered event "
                  "(%d events); RSS %.1f MiB idle, %.1f MiB with %d sessions = %.0f bytes per session"
                  % (wall, 100.0 * cpu / wall, 1e6 * cpu / max(1, ticks), ticks, rss_idle / 1024.0,
                     steady["rss"] / 1024.0, a.sessions, per_session))
        url = metrics_url(config)
        if url:
            print(metrics_line(url), flush=True)
        page = web.finish() if web else None
        if page is not None:
            line, ok = web_summary(page)
            print(line, flush=True)
            if not ok:
                rc = rc or 1
        return rc
    finally:
        if web:
            web.stop()
        stop(publisher)
        stop(router)
        for name in os.listdir(tmpdir):
            os.unlink(os.path.join(tmpdir, name))
        os.rmdir(tmpdir)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
