"""A small stand-in for the parts of ZeroC's Ice 3.7 test driver (scripts/Util.py,
scripts/Glacier2Util.py, scripts/IceStormUtil.py) that the Glacier2 and IceStorm test
definitions use, written for this project.

ZeroC's own test definitions (cpp/test/<Suite>/<test>/test.py and scripts/tests/<Suite>/<test>.py
in the unpacked source package) are executed unchanged against this module's names, so the
router's properties, the processes and their command lines come from upstream at run time and
nothing of ZeroC's is kept in this repository. The property layering follows the upstream
driver's getEffectiveProps: driver (Ice.Default.Host) < configuration (Ice.Warn.Connections,
Ice.Default.Protocol, Ice.IPv6) < C++ mapping (Ice.NullHandleAbort, Ice.PrintStackTraces) <
test case < process class (Server thread pool and Ice.PrintAdapterReady; the router's endpoints
and passwords) < the process's own props; each becomes `--Key=Value` on the command line and the
whole line is split as upstream's Expect.splitCommand does (shell-like quoting).

Differences from upstream, on purpose:
  * every wait has a bound (a server's start, a client's run, a server's exit at the end); a
    process still running at its bound is killed by its own PID and the case fails, saying which
    process and which wait;
  * the router under test is glacier2router or moraine-router (Runner.router_exe); when it has
    not printed its 2 "<adapter> ready" lines (Ice.PrintAdapterReady) within `ready_grace`
    seconds, the runner accepts a listening Glacier2.Client.Endpoints port instead and records a
    note (upstream would wait 300 s and fail);
  * passwords for Glacier2.CryptPasswords are hashed with `openssl passwd -6` (SHA-512 crypt,
    the scheme upstream's icehashpassword.py uses on Linux), not with passlib.
"""

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time

BASE_PORT = 12010
READY_RE = re.compile(r"[^\n]+ ready\n")


class TestFailed(Exception):
    """A test case failed: `step` says which wait or check, `detail` the evidence."""

    def __init__(self, step, detail=""):
        Exception.__init__(self, step + (": " + detail if detail else ""))
        self.step = step
        self.detail = detail


def val(v, quoteValue=True):
    """Upstream's Util.val: how a property value is written on the command line."""
    if type(v) == bool:
        return "1" if v else "0"
    elif type(v) == str:
        if not quoteValue or v.find(" ") < 0:
            return v
        v = v.replace("\\", "\\\\").replace("\"", "\\\"")
        return "\"{0}\"".format(v)
    else:
        return str(v)


# ----------------------------------------------------------------------------------------------
# Running one OS process, its output kept and searchable
# ----------------------------------------------------------------------------------------------

