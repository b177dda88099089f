"""Interop harness: free ports, property files, child processes, Ice clients, raw Ice sockets.

Everything here is scenario-agnostic. Every process the harness starts is recorded and stopped
by PID (terminate, then kill after 5 s); every network wait has a bound.
"""
import base64
import contextlib
import crypt
import ctypes
import gc
import hashlib
import os
import signal
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

import Ice

import ports  # tests/interop/ports.py, next to this file
from ice_wire import VALIDATE, header, ice_string, request  # noqa: F401  (scenarios use them from here)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Ice's validate connection message, also its heartbeat (docs/ice-wire.md).
HEARTBEAT = VALIDATE
PEERS = os.path.join(HERE, "peers")
PYTHON = "/usr/bin/python3"
HOST = "127.0.0.1"

Ice.loadSlice("-I/usr/share/ice/slice " + os.path.join(HERE, "Demo.ice"))
import Demo  # noqa: E402,F401  (generated above; scenarios import it from here)


def _import_glacier2():
    """Imports Glacier2 and returns the Slice class of ::Glacier2::SessionNotExistException.

    python3-zeroc-ice 3.7.8's Glacier2/__init__.py rebinds Glacier2.SessionNotExistException
    to an unrelated helper class, after Router_ice.py registered the Slice class with IcePy,
    which keeps only a borrowed reference to it. Once the cyclic GC frees the orphaned class,
    receiving that exception crashes the interpreter (observed: SIGSEGV in destroySession).
    So: no GC during the import, then keep a real reference to the Slice class."""
    first_import = "Glacier2" not in sys.modules
    gc.disable()
    try:
        import Glacier2  # noqa: F401
        for obj in gc.get_objects():
            if (isinstance(obj, type) and issubclass(obj, Ice.UserException)
                    and obj.__dict__.get("_ice_id") == "::Glacier2::SessionNotExistException"):
                return obj
    finally:
        gc.enable()
    raise RuntimeError("Slice class ::Glacier2::SessionNotExistException not found%s"
                       % ("" if first_import else " (import harness before Glacier2)"))


SessionNotExistException = _import_glacier2()

# Users in the crypt password file (Glacier2.CryptPasswords): user -> clear-text password.
CRYPT_USERS = {"alice": "secret", "bob": "builder"}


class Failure(Exception):
    """A scenario's check did not hold; the message is the reason printed after FAIL."""


class Skip(Exception):
    """A scenario that cannot run in this configuration (e.g. --no-cpp); not a failure."""


def check(cond, reason):
    if not cond:
        raise Failure(reason)


def free_port():
    """A port nobody listens on, below the ephemeral range (ports.py says why)."""
    return ports.free_port(HOST)


def endpoint(port, transport="tcp"):
    return "%s -h %s -p %d" % (transport, HOST, port)


def write_properties(path, props):
    """Writes an Ice property file (key=value lines) in a stable order."""
    with open(path, "w") as f:
        f.write("# written by tests/interop/harness.py\n")
        for k in sorted(props):
            f.write("%s=%s\n" % (k, props[k]))


