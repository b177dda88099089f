#!/usr/bin/python3
"""Runs ZeroC's own Ice 3.7.8 Glacier2 test suite (the C++ tests) against a router: the real
glacier2router (the control) or moraine-router, and prints a table of test, case, result and
reason. See tests/upstream/README.md.

    /usr/bin/python3 tests/upstream/run.py --router glacier2
    /usr/bin/python3 tests/upstream/run.py --router moraine --moraine-bin build/bin/moraine-router
    /usr/bin/python3 tests/upstream/run.py --router both --moraine-bin build/bin/moraine-router --only router,ssl

Steps (each cached under --cache-dir, build/upstream by default, so a second run downloads and
compiles nothing):
  1. source: the Debian source package zeroc-ice (3.7.8) fetched with `apt-get source
     --download-only` through a private apt directory (its own sources.list with one deb-src line,
     lists and cache; the system's apt configuration is not touched), unpacked with dpkg-source;
  2. build: tests/upstream/Makefile compiles the test programs against the installed
     libzeroc-ice-dev (make -j2, ccache when present);
  3. certificates: ZeroC's test certificates (certs/) expired in October 2024, so a fresh CA,
     server and client certificate with the same subjects, the same file names (cacert.pem,
     server.p12, client.p12) and the same password are made with openssl;
  4. run: each upstream test definition (cpp/test/Glacier2/<t>/test.py, or
     scripts/tests/Glacier2/<t>.py) is executed against harness.py's stand-in for ZeroC's driver,
     and each test case is run: servers (the router first), then the clients, then every server
     must exit by itself with status 0 (the clients shut the router down through its Ice admin
     object `Glacier2/admin -f Process`), as upstream's driver requires. Every wait is bounded;
     every process is ended by its own PID.

Exit status: 0 when every case run against every selected router passed, 1 otherwise, 2 when
the set-up (download, build, certificates) failed.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(ROOT, "tests", "interop"))

import harness as H  # noqa: E402  (tests/upstream/harness.py, first on the path)
import ports  # noqa: E402  (tests/interop/ports.py: the /proc/net/tcp reader)

PACKAGE = "zeroc-ice"
VERSION_PREFIX = "3.7.8"

# Upstream Glacier2 tests, in upstream's order; where each one's definition lives.
GLACIER2_TESTS = ["router", "attack", "sessionControl", "staticFiltering", "dynamicFiltering", "ssl",
                  "override", "sessionHelper", "application"]
# Upstream IceStorm tests run here (upstream also has rep1, repgrid, repstress: see EXCLUDED).
ICESTORM_TESTS = ["single", "federation", "federation2", "persistent", "stress"]
# Cases moraine-router must refuse to start, with this text in its error: IceStorm replication
# (IceStorm.Node.Endpoints, IceStorm.Nodes.*) is not a Moraine feature, and a configured key that
# cannot be honoured stops start-up. Counted as "refused", not as a failure; starting is one.
REFUSED_BY_DESIGN = ("replicated", "IceStorm replication is not supported by Moraine")
# IceStorm/stress against moraine-router: Moraine.Topics.SubscriberQueueBytes (extra_props).
STRESS_SUBSCRIBER_QUEUE = 8 << 20
# Not run, with the reason (README.md repeats it).
EXCLUDED = {
    "Glacier2/hashpassword": "tests ZeroC's icehashpassword.py script with passlib; no router involved",
    "IceStorm/rep1": "IceStorm replication (3 replicas electing a master), not a Moraine feature",
    "IceStorm/repstress": "IceStorm replication under stress, not a Moraine feature",
    "IceStorm/repgrid": "IceStorm replicas deployed by IceGrid, not a Moraine feature",
}


def log(msg):
    print(msg, flush=True)


def run_bounded(argv, timeout, cwd=None, env=None, what=None):
    """Runs argv to completion (timeout seconds at most); returns its output; RuntimeError otherwise."""
    try:
        out = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError("%s: no result within %d s" % (what or argv[0], timeout))
    text = out.stdout.decode("utf-8", errors="replace")
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (what or " ".join(argv), out.returncode, text[-3000:]))
    return text


# ----------------------------------------------------------------------------------------------
# 1. The source package
# ----------------------------------------------------------------------------------------------

def deb_src_line():
    """A deb-src line for the archive this machine's apt already uses for its release's main
    component (read from /etc/apt/sources.list and sources.list.d/*.sources|*.list)."""
    codename = "bookworm"
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("VERSION_CODENAME="):
                    codename = line.split("=", 1)[1].strip().strip('"') or codename
    except OSError:
        pass
    candidates = []  # (uri, signed_by)
    d = "/etc/apt/sources.list.d"
    files = ["/etc/apt/sources.list"] + ([os.path.join(d, f) for f in sorted(os.listdir(d))] if os.path.isdir(d) else [])
    for path in files:
        try:
            text = open(path).read()
        except OSError:
            continue
        if path.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields = {}
                for line in stanza.splitlines():
                    if line.startswith("#") or ":" not in line:
                        continue
                    k, v = line.split(":", 1)
                    fields[k.strip().lower()] = v.strip()
                if fields.get("enabled", "yes").lower() == "no":
                    continue
                if codename in fields.get("suites", "").split() and "main" in fields.get("components", "").split():
                    for uri in fields.get("uris", "").split():
                        candidates.append((uri, fields.get("signed-by")))
        elif path.endswith(".list"):
            for line in text.splitlines():
                m = re.match(r"\s*deb(?:-src)?\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s+(.*)", line)
                if m and m.group(3) == codename and "main" in m.group(4).split():
                    opts = dict(o.split("=", 1) for o in (m.group(1) or "").split() if "=" in o)
                    candidates.append((m.group(2), opts.get("signed-by")))
    if not candidates:
        raise RuntimeError("no apt source for %s main found in /etc/apt: cannot locate the %s source package"
                           % (codename, PACKAGE))
    uri, signed_by = candidates[0]
    opt = " [signed-by=%s]" % signed_by if signed_by and signed_by.startswith("/") else ""
    return "deb-src%s %s %s main\n" % (opt, uri, codename)


def fetch_source(cache):
    """Unpacked zeroc-ice source tree in cache/ice-src (downloaded once)."""
    src = os.path.join(cache, "ice-src")
    marker = os.path.join(src, ".moraine-unpacked")
    if os.path.exists(marker):
        return src
    apt = os.path.join(cache, "apt")
    dl = os.path.join(apt, "src")
    for d in ["lists/partial", "cache/archives/partial", "parts", "src"]:
        os.makedirs(os.path.join(apt, d), exist_ok=True)
    with open(os.path.join(apt, "sources.list"), "w") as f:
        f.write(deb_src_line())
    opts = ["-o", "Dir::Etc::SourceList=" + os.path.join(apt, "sources.list"),
            "-o", "Dir::Etc::SourceParts=" + os.path.join(apt, "parts"),
            "-o", "Dir::State::Lists=" + os.path.join(apt, "lists"),
            "-o", "Dir::Cache=" + os.path.join(apt, "cache"),
            "-o", "APT::Sandbox::User=root"]
    dscs = [f for f in os.listdir(dl) if f.startswith(PACKAGE + "_" + VERSION_PREFIX) and f.endswith(".dsc")]
    if not dscs:
        log("source: apt-get update (private source list) and apt-get source --download-only %s" % PACKAGE)
        run_bounded(["apt-get", "-q"] + opts + ["update"], 300, what="apt-get update")
        run_bounded(["apt-get", "-q"] + opts + ["source", "--download-only", PACKAGE], 600, cwd=dl,
                    what="apt-get source")
        dscs = [f for f in os.listdir(dl) if f.startswith(PACKAGE + "_" + VERSION_PREFIX) and f.endswith(".dsc")]
        if not dscs:
            raise RuntimeError("apt-get source brought no %s %s .dsc (found: %s)"
                               % (PACKAGE, VERSION_PREFIX, ", ".join(os.listdir(dl))))
    tmp = src + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(src, ignore_errors=True)
    log("source: dpkg-source -x %s" % dscs[0])
    run_bounded(["dpkg-source", "--no-check", "-x", os.path.join(dl, sorted(dscs)[-1]), tmp], 300,
                what="dpkg-source -x")
    os.rename(tmp, src)
    with open(marker, "w") as f:
        f.write(sorted(dscs)[-1] + "\n")
    return src


# ----------------------------------------------------------------------------------------------
# 2. The test programs
# ----------------------------------------------------------------------------------------------

def build(src, out, tests, jobs):
    log("build: make -j%d (%s)" % (jobs, " ".join(tests)))
    t0 = time.monotonic()
    try:
        run_bounded(["make", "-s", "-f", os.path.join(HERE, "Makefile"), "-j%d" % jobs, "SRC=" + src, "OUT=" + out,
                     "TESTS=" + " ".join(tests)], 1800, what="make")
    except RuntimeError as e:
        raise RuntimeError("building the upstream tests failed: %s" % e)
    log("build: done in %.0f s" % (time.monotonic() - t0))


# ----------------------------------------------------------------------------------------------
# 3. Certificates (upstream's expired in 2024): same subjects, file names and password
# ----------------------------------------------------------------------------------------------

DN_TAIL = "/OU=Ice/O=ZeroC, Inc./L=Jupiter/ST=Florida/C=US/emailAddress=info@zeroc.com"


def make_certs(cache):
    d = os.path.join(cache, "certs")
    ca = os.path.join(d, "cacert.pem")
    if os.path.exists(os.path.join(d, "client.p12")):
        try:
            run_bounded(["openssl", "x509", "-checkend", "86400", "-noout", "-in", ca], 30)
            return d
        except RuntimeError:
            pass
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    log("certificates: a fresh 'Ice Tests CA', server (CN=127.0.0.1) and client (CN=client) with openssl")

    def ossl(*args):
        return run_bounded(["openssl"] + list(args), 60, cwd=d, what="openssl " + args[0])

    with open(os.path.join(d, "ca.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
                "subjectKeyIdentifier=hash\n")
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,nonRepudiation,keyEncipherment\n"
                "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
    with open(os.path.join(d, "client.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,nonRepudiation,keyEncipherment\n"
                "extendedKeyUsage=clientAuth\n")
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "cakey.pem", "-out", "cacert.pem",
         "-days", "30", "-subj", "/CN=Ice Tests CA" + DN_TAIL, "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, cn in [("server", "127.0.0.1"), ("client", "client")]:
        ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + "_key.pem", "-out", name + ".csr",
             "-subj", "/CN=" + cn + DN_TAIL)
        ossl("x509", "-req", "-in", name + ".csr", "-CA", "cacert.pem", "-CAkey", "cakey.pem", "-CAcreateserial",
             "-days", "30", "-extfile", name + ".ext", "-out", name + ".pem")
        ossl("pkcs12", "-export", "-in", name + ".pem", "-inkey", name + "_key.pem", "-certfile", "cacert.pem",
             "-name", name, "-passout", "pass:password", "-out", name + ".p12")
    ossl("x509", "-in", "cacert.pem", "-outform", "DER", "-out", "cacert.der")
    return d


# ----------------------------------------------------------------------------------------------
# 4. Running the test cases
# ----------------------------------------------------------------------------------------------

PORTS = range(H.BASE_PORT, H.BASE_PORT + 60)


def port_open(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


def busy_ports():
    """Test ports someone listens on (checked through /proc/net/tcp, without connecting)."""
    return {port for _, port, _ in ports.listening_sockets() if port in PORTS}


class Runner(H.Runner):

    def __init__(self, args, src, build_dir, certs_dir, router, router_exe, run_dir):
        self.args = args
        self.src = src
        self.build_dir = build_dir
        self.certs_dir = certs_dir
        self.router = router
        self.router_exe = router_exe
        self.run_dir = run_dir
        self.client_timeout = args.client_timeout
        self.idle_timeout = args.idle_timeout
        self.start_timeout = args.start_timeout
        self.stop_timeout = args.stop_timeout
        self.ready_grace = args.ready_grace
        self.case_dir = run_dir
        self.running = []
        self.case_procs = []
        self.notes = []
        self.names = {}
        self.transcript = None

    # --- used by harness.py -------------------------------------------------------------------
    @staticmethod
    def is_icestorm(process):
        """upstream IceStormUtil.IceStorm: icebox running the IceStorm service."""
        return type(process).__name__ == "IceStorm" and hasattr(process, "instanceName")

    def exe_for(self, process, current):
        if isinstance(process, H.Glacier2Router):
            return self.router_exe
        if self.is_icestorm(process) and self.router == "moraine":
            # moraine-router in place of icebox + IceStorm, given icebox's command line unchanged
            # (IceStorm.* keys enable its embedded topic service; IceBox.* keys are not its own).
            return self.router_exe
        exe = process.getExe(current)
        if process.isFromBinDir():
            found = shutil.which(exe)
            if not found:
                raise H.TestFailed("%s not found in PATH" % exe)
            return found
        name = exe or current.testcase.getProcessType(process)
        return os.path.join(self.build_dir, current.testsuite.getId(), name)

    def extra_props(self, process, current):
        """moraine-router refuses to start without Glacier2.Client.Endpoints, which icebox's
        command line has not: in place of icebox it gets one more key, a client endpoint on a
        port no test uses (12080 + the IceStorm's port number + its replica), and the case a note.
        For IceStorm/stress also a per-subscriber bound of 8 MiB (STRESS_SUBSCRIBER_QUEUE): the test
        sends 20,000 events at once to single-threaded subscribers and counts every one; IceStorm
        queues without bound, Moraine's default bound (1 MiB) drops what a subscriber starved of CPU
        has not taken (seen on a loaded 2-core machine), so the case would test the load."""
        if self.router == "moraine" and self.is_icestorm(process) and not self.args.icestorm_verbatim:
            port = H.BASE_PORT + 70 + process.portnum + process.replica
            self.note("moraine-router given --Glacier2.Client.Endpoints=tcp -p %d in place of icebox" % port)
            props = {"Glacier2.Client.Endpoints": "tcp -p %d" % port}
            if current.testsuite.getId() == "IceStorm/stress":
                self.note("moraine-router given --Moraine.Topics.SubscriberQueueBytes=%d" % STRESS_SUBSCRIBER_QUEUE)
                props["Moraine.Topics.SubscriberQueueBytes"] = str(STRESS_SUBSCRIBER_QUEUE)
            return props
        return {}

    def process_name(self, process, current):
        if isinstance(process, H.Glacier2Router):
            base = "router"
        elif self.is_icestorm(process):
            base = "icestorm-%s-%s" % (process.instanceName, process.replica)
        else:
            base = os.path.basename(process.getExe(current) or current.testcase.getProcessType(process))
        n = self.names.get(base, 0) + 1
        self.names[base] = n
        return base if n == 1 else "%s-%d" % (base, n)

    def env_for(self, process):
        return dict(os.environ)

    def track(self, rp):
        self.running.append(rp)
        self.case_procs.append(rp)
        if self.transcript:
            self.transcript.write("started %s (pid %d): %s\n" % (rp.desc, rp.pid, " ".join(rp.argv)))

    def untrack(self, rp):
        if rp in self.running:
            self.running.remove(rp)

    def ready_alternative(self, process, current):
        if isinstance(process, H.Glacier2Router):
            key = "Glacier2.Client.Endpoints"
        elif self.is_icestorm(process):
            key = "IceStorm.TopicManager.Endpoints"
        else:
            return None, None
        eps = str(process.getEffectiveProps(current, {}).get(key, ""))
        m = re.search(r"-p\s+(\d+)", eps)
        if not m:
            return None, None
        port = int(m.group(1))
        return (lambda: port_open(port)), self.ready_grace

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def log_line(self, text, newline=True):
        if self.transcript:
            self.transcript.write(text + ("\n" if newline else ""))
            self.transcript.flush()
        if self.args.verbose:
            sys.stdout.write(text + ("\n" if newline else ""))
            sys.stdout.flush()

    def kill_all(self):
        for rp in list(self.running):
            rp.kill()
            self.untrack(rp)

    # --- one test case ------------------------------------------------------------------------
    def run_case(self, suite, tc, current):
        self.notes = []
        self.names = {}
        self.case_procs = []
        self.case_dir = os.path.join(self.run_dir, suite.getId(), re.sub(r"[^A-Za-z0-9._-]+", "_", tc.name))
        shutil.rmtree(self.case_dir, ignore_errors=True)
        os.makedirs(self.case_dir, exist_ok=True)
        self.transcript = open(os.path.join(self.case_dir, "transcript.txt"), "w")
        t0 = time.monotonic()
        status, reason = "pass", ""
        deadline = time.monotonic() + 15
        while busy_ports() and time.monotonic() < deadline:
            time.sleep(0.5)
        if busy_ports():
            return "fail", "test ports busy before the start: %s" % sorted(busy_ports()), 0.0
        current.testcase = None
        try:
            tc.run(current)
        except H.TestFailed as e:
            status, reason = "fail", str(e)
        except Exception as e:  # a broken test definition or harness error: still a result
            status, reason = "fail", "%s: %s" % (type(e).__name__, e)
        finally:
            self.kill_all()
            current.testcase = None
            current.processes.clear()
        if status == "fail":
            # Another process that died on its own (an upstream server's test() aborts it) often
            # says more than the client that then failed: add what it said.
            for rp in self.case_procs:
                code = rp.p.returncode
                if rp.desc not in reason and code not in (0, None) and not rp.killed:
                    reason += "; also %s exited with status %s: %s" % (rp.desc, code, H.summarize(rp.output()))
        elapsed = time.monotonic() - t0
        self.transcript.write("\nresult: %s %s\n" % (status, reason))
        self.transcript.close()
        self.transcript = None
        return status, reason, elapsed


def selected(only, suite, t):
    return not only or any(o.split(":")[0] in (t, suite + "/" + t) for o in only)


def load_suites(src, only, which):
    """The upstream definitions: cpp/test/<Suite>/<t>/test.py, else scripts/tests/<Suite>/<t>.py
    (where upstream keeps the Glacier2 router, sessionHelper and application definitions)."""
    suites = []
    todo = []
    if "glacier2" in which:
        todo += [("Glacier2", t) for t in GLACIER2_TESTS]
    if "icestorm" in which:
        todo += [("IceStorm", t) for t in ICESTORM_TESTS]
    icestorm_names = None
    for suite, t in todo:
        if not selected(only, suite, t):
            continue
        root = os.path.join(src, "cpp", "test", suite, t)
        own = os.path.join(root, "test.py")
        common = os.path.join(src, "scripts", "tests", suite, t + ".py")
        path = own if os.path.exists(own) else common
        if not os.path.exists(path):
            continue
        extra = {"toplevel": src}
        if suite == "IceStorm":
            if icestorm_names is None:
                icestorm_names = H.load_icestorm_util(src)
            extra.update(icestorm_names)
        suites += H.Loader.load(path, run_name=root, extra_globals=extra)
    return suites


def case_selected(only, suite_id, case_name):
    if not only:
        return True
    short = suite_id.split("/")[-1]
    for o in only:
        name, _, case = o.partition(":")
        if name in (short, suite_id) and (not case or case.lower() in case_name.lower()):
            return True
    return False


def refused_by_design(router, case, status, reason):
    """'refused' for a replicated case that moraine-router refused to start as it must; else `status`."""
    marker, text = REFUSED_BY_DESIGN
    if router == "moraine" and marker in case and status == "fail" and text in reason:
        return "refused"
    return status


def counts(results):
    """(passed, refused by design, failed) of one router's results."""
    passed = sum(1 for r in results if r[2] == "pass")
    refused = sum(1 for r in results if r[2] == "refused")
    return passed, refused, len(results) - passed - refused


def run_router(args, src, build_dir, certs, router):
    if router == "glacier2":
        exe = shutil.which(args.glacier2_bin) or args.glacier2_bin
    else:
        exe = os.path.abspath(args.moraine_bin)
    if not os.path.exists(exe):
        log("%s: %s not found; skipped" % (router, exe))
        return None
    run_dir = os.path.join(args.cache_dir, "run", router)
    shutil.rmtree(run_dir, ignore_errors=True)
    runner = Runner(args, src, build_dir, certs, router, exe, run_dir)
    H.Loader.suites = []
    suites = load_suites(src, args.only, args.suites)
    results = []
    log("\n== %s (%s)" % (router, exe))
    for suite in suites:
        current = H.Current(runner, suite)
        try:
            suite.setup(current)
        except Exception as e:
            results.append((suite.getId(), "(suite set-up)", "fail", "%s: %s" % (type(e).__name__, e), 0.0, []))
            continue
        for tc in suite.order:
            if not case_selected(args.only, suite.getId(), tc.name):
                continue
            status, reason, elapsed = runner.run_case(suite, tc, current)
            status = refused_by_design(router, tc.name, status, reason)
            results.append((suite.getId(), tc.name, status, reason, elapsed, list(runner.notes)))
            log("%-26s %-52s %-4s %5.1fs %s" % (suite.getId(), tc.name[:52], status, elapsed,
                                                 reason[:200] if status != "pass" else ""))
        try:
            suite.teardown(current, True)
        except Exception:
            pass
    return results


LABELS = {"glacier2": "control: glacier2router (Glacier2 tests), icebox + IceStorm service (IceStorm tests)",
          "moraine": "moraine-router (in place of glacier2router, and of icebox + IceStorm with icebox's properties)"}


def print_table(router, results):
    log("\n### %s\n" % LABELS.get(router, router))
    log("| test | case | result | reason |")
    log("|---|---|---|---|")
    for sid, case, status, reason, elapsed, notes in results:
        text = reason if status != "pass" else ""
        if notes:
            text = (text + " " if text else "") + "(note: " + "; ".join(notes) + ")"
        log("| %s | %s | %s | %s |" % (sid, case, status, text.replace("|", "\\|").replace("\n", " ")))
    passed, refused, failed = counts(results)
    log("\n%s: %d passed, %d failed%s" % (router, passed, failed,
                                          ", %d refused by design (IceStorm replication)" % refused if refused else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine", "both"], default="glacier2")
    ap.add_argument("--moraine-bin", default=os.path.join(ROOT, "build", "bin", "moraine-router"))
    ap.add_argument("--glacier2-bin", default="glacier2router")
    ap.add_argument("--suites", default="glacier2,icestorm",
                    help="comma-separated: glacier2 (the router), icestorm (the topic service); default both")
    ap.add_argument("--only", default="", help="comma-separated tests (router, Glacier2/ssl, ...), each "
                    "optionally :CASE (a substring of the case name)")
    ap.add_argument("--cache-dir", default=os.path.join(ROOT, "build", "upstream"),
                    help="download, build and run directory (default build/upstream)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--client-timeout", type=int, default=240, help="seconds a client may run (default 240)")
    ap.add_argument("--idle-timeout", type=int, default=60,
                    help="seconds a client may run without output (upstream's watchdog: 60)")
    ap.add_argument("--start-timeout", type=int, default=60, help="seconds a server has to become ready")
    ap.add_argument("--stop-timeout", type=int, default=30,
                    help="seconds a server has to exit by itself after the clients (upstream: 30)")
    ap.add_argument("--ready-grace", type=float, default=5.0,
                    help="seconds after which a router without 'ready' lines is accepted when its port listens")
    ap.add_argument("--icestorm-verbatim", action="store_true",
                    help="with --router moraine: start moraine-router with icebox's command line only (it then "
                    "refuses to start: no Glacier2.Client.Endpoints)")
    ap.add_argument("--json", help="also write the results here (JSON)")
    ap.add_argument("--setup-only", action="store_true", help="download, build and make certificates only")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each test's progress lines")
    args = ap.parse_args()
    args.only = [o.strip() for o in args.only.split(",") if o.strip()]
    args.suites = [o.strip().lower() for o in args.suites.split(",") if o.strip()]
    args.cache_dir = os.path.abspath(args.cache_dir)
    os.makedirs(args.cache_dir, exist_ok=True)

    def on_signal(signum, frame):
        for pid in list(H.Runner.started_pids):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        sys.exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    t0 = time.monotonic()
    try:
        src = fetch_source(args.cache_dir)
        build_dir = os.path.join(args.cache_dir, "cpp")
        tests = []
        if "glacier2" in args.suites:
            tests += ["Glacier2/" + t for t in GLACIER2_TESTS if selected(args.only, "Glacier2", t)]
        if "icestorm" in args.suites:
            tests += ["IceStorm/" + t for t in ICESTORM_TESTS if selected(args.only, "IceStorm", t)]
        build(src, build_dir, tests, args.jobs)
        certs = make_certs(args.cache_dir)
    except RuntimeError as e:
        log("set-up failed: %s" % e)
        return 2
    log("set-up: %.0f s" % (time.monotonic() - t0))
    if args.setup_only:
        return 0

    routers = ["glacier2", "moraine"] if args.router == "both" else [args.router]
    all_results = {}
    try:
        for router in routers:
            res = run_router(args, src, build_dir, certs, router)
            if res is not None:
                all_results[router] = res
    finally:
        for pid in list(H.Runner.started_pids):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    for router, res in all_results.items():
        print_table(router, res)
    for t, why in EXCLUDED.items():
        log("excluded: %s (%s)" % (t, why))
    log("logs: %s" % os.path.relpath(os.path.join(args.cache_dir, "run"), os.getcwd()))
    log("total: %.0f s" % (time.monotonic() - t0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({r: [dict(test=a, case=b, result=c, reason=d, seconds=round(e, 1), notes=n)
                           for a, b, c, d, e, n in res] for r, res in all_results.items()}, f, indent=1)
    totals = [counts(res) for res in all_results.values()]
    passed, refused, failed = (sum(t[i] for t in totals) for i in range(3))
    print("%d passed, %d failed, %d refused by design" % (passed, failed, refused))
    return 0 if all_results and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