class RunningProcess:
    """A started process: output (stdout+stderr) read by a thread into a buffer and a log file."""

    def __init__(self, argv, cwd, logpath, env=None, desc=""):
        self.desc = desc
        self.argv = argv
        self.logpath = logpath
        self.buf = ""
        self.cond = threading.Condition()
        self.last_output = time.monotonic()
        self.expect_pos = 0
        self.killed = False
        os.makedirs(os.path.dirname(logpath), exist_ok=True)
        self.log = open(logpath, "w", encoding="utf-8", errors="replace")
        self.log.write("$ cd %s && %s\n" % (cwd, " ".join(shlex.quote(a) for a in argv)))
        self.log.flush()
        try:
            self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            self.log.close()
            raise TestFailed("cannot start %s (%s)" % (desc, argv[0]), str(e))
        Runner.started_pids.add(self.p.pid)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            data = self.p.stdout.read1(65536) if hasattr(self.p.stdout, "read1") else self.p.stdout.read(4096)
            if not data:
                break
            text = data.decode("utf-8", errors="replace")
            with self.cond:
                self.buf += text
                self.last_output = time.monotonic()
                self.cond.notify_all()
            self.log.write(text)
            self.log.flush()
        with self.cond:
            self.cond.notify_all()

    @property
    def pid(self):
        return self.p.pid

    def poll(self):
        return self.p.poll()

    def output(self):
        with self.cond:
            return self.buf

    def wait_ready(self, count, name, timeout, alt_check=None, alt_after=None):
        """Waits for `count` "X ready" lines (or "<name> ready" when name is given). Returns
        (True, None) when seen; (True, note) when alt_check() (called after alt_after seconds)
        said ready instead; raises TestFailed on exit or timeout."""
        deadline = time.monotonic() + timeout
        start = time.monotonic()
        pattern = re.compile(re.escape(name) + r" ready\n") if name else READY_RE
        while True:
            with self.cond:
                seen = len(pattern.findall(self.buf))
                if seen >= count if not name else seen >= 1:
                    return True, None
                exited = self.p.poll()
                if exited is not None and not self.reader.is_alive():
                    raise TestFailed("%s exited (status %s) before it was ready" % (self.desc, exited),
                                     summarize(self.buf, first=True))
                self.cond.wait(0.1)
            now = time.monotonic()
            if alt_check and alt_after is not None and now - start >= alt_after and self.p.poll() is None:
                if alt_check():
                    if name:
                        return True, "%s did not print '%s ready' (IceBox.PrintServicesReady); its " \
                            "listening port was accepted instead" % (self.desc, name)
                    return True, "%s printed %d of %d '<adapter> ready' lines (Ice.PrintAdapterReady); " \
                        "its listening port was accepted instead" % (self.desc, seen, count)
            if now >= deadline:
                raise TestFailed("%s not ready within %d s" % (self.desc, timeout), summarize(self.buf, first=True))

    def expect(self, regex, timeout):
        """Waits (from the position of the last match) for regex in the output; TestFailed otherwise."""
        pattern = re.compile(regex)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = pattern.search(self.buf, self.expect_pos)
                if m:
                    self.expect_pos = m.end()
                    return m
                if time.monotonic() >= deadline:
                    raise TestFailed("%s: no '%s' within %s s" % (self.desc, regex, timeout), summarize(self.buf))
                self.cond.wait(0.1)

    def wait_exit(self, timeout, idle_timeout=None):
        """Waits for exit; returns the status, or None on timeout (total or no output for idle_timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                status = self.p.wait(0.2)
                self.reader.join(5)
                return status
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if now >= deadline:
                return None
            if idle_timeout and now - self.last_output >= idle_timeout:
                return None

    def kill(self):
        """Ends this process (SIGTERM, then SIGKILL after 3 s): only its own PID."""
        if self.p.poll() is None:
            self.killed = True
            try:
                self.p.terminate()
                self.p.wait(3)
            except subprocess.TimeoutExpired:
                self.p.kill()
                try:
                    self.p.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            except ProcessLookupError:
                pass
        self.reader.join(2)
        self.close()

    def close(self):
        Runner.started_pids.discard(self.p.pid)
        try:
            self.log.close()
        except Exception:
            pass


INTERESTING = re.compile(r"failed|exception|error|assert|refus|unknown|unsupported|not supported|"
                         r"cannot|can't|invalid|abort|warning|timeout|denied|reject", re.I)


def summarize(text, first=False, lines=4):
    """The lines of a process's output that tell why it failed: those naming a failure, an
    exception or an error (a progress line that ended in "ok" is not one), else its first or
    last lines."""
    all_lines = [l.rstrip() for l in text.splitlines() if l.strip() and not l.startswith("$ cd ")]
    if not all_lines:
        return "(no output)"
    picked = [l for l in all_lines if INTERESTING.search(l) and not re.search(r"\bok$", l)][:lines]
    if not picked:
        picked = all_lines[:lines] if first else all_lines[-lines:]
    return " | ".join(s[:300] for s in picked)


# ----------------------------------------------------------------------------------------------
# The names test.py files use (a subset of ZeroC's driver API)
# ----------------------------------------------------------------------------------------------

class Expect:
    """Stands in for upstream's Expect module (federation2 catches Expect.TIMEOUT)."""
    TIMEOUT = TestFailed


class Config:
    protocol = "tcp"
    ipv6 = False
    compress = False
    serialize = False
    mx = False
    cpp11 = False
    buildPlatform = "x86_64"
    buildConfig = "shared"
    openssl = False
    uwp = False
    parsedOptions = []