def wait_until(pred, timeout, interval=0.05):
    """Polls pred() until it is truthy or timeout seconds passed; returns the last value."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= end:
            return v
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------
# Hand-encoded Ice protocol (ice_wire.py: VALIDATE, header, ice_string, request), for what a
# well-behaved Ice client never sends.


def reply_status(msg):
    """(request id, reply status) of a reply message."""
    if len(msg) < 19 or msg[8] != 2:
        raise Failure("not a reply message: %s" % msg[:32].hex())
    return struct.unpack("<i", msg[14:18])[0], msg[18]


class RawConn:
    """A TCP connection that speaks Ice by hand. read() returns the next whole message as bytes,
    or one of the strings 'closed', 'reset', 'timeout'. With tls (an ssl.SSLContext), the
    connection is TLS: the handshake (server name 127.0.0.1) is part of the constructor."""

    def __init__(self, port, timeout=3.0, tls=None):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.settimeout(timeout)
        if tls is not None:
            try:
                self.sock = tls.wrap_socket(self.sock, server_hostname=HOST)
            except OSError:
                self.close()
                raise
        first = self.read()
        if first != VALIDATE:
            self.close()
            raise Failure("expected validate connection on connect, got %r" % (first,))

    def send(self, data):
        self.sock.sendall(data)

    def _recv_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def read(self, timeout=None):
        if timeout is not None:
            self.sock.settimeout(timeout)
        try:
            hdr = self._recv_exact(14)
            if hdr is None:
                return "closed"
            size = struct.unpack("<i", hdr[10:14])[0]
            rest = self._recv_exact(size - 14) if size > 14 else b""
            return "closed" if rest is None else hdr + rest
        except socket.timeout:
            return "timeout"
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            return "reset"

    def wait_closed(self, timeout):
        """True if the peer closes the socket within timeout without sending anything but
        heartbeats (validate connection messages: a router heartbeats idle clients).
        Returns (closed, what): what is the first other message/bytes seen otherwise."""
        deadline = time.monotonic() + timeout
        pending = b""
        while True:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return False, "timeout"
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
                return True, "reset"
            if not data:
                return True, "closed"
            pending += data
            while pending.startswith(HEARTBEAT):
                pending = pending[len(HEARTBEAT):]
            if pending and not HEARTBEAT.startswith(pending):
                return False, pending

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()


def wait_closed(sock, deadline, bad):
    """Reads sock until the peer closes it or time.monotonic() passes deadline. bad(data)
    returns why a chunk must not have been sent (e.g. an Ice message), or None to read on.
    Returns (closed, what): (True, "closed" | "reset") or (False, "still open" | bad's reason)."""
    while True:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            return False, "still open"
        except (ConnectionResetError, BrokenPipeError):
            return True, "reset"
        if not data:
            return True, "closed"
        reason = bad(data)
        if reason:
            return False, reason


# ---------------------------------------------------------------------------------------------
# WebSocket (RFC 6455) endpoints: Ice's ws/wss transports (docs: IceWS, sub-protocol
# "ice.zeroc.com", one Ice message per binary frame)

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WS_PROTOCOL = "ice.zeroc.com"


def ws_accept(key):
    """The Sec-WebSocket-Accept value a server must answer to Sec-WebSocket-Key key."""
    return base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()


def ws_validate(port, timeout=1.0, tls=None):
    """Opens a WebSocket to the ws endpoint on port (wss: after a TLS handshake with the
    ssl.SSLContext tls) as an Ice ws client does: GET / with Upgrade: websocket,
    Sec-WebSocket-Protocol: ice.zeroc.com and Sec-WebSocket-Version: 13. The answer must be
    101 with the right Sec-WebSocket-Accept and that protocol, followed by one unmasked binary
    frame (FIN set) holding exactly the 14-byte Ice validate connection. Then it sends a close
    frame and waits briefly for the server's close. Raises Failure saying what was wrong, or
    OSError."""
    sock = socket.create_connection((HOST, port), timeout=timeout)
    try:
        sock.settimeout(timeout)
        if tls is not None:
            sock = tls.wrap_socket(sock, server_hostname=HOST)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
                      "Sec-WebSocket-Protocol: %s\r\n\r\n" % (HOST, port, key, WS_PROTOCOL)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > 8192:
                raise Failure("WebSocket upgrade: response head longer than 8 KiB")
            chunk = sock.recv(4096)
            if not chunk:
                raise Failure("WebSocket upgrade: connection closed after %r" % data[:120])
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        if len(status) < 2 or status[1] != "101":
            raise Failure("WebSocket upgrade: answered %r, expected 101" % lines[0][:120])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("sec-websocket-accept") != ws_accept(key):
            raise Failure("WebSocket upgrade: Sec-WebSocket-Accept %r, expected %r"
                          % (headers.get("sec-websocket-accept"), ws_accept(key)))
        if headers.get("sec-websocket-protocol") != WS_PROTOCOL:
            raise Failure("WebSocket upgrade: Sec-WebSocket-Protocol %r, expected %r"
                          % (headers.get("sec-websocket-protocol"), WS_PROTOCOL))
        want = b"\x82\x0e" + VALIDATE  # FIN + binary, unmasked, 14 bytes
        while len(rest) < len(want):
            chunk = sock.recv(len(want) - len(rest))
            if not chunk:
                raise Failure("WebSocket: closed after the upgrade, having sent %s" % (rest.hex() or "nothing"))
            rest += chunk
        if rest[:len(want)] != want:
            raise Failure("WebSocket: first frame %s, expected %s (one binary frame with the validate"
                          " connection)" % (rest[:len(want)].hex(), want.hex()))
        # A polite close: a close frame (status 1000, masked as a client must), then wait (up to
        # 0.5 s) for the server to answer it and close; what it sends is not checked.
        mask = os.urandom(4)
        with contextlib.suppress(OSError):
            sock.sendall(b"\x88\x82" + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(b"\x03\xe8")))
            sock.settimeout(0.5)
            while sock.recv(4096):
                pass
    finally:
        with contextlib.suppress(OSError):
            sock.close()