class Current:
    """What upstream calls `current`: the running suite, test case and process table."""

    def __init__(self, runner, testsuite):
        self.runner = runner
        self.driver = runner
        self.config = Config()
        self.testsuite = testsuite
        self.testcase = None
        self.processes = {}
        self.files = []
        self.host = "127.0.0.1"

    def getTestEndpoint(self, portnum=0, protocol="default"):
        return "{0} -p {1}".format(protocol, self.getTestPort(portnum))

    def getTestPort(self, portnum=0):
        return BASE_PORT + portnum

    def write(self, *args, **kwargs):
        self.runner.log_line(" ".join(str(a) for a in args), newline=False)

    def writeln(self, *args, **kwargs):
        self.runner.log_line(" ".join(str(a) for a in args))


class CppMapping:
    name = "cpp"

    def getSSLProps(self, process, current):
        return {
            "Ice.Plugin.IceSSL": "IceSSL:createIceSSL",
            "IceSSL.Password": "password",
            "IceSSL.DefaultDir": current.runner.certs_dir,
            "IceSSL.CAs": "cacert.pem",
            "IceSSL.CertFile": "server.p12" if isinstance(process, Server) else "client.p12",
        }

    def getProps(self, process, current):
        props = {}
        if current.config.protocol in ["ssl", "wss"]:
            props.update(self.getSSLProps(process, current))
        props["Ice.NullHandleAbort"] = True
        props["Ice.PrintStackTraces"] = "1"
        return props


class Mapping:
    _cpp = CppMapping()

    @classmethod
    def getByName(cls, name):
        return cls._cpp


class Process:
    processType = None

    def __init__(self, exe=None, outfilters=None, quiet=False, args=None, props=None, envs=None, desc=None,
                 mapping=None, preexec_fn=None, traceProps=None):
        self.exe = exe
        self.quiet = quiet
        self.args = args or []
        self.props = props or {}
        self.envs = envs or {}
        self.desc = desc
        self.mapping = mapping
        self.traceProps = traceProps or {}
        self.outfilters = outfilters or []

    def __str__(self):
        return self.desc or self.getExe(None) or "process"

    # --- hooks a test.py may override -----------------------------------------------------
    def setup(self, current):
        pass

    def teardown(self, current, success):
        pass

    def getProps(self, current):
        return {}

    def getArgs(self, current):
        return []

    def getMapping(self, current):
        return self.mapping or Mapping._cpp

    def getExe(self, current):
        return self.exe

    def isFromBinDir(self):
        return False

    # --- the effective command line ---------------------------------------------------------
    def getEffectiveProps(self, current, props):
        allProps = {}
        if isinstance(self, IceProcess):
            allProps["Ice.Default.Host"] = "127.0.0.1"                    # driver
            allProps["Ice.Warn.Connections"] = True                       # configuration
            allProps["Ice.Default.Protocol"] = current.config.protocol
            allProps["Ice.IPv6"] = current.config.ipv6
            allProps.update(self.getMapping(current).getProps(self, current))   # mapping
        allProps.update(current.testcase.getProps(self, current))         # test case
        allProps.update(self.getProps(current))                          # process class
        allProps.update(self.props(self, current) if callable(self.props) else self.props)
        allProps.update(props)
        return allProps

    def getEffectiveArgs(self, current, args):
        allArgs = []
        allArgs += current.testcase.getArgs(self, current)
        allArgs += self.getArgs(current)
        allArgs += self.args(self, current) if callable(self.args) else self.args
        allArgs += args
        return [str(a) for a in allArgs]

    def getEffectiveTraceProps(self, current):
        traceProps = {}
        traceProps.update(current.testcase.getTraceProps(self, current))
        traceProps.update(self.traceProps(self, current) if callable(self.traceProps) else self.traceProps)
        return traceProps

    def command(self, current, args=[], props={}):
        """(argv, printable command line) as upstream's LocalProcessController.start builds it."""
        allProps = self.getEffectiveProps(current, dict(props))
        allProps.update(current.runner.extra_props(self, current))
        allArgs = self.getEffectiveArgs(current, list(args))
        exe = current.runner.exe_for(self, current)
        traceProps = self.getEffectiveTraceProps(current)
        if traceProps:
            name = os.path.basename(self.getExe(current) or current.testcase.getProcessType(self) or "process")
            traceProps["Ice.LogFile"] = os.path.join(current.runner.case_dir, "%s-trace.log" % name)
            allProps.update(traceProps)
        argl = ["--{0}={1}".format(k, val(v)) for k, v in allProps.items()] + [val(a) for a in allArgs]
        kargs = {"process": self, "testcase": current.testcase, "testdir": current.testsuite.getPath(),
                 "builddir": os.path.dirname(exe)}
        line = (shlex.quote(exe) + " " + " ".join(argl)).format(**kargs)
        return shlex.split(line), line

    # --- running ------------------------------------------------------------------------------
    def start(self, current, args=[], props={}, watchDog=None):
        argv, line = self.command(current, args, props)
        name = current.runner.process_name(self, current)
        rp = RunningProcess(argv, cwd=current.testsuite.getPath(),
                            logpath=os.path.join(current.runner.case_dir, name + ".log"),
                            env=current.runner.env_for(self), desc=name)
        current.processes[self] = rp
        current.runner.track(rp)
        try:
            self.waitForStart(current)
        except BaseException:
            current.runner.untrack(rp)
            rp.kill()
            raise

    def waitForStart(self, current):
        pass

    def isStarted(self, current):
        return self in current.processes and current.processes[self].poll() is None

    def getOutput(self, current):
        return current.processes[self].output() if self in current.processes else getattr(self, "_lastOutput", "")

    def expect(self, current, pattern, timeout=60):
        return current.processes[self].expect(pattern, timeout)

    def stop(self, current, waitSuccess=False, exitstatus=0):
        if self not in current.processes:
            return
        rp = current.processes.pop(self)
        try:
            if waitSuccess:
                status = rp.wait_exit(current.runner.stop_timeout)
                if status is None:
                    raise TestFailed("%s did not exit by itself within %d s after the clients ended"
                                     % (rp.desc, current.runner.stop_timeout), summarize(rp.output()))
                if status != exitstatus:
                    raise TestFailed("%s exited with status %s (expected %s)" % (rp.desc, status, exitstatus),
                                     summarize(rp.output()))
        finally:
            current.runner.untrack(rp)
            rp.kill()

    def run(self, current, args=[], props={}, exitstatus=0, timeout=None):
        """Starts this client and waits for it (bounded), checking its exit status."""
        self.start(current, args, props)
        rp = current.processes[self]
        try:
            status = rp.wait_exit(timeout or current.runner.client_timeout, idle_timeout=current.runner.idle_timeout)
            if status is None:
                raise TestFailed("%s still running after %d s (or %d s without output); killed"
                                 % (rp.desc, timeout or current.runner.client_timeout, current.runner.idle_timeout),
                                 summarize(rp.output()))
            ok = status in exitstatus if isinstance(exitstatus, list) else status == exitstatus
            if not ok:
                raise TestFailed("%s exited with status %s (expected %s)" % (rp.desc, status, exitstatus),
                                 summarize(rp.output()))
        finally:
            current.processes.pop(self, None)
            current.runner.untrack(rp)
            rp.kill()
            self._lastOutput = rp.output()

    def getLastOutput(self):
        return getattr(self, "_lastOutput", "")


class IceProcess(Process):
    pass


class Server(IceProcess):

    def __init__(self, exe=None, waitForShutdown=True, readyCount=1, ready=None, startTimeout=300, *args, **kargs):
        IceProcess.__init__(self, exe, *args, **kargs)
        self.waitForShutdown = waitForShutdown
        self.readyCount = readyCount
        self.ready = ready
        self.startTimeout = startTimeout

    def getProps(self, current):
        props = IceProcess.getProps(self, current)
        props.update({
            "Ice.ThreadPool.Server.Size": 1,
            "Ice.ThreadPool.Server.SizeMax": 3,
            "Ice.ThreadPool.Server.SizeWarn": 0,
        })
        if self.ready or self.readyCount > 0:
            props["Ice.PrintAdapterReady"] = 1
        return props

    def waitForStart(self, current):
        rp = current.processes[self]
        alt, after = current.runner.ready_alternative(self, current)
        ok, note = rp.wait_ready(self.readyCount, self.ready, min(self.startTimeout, current.runner.start_timeout),
                                 alt_check=alt, alt_after=after)
        if note:
            current.runner.note(note)

    def stop(self, current, waitSuccess=False, exitstatus=0):
        Process.stop(self, current, waitSuccess and self.waitForShutdown, exitstatus)