def probe(port, transport="tcp", timeout=1.0, tls=None):
    """Connects to an Ice endpoint of the given transport and returns once it has sent its
    validate connection (tls: the ssl.SSLContext for ssl and wss). Raises Failure or OSError."""
    if transport in ("ws", "wss"):
        ws_validate(port, timeout=timeout, tls=tls if transport == "wss" else None)
    else:
        RawConn(port, timeout=timeout, tls=tls if transport == "ssl" else None).close()


# ---------------------------------------------------------------------------------------------
# Processes

# Resolved here, not in the child: between fork and exec (other threads may hold locks at fork
# time, e.g. the dynamic loader's) the child should only make the one system call.
_prctl = ctypes.CDLL(None, use_errno=True).prctl
PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Child side of fork: get SIGTERM if the suite dies without stopping us (e.g. SIGKILL)."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))


class Proc:
    def __init__(self, name, cmd, log_path):
        self.name, self.cmd, self.log_path = name, cmd, log_path
        self.failed_start = False  # set by Env.start_ready: already reported as a failure
        self.log = open(log_path, "w")
        self.popen = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=os.path.dirname(log_path),
                                      preexec_fn=_die_with_parent)

    def alive(self):
        return self.popen.poll() is None

    def log_tail(self, lines=15):
        """The end of the process's output, prefixed for appending to a failure reason."""
        if not self.log.closed:  # stop() closes it (e.g. a router that failed to start)
            self.log.flush()
        try:
            with open(self.log_path, errors="replace") as f:
                tail = "".join(f.readlines()[-lines:]).rstrip()
        except OSError:
            tail = ""
        return "; log tail:\n" + tail if tail else " (no output)"

    def stop(self):
        """Terminate by PID, kill if still there after 5 s. Returns the exit status after
        SIGTERM, or None if it had to be killed (or had already exited: see popen.returncode)."""
        rc = None
        if self.alive():
            self.popen.terminate()
            try:
                rc = self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self.log.close()
        return rc


class Router:
    """A running router under test: its ports and the property file it was started with.
    With a topic service (Env.router(..., icestorm=True)), tm_port and pub_port are the
    IceStorm.TopicManager/Publish endpoints' ports, and helpers holds the extra processes
    (glacier2 flavour: the real icebox IceStorm)."""

    def __init__(self, name, proc, client_port, server_port, props, tm_port=None, pub_port=None, helpers=(),
                 transport="tcp", server_transport=None):
        self.name, self.proc, self.props = name, proc, props
        self.client_port, self.server_port = client_port, server_port
        self.tm_port, self.pub_port, self.helpers = tm_port, pub_port, list(helpers)
        self.transport = transport  # of the client endpoint: "tcp", "ssl", "ws" or "wss"
        self.server_transport = server_transport or transport  # of the server endpoint

    @property
    def proxy(self):
        return "Glacier2/router:" + endpoint(self.client_port, self.transport)

    @property
    def topic_manager(self):
        return "IceStorm/TopicManager:" + endpoint(self.tm_port)