class Client(IceProcess):
    pass


class SimpleClient(Process):
    pass


class ProcessFromBinDir:

    def isFromBinDir(self):
        return True


class ProcessIsReleaseOnly:

    def isReleaseOnly(self):
        return True


class Glacier2Router(ProcessFromBinDir, ProcessIsReleaseOnly, Server):
    """The router under test (upstream's Glacier2Util.Glacier2Router, same properties)."""

    def __init__(self, portnum=50, passwords={"userid": "abc123"}, *args, **kargs):
        Server.__init__(self, "glacier2router", mapping=Mapping.getByName("cpp"), desc="Glacier2 router",
                        readyCount=2, *args, **kargs)
        self.portnum = portnum
        self.passwords = passwords

    def setup(self, current):
        if self.passwords:
            path = os.path.join(current.testsuite.getPath(), "passwords")
            with open(path, "w") as f:
                for user, password in self.passwords.items():
                    f.write("%s %s\n" % (user, crypt_password(password)))
            current.files.append(path)

    def getProps(self, current):
        props = Server.getProps(self, current)
        props.update({
            "Glacier2.Client.Endpoints": current.getTestEndpoint(self.portnum),
            "Glacier2.Server.Endpoints": "tcp",
            "Ice.Admin.Endpoints": current.getTestEndpoint(self.portnum + 1),
            "Ice.Admin.InstanceName": "Glacier2",
        })
        if self.passwords:
            props["Glacier2.CryptPasswords"] = os.path.join(current.testsuite.getPath(), "passwords")
        if isinstance(current.testcase.getTestSuite(), Glacier2TestSuite):
            props.update(current.testcase.getTestSuite().getRouterProps(self, current))
        return props

    def getClientProxy(self, current):
        return "Glacier2/router:{0}".format(current.getTestEndpoint(self.portnum))


def crypt_password(password):
    out = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n", capture_output=True,
                         text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError("openssl passwd failed: " + out.stderr)
    return out.stdout.strip()


class TestCase:

    def __init__(self, name, client=None, clients=None, server=None, servers=None, args=None, props=None,
                 envs=None, options=None, desc=None, traceProps=None):
        self.name = name
        self.parent = None
        self.mapping = Mapping._cpp
        self.testsuite = None
        self.options = options or {}
        self.args = args or []
        self.props = props or {}
        self.traceProps = traceProps or {}
        self.envs = envs or {}
        self.desc = desc
        self.clients = clients or ([client] if client else [])
        self.servers = servers or ([server] if server else [])

    def __str__(self):
        return self.name

    def init(self, mapping, testsuite):
        self.testsuite = testsuite
        # Default processes: a ClientServerTestCase without explicit processes runs server + client.
        if not self.clients and self.getClientType():
            self.clients = [Client()]
        if not self.servers and self.getServerType():
            self.servers = [Server()]

    def getName(self):
        return self.name

    def getParent(self):
        return self.parent

    def getTestSuite(self):
        return self.testsuite

    def getMapping(self):
        return self.mapping

    def getArgs(self, process, current):
        return self.args

    def getProps(self, process, current):
        return self.props

    def getTraceProps(self, process, current):
        return self.traceProps

    def getEnv(self, process, current):
        return self.envs

    def getPath(self, current=None):
        return self.testsuite.getPath()

    def getClientType(self):
        return None

    def getServerType(self):
        return None

    def getProcessType(self, process):
        if getattr(process, "processType", None):
            return process.processType
        if process in self.clients:
            return self.getClientType() or "client"
        if process in self.servers or isinstance(process, Server):
            return self.getServerType() or "server"
        return self.getClientType() or "client"

    def setup(self, current):
        pass

    def teardown(self, current, success):
        pass

    def setupServerSide(self, current):
        pass

    def teardownServerSide(self, current, success):
        pass

    def setupClientSide(self, current):
        pass

    def teardownClientSide(self, current, success):
        pass

    def startServerSide(self, current):
        for server in self.servers:
            self._startServer(current, server)

    def stopServerSide(self, current, success):
        for server in reversed(self.servers):
            self._stopServer(current, server, success)

    def runClientSide(self, current):
        for client in self.clients:
            self._runClient(current, client)

    def _startServer(self, current, server):
        if server.desc:
            current.write("starting {0}... ".format(server.desc))
        server.setup(current)
        server.start(current)
        if server.desc:
            current.writeln("ok")

    def _stopServer(self, current, server, success):
        try:
            server.stop(current, success)
        finally:
            server.teardown(current, success)

    def _runClient(self, current, client):
        if client.desc:
            current.writeln("running {0}...".format(client.desc))
        client.setup(current)
        try:
            client.run(current)
        finally:
            client.teardown(current, True)

    def _startServerSide(self, current):
        self.setupServerSide(current)
        try:
            self.startServerSide(current)
        except BaseException:
            self._stopServerSide(current, False)
            raise

    def _stopServerSide(self, current, success):
        try:
            self.stopServerSide(current, success)
        finally:
            for server in reversed(self.servers):
                if server in current.processes:
                    self._stopServer(current, server, False)
            self.teardownServerSide(current, success)

    def _runClientSide(self, current):
        self.setupClientSide(current)
        success = False
        try:
            self.runClientSide(current)
            success = True
        finally:
            self.teardownClientSide(current, success)

    def runWithDriver(self, current):
        success = False
        self._startServerSide(current)
        try:
            self._runClientSide(current)
            success = True
        finally:
            self._stopServerSide(current, success)

    def run(self, current):
        """Runs this test case. One created inside another's runClientSide (IceStorm's
        publisher/subscriber pairs) runs as a child of the current one, as upstream's
        current.push makes it: same suite, `parent` set for the time of the run."""
        outer = current.testcase
        child = outer is not None and outer is not self and self.testsuite is None
        if child:
            self.parent = outer
            self.testsuite = outer.getTestSuite()
        current.testcase = self
        try:
            self.setup(current)
            ok = False
            try:
                self.runWithDriver(current)
                ok = True
            finally:
                self.teardown(current, ok)
        finally:
            current.testcase = outer
            if child:
                self.parent = None
                self.testsuite = None


class ClientTestCase(TestCase):

    def __init__(self, name="client", *args, **kargs):
        TestCase.__init__(self, name, *args, **kargs)

    def runWithDriver(self, current):
        self._runClientSide(current)

    def getClientType(self):
        return "client"


class ClientServerTestCase(ClientTestCase):

    def __init__(self, name="client/server", *args, **kargs):
        TestCase.__init__(self, name, *args, **kargs)

    def runWithDriver(self, current):
        TestCase.runWithDriver(self, current)

    def getServerType(self):
        return "server"


class TestSuite:
    """Registered with the loader (Loader.suites) when created, as upstream's are with the mapping."""

    def __init__(self, path, testcases=None, options=None, libDirs=None, runOnMainThread=False, chdir=False,
                 multihost=True, mapping=None):
        self.path = os.path.dirname(path) if os.path.basename(path) == "test.py" else path
        self.testcases = {}
        self.order = []
        self.options = options or {}
        self.multihost = multihost
        for tc in testcases or []:
            self.addTestCase(tc)
        Loader.suites.append(self)

    def addTestCase(self, testcase):
        if testcase.name in self.testcases:
            raise RuntimeError("duplicate test case name {0}".format(testcase))
        testcase.init(Mapping._cpp, self)
        self.testcases[testcase.name] = testcase
        self.order.append(testcase)

    def getPath(self):
        return self.path

    def getId(self):
        parts = self.path.rstrip("/").split("/")
        return "/".join(parts[-2:])

    def getMapping(self):
        return Mapping._cpp

    def setup(self, current):
        pass

    def teardown(self, current, success):
        for f in current.files:
            if os.path.exists(f):
                os.unlink(f)
        current.files = []

    def isMainThreadOnly(self, driver=None):
        return True