class Env:
    """One suite run: a temp dir, the router flavour under test, and lazily started children
    (each router configuration and each peer is started once, on first use)."""

    def __init__(self, flavour, moraine_bin, keep=False, cpp_build_dir=None):
        self.flavour, self.moraine_bin, self.keep = flavour, moraine_bin, keep
        # Where the two routers differ on purpose, a scenario checks each one's own rule: this
        # says which router actually answers. mutants.sh runs glacier2router in moraine's slot.
        self.is_glacier2 = flavour == "glacier2" or os.environ.get("INTEROP_ROUTER_IS_GLACIER2") == "1"
        self.cpp_build_dir = cpp_build_dir
        self._cpp_exe = None
        self.dir = tempfile.mkdtemp(prefix="moraine-interop-")
        self.procs = []
        self._peers = {}
        self._routers = {}
        self.passwords = os.path.join(self.dir, "passwords")
        with open(self.passwords, "w") as f:
            for user, pw in CRYPT_USERS.items():
                f.write("%s %s\n" % (user, crypt.crypt(pw, crypt.mksalt(crypt.METHOD_SHA512))))

    def start(self, name, cmd):
        proc = Proc(name, cmd, os.path.join(self.dir, name + ".log"))
        self.procs.append(proc)
        return proc

    def wait_ready(self, proc, port, timeout=15.0, what="", tls=None, transport=None):
        """Waits until port answers with an Ice validate connection message (see probe():
        transport "tcp", "ssl", "ws" or "wss"; by default "ssl" if tls, an ssl.SSLContext for the
        handshake, is given, else "tcp"). what, if given, names the port in the failure reason
        (e.g. the property that configures it), along with the last probe's error."""
        transport = transport or ("ssl" if tls is not None else "tcp")
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            if not proc.alive():
                raise Failure("%s exited with %s before listening on %d%s"
                              % (proc.name, proc.popen.returncode, port, proc.log_tail()))
            try:
                probe(port, transport, timeout=1.0, tls=tls)
                return
            except (OSError, Failure) as e:
                last = e
                time.sleep(0.1)
        raise Failure("%s not ready on port %d%s after %.0f s (last probe, %s: %s: %s)%s"
                      % (proc.name, port, " (%s)" % what if what else "", timeout, transport,
                         type(last).__name__, last, proc.log_tail()))

    # -- Python peers -----------------------------------------------------------------------

    def start_once(self, cache, label, starter):
        """cache[name] = starter(), computed once: a start that failed is not retried (a router
        that never listens would otherwise cost every later scenario the full wait)."""
        if label not in cache:
            try:
                cache[label] = starter()
            except Failure as e:
                cache[label] = Failure("%s failed to start: %s" % (label, e))
        if isinstance(cache[label], Failure):
            raise cache[label]
        return cache[label]

    def start_ready(self, name, cmd, ports, tls=None):
        """Starts cmd and waits for each of ports: a port number, (port, what) or (port, what,
        transport). With tls (an ssl.SSLContext), the ports without a transport are TLS ports,
        probed after a handshake; tls is also the context for "wss" ports."""
        proc = self.start(name, cmd)
        try:
            for port in ports:
                port, what, transport = (tuple(port) + ("", None))[:3] if isinstance(port, tuple) else (port, "", None)
                self.wait_ready(proc, port, what=what, tls=tls, transport=transport)
        except Failure:
            proc.failed_start = True
            proc.stop()
            raise
        return proc

    def peer(self, script, args=(), name=None, tls=None, transport=None):
        """Starts peers/<script>.py PORT ARGS... once per name (default: script); returns its
        port. tls: the ssl.SSLContext for the readiness probe of a peer that listens on ssl.
        transport: "ws" for a peer started with --Ice.Default.Protocol=ws in args."""
        name = name or script

        def starter():
            port = free_port()
            ready = [(port, name, transport)] if transport else [port]
            self.start_ready(name, [PYTHON, os.path.join(PEERS, script + ".py"), str(port)] + list(args), ready,
                             tls=tls)
            return port
        return self.start_once(self._peers, "peer " + name, starter)

    def backend(self):
        return self.peer("backend")

    def hello_proxy(self, name="hello"):
        return "%s:%s" % (name, endpoint(self.backend()))

    # -- routers ----------------------------------------------------------------------------

    def router(self, name, props, server=True, icestorm=False, transport="tcp", tls=None, server_transport=None,
               command_line=None):
        """Starts the router under test once per configuration name. props are the
        configuration-specific properties; endpoints are added here, with transport ("tcp",
        "ssl", "ws" or "wss": for ssl and wss the IceSSL properties are then the caller's) for the
        client endpoint, and server_transport (default: transport) for the server endpoint. tls
        is the ssl.SSLContext of the readiness probe for ssl and wss endpoints.

        icestorm=True adds IceStorm.InstanceName/TopicManager.Endpoints/Publish.Endpoints (and
        IceStorm.Transient=1) to the same property file. moraine-router serves them itself; for
        glacier2router the real IceStorm is started too, as an icebox service whose
        --Ice.Config is that very file.

        command_line (a dict of properties): both routers are started as glacier2router is,
        `--Ice.Config=FILE --Key=Value ...`, with these properties as options; the file's
        Glacier2.Client.Endpoints then names a port nobody listens on, and the real client
        endpoint is one of the options, so the router is reachable only if the options win."""
        def starter():
            client_port = free_port()
            server_port = free_port() if server else None
            tm_port = free_port() if icestorm else None
            pub_port = free_port() if icestorm else None
            all_props = {
                "Glacier2.InstanceName": "Glacier2",
                "Glacier2.Client.Endpoints": endpoint(client_port, transport),
                "Glacier2.Trace.Session": "1",
            }
            if server:
                all_props["Glacier2.Server.Endpoints"] = endpoint(server_port, server_transport or transport)
            if icestorm:
                all_props.update({
                    "IceStorm.InstanceName": "IceStorm",
                    "IceStorm.TopicManager.Endpoints": endpoint(tm_port),
                    "IceStorm.Publish.Endpoints": endpoint(pub_port),
                    "IceStorm.Transient": "1",
                })
            all_props.update(props)
            options = []
            if command_line is not None:
                options = ["--%s=%s" % kv for kv in sorted(command_line.items())]
                options.append("--Glacier2.Client.Endpoints=" + all_props["Glacier2.Client.Endpoints"])
                all_props = dict(all_props, **{"Glacier2.Client.Endpoints": endpoint(free_port(), transport)})
            cfg = os.path.join(self.dir, "router-%s.cfg" % name)
            write_properties(cfg, all_props)
            helpers = []
            topic_ports = [(tm_port, "IceStorm.TopicManager.Endpoints"), (pub_port, "IceStorm.Publish.Endpoints")]
            if self.flavour == "glacier2" and icestorm:
                box_cfg = os.path.join(self.dir, "icebox-%s.cfg" % name)
                write_properties(box_cfg, {
                    "IceBox.Service.IceStorm": "IceStormService,37:createIceStorm --Ice.Config=%s"
                                               " --IceStorm.Trace.Subscriber=1 --IceStorm.Trace.Topic=1" % cfg,
                    "Ice.Warn.Connections": "0"})
                helpers.append(self.start_ready("icebox-" + name, ["/usr/bin/icebox", "--Ice.Config=" + box_cfg],
                                                topic_ports))
            if self.flavour == "glacier2":
                cmd = ["/usr/bin/glacier2router", "--Ice.Config=" + cfg] + options
            elif command_line is not None:
                cmd = [self.moraine_bin, "--Ice.Config=" + cfg] + options
            else:
                cmd = [self.moraine_bin, "--ice-config", cfg]
            ports = [(client_port, "Glacier2.Client.Endpoints", transport)]
            if server:
                ports.append((server_port, "Glacier2.Server.Endpoints", server_transport or transport))
            if icestorm and self.flavour != "glacier2":
                ports += [p + ("tcp",) for p in topic_ports]
            try:
                proc = self.start_ready("router-" + name, cmd, ports, tls=tls)
            except Failure:
                for helper in helpers:
                    helper.stop()
                raise
            return Router(name, proc, client_port, server_port, all_props, tm_port, pub_port, helpers, transport,
                          server_transport)
        router = self.start_once(self._routers, "router " + name, starter)
        for proc in [router.proc] + router.helpers:
            if not proc.alive():
                raise Failure("%s died earlier (rc %s)%s" % (proc.name, proc.popen.returncode, proc.log_tail()))
        return router

    # -- the C++ client -------------------------------------------------------------------

    def build_cpp_client(self):
        """Configures and builds tests/interop/cpp once per run (incrementally: the build dir
        is reused across runs); returns the executable's path."""
        if self._cpp_exe is None:
            log = os.path.join(self.dir, "cpp-build.log")
            steps = [["cmake", "-S", os.path.join(HERE, "cpp"), "-B", self.cpp_build_dir,
                      "-DCMAKE_BUILD_TYPE=Release"],
                     ["cmake", "--build", self.cpp_build_dir, "-j", str(os.cpu_count() or 2)]]
            with open(log, "w") as out:
                for cmd in steps:
                    try:
                        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=240).returncode
                    except subprocess.TimeoutExpired:
                        rc = "timeout"
                    if rc != 0:
                        out.flush()
                        with open(log, errors="replace") as f:
                            tail = "".join(f.readlines()[-10:])
                        raise Failure("building the C++ client failed (%s: %s):\n%s" % (" ".join(cmd), rc, tail))
            self._cpp_exe = os.path.join(self.cpp_build_dir, "moraine-interop-client")
        return self._cpp_exe

    # -- Ice clients --------------------------------------------------------------------------

    @staticmethod
    def client_properties(router=None, extra=None):
        props = {
            "Ice.Warn.Connections": "0",
            # Every invocation and connection attempt is bounded.
            "Ice.Default.InvocationTimeout": "5000",
            "Ice.Override.ConnectTimeout": "3000",
            "Ice.Override.CloseTimeout": "3000",
            # No silent retries: a failure the router causes must surface in the scenario.
            # (Glacier2's ObjectNotExist "ice_add_proxy" is still retried: Ice always does.)
            "Ice.RetryIntervals": "-1",
        }
        if router is not None:
            props["Ice.Default.Router"] = router.proxy
        props.update(extra or {})
        return props

    def communicator(self, router=None, extra=None):
        """A fresh client communicator (use with `with`)."""
        init = Ice.InitializationData()
        init.properties = Ice.createProperties()
        for k, v in self.client_properties(router, extra).items():
            init.properties.setProperty(k, v)
        return Ice.initialize(init)

    def finish(self, name, ok):
        """The end of a stand-alone test (tests/hostile): stops every child (close), prints a
        FAIL line per router that did not shut down cleanly, then PASS name or where the logs
        are. Returns the exit code: 0 if ok and everything shut down cleanly, else 1."""
        for proc_name, status, tail in self.close(ok):
            ok = False
            print("FAIL %s: %s did not shut down cleanly (status %s)%s" % (name, proc_name, status, tail))
        print("PASS %s" % name if ok else "logs in %s" % self.dir)
        return 0 if ok else 1

    def kill(self, proc):
        """SIGKILL `proc` (a child started by this Env) by PID, reap it, close its log and take
        it off the list close() stops: its death is the test's doing, not a failure."""
        proc.popen.kill()
        proc.popen.wait(5)
        proc.log.close()
        self.procs.remove(proc)

    def start_watchdog(self, seconds):
        """Bounds the whole run: after `seconds`, prints a FAIL line, stops every child by PID and
        exits 2 from the timer's thread (the main thread may be blocked inside a step)."""
        def on_timeout():
            print("FAIL overall timeout of %.0f s reached" % seconds, flush=True)
            self.close(success=False)
            os._exit(2)

        watchdog = threading.Timer(seconds, on_timeout)
        watchdog.daemon = True
        watchdog.start()
        return watchdog

    def close(self, success):
        """Stops every child. Returns the moraine-router processes that did not shut down cleanly
        on SIGTERM (exit status not 0, e.g. a LeakSanitizer report, or killed after 5 s), as
        (name, status, log tail); always empty for glacier2router, whose exit is not ours to judge.
        A router that failed to start is left out: its scenarios already failed."""
        unclean = []
        for proc in reversed(self.procs):
            was_alive = proc.alive()
            rc = proc.stop()
            if (self.flavour == "moraine" and proc.name.startswith("router-") and not proc.failed_start
                    and (rc != 0 or not was_alive)):
                unclean.append((proc.name, rc if was_alive else proc.popen.returncode, proc.log_tail()))
        if success and not unclean and not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print("logs and configs kept in", self.dir, file=sys.stderr)
        return unclean