class Glacier2TestSuite(TestSuite):

    def __init__(self, path, routerProps={}, testcases=None, *args, **kargs):
        if testcases is None:
            testcases = [ClientServerTestCase(servers=[Glacier2Router(), Server()])]
        TestSuite.__init__(self, path, testcases, *args, **kargs)
        self.routerProps = routerProps

    def getRouterProps(self, process, current):
        return self.routerProps(process, current) if callable(self.routerProps) else self.routerProps.copy()


class Loader:
    suites = []

    @classmethod
    def load(cls, path, run_name, extra_globals=None):
        """Executes one upstream test definition file with this module's names as its globals;
        returns the suites it created."""
        import runpy
        before = len(cls.suites)
        g = dict(EXPORTS)
        if extra_globals:
            g.update(extra_globals)
        old_path = list(sys.path)
        sys.path.insert(0, os.path.dirname(path))
        try:
            runpy.run_path(path, init_globals=g, run_name=run_name)
        finally:
            sys.path[:] = old_path
        return cls.suites[before:]


class IceBoxAdmin(ProcessFromBinDir, ProcessIsReleaseOnly, Client):
    """upstream IceBoxUtil.IceBoxAdmin for the C++ mapping: the iceboxadmin tool."""

    def getExe(self, current):
        return "iceboxadmin"


class _Component:
    """The bits of upstream's Component.component that IceStormUtil.py uses."""

    def getSoVersion(self):
        return "37"

    def useBinDist(self, mapping, current):
        return True


def load_icestorm_util(src):
    """Executes upstream's scripts/IceStormUtil.py against this module (its `from Util import *`,
    `from Component import component` and `from IceBoxUtil import *` are served by stand-in
    modules); returns its names (IceStorm, IceStormTestCase, Subscriber, Publisher, ...)."""
    import types
    util = types.ModuleType("Util")
    for k, v in EXPORTS.items():
        setattr(util, k, v)
    comp = types.ModuleType("Component")
    comp.component = _Component()
    iceboxutil = types.ModuleType("IceBoxUtil")
    iceboxutil.IceBoxAdmin = IceBoxAdmin
    saved = {k: sys.modules.get(k) for k in ["Util", "Component", "IceBoxUtil"]}
    sys.modules.update({"Util": util, "Component": comp, "IceBoxUtil": iceboxutil})
    try:
        import runpy
        names = runpy.run_path(os.path.join(src, "scripts", "IceStormUtil.py"), run_name="IceStormUtil")
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    keep = ["IceStorm", "IceStormProcess", "IceStormAdmin", "Subscriber", "Publisher", "IceStormTestCase",
            "IceBoxAdmin"]
    return {k: names[k] for k in keep if k in names}


class Runner:
    """Set by run.py: which executable each process runs, timeouts, logging. Class attributes so
    that a process started anywhere is tracked (and killed by its PID on exit)."""
    started_pids = set()

    def extra_props(self, process, current):
        """Properties added after upstream's (none by default; run.py documents any it adds)."""
        return {}

    def runClientServerTestCase(self, current):
        """upstream's driver entry for a client/server test case (IceStorm's use it)."""
        TestCase.runWithDriver(current.testcase, current)


EXPORTS = {
    "os": os, "sys": sys, "re": re, "time": time, "shutil": shutil, "socket": socket,
    "TestSuite": TestSuite, "Glacier2TestSuite": Glacier2TestSuite, "TestCase": TestCase,
    "ClientTestCase": ClientTestCase, "ClientServerTestCase": ClientServerTestCase,
    "Process": Process, "IceProcess": IceProcess, "Server": Server, "Client": Client,
    "SimpleClient": SimpleClient, "Glacier2Router": Glacier2Router, "ProcessFromBinDir": ProcessFromBinDir,
    "ProcessIsReleaseOnly": ProcessIsReleaseOnly, "Mapping": Mapping, "Expect": Expect, "val": val,
    "IceBoxAdmin": IceBoxAdmin, "CppMapping": CppMapping,
}
