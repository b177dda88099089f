#!/usr/bin/python3
"""moraine-router deployed and run by a real IceGrid 3.7 (icegridnode with a collocated registry),
as a glacier2router is: the server life cycle an IceGrid operator drives with icegridadmin.

  /usr/bin/python3 tests/ops/icegrid_deploy.py [--router moraine|glacier2]
                                               [--moraine-bin build/bin/moraine-router] [--keep]

One `icegridnode` (`IceGrid.Node.CollocateRegistry=1`, every endpoint on 127.0.0.1, free ports
from tests/interop/ports.py, its data directories in a temporary directory) and an application
descriptor written here: one server, `exe` the router binary (absolute path), `activation=
"manual"`, Glacier2 properties (`Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p N`,
`Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier`, ...). icegridnode writes the
server's property file itself, adding `Ice.Admin.ServerId`, `Ice.Admin.Endpoints=tcp -h localhost`
and `Ice.Default.Locator`, and starts the router with `--Ice.Config=FILE`. An Ice server then
registers its admin object's Process proxy with the registry
(`Locator::getRegistry`, `LocatorRegistry::setServerProcessProxy`): until it has, IceGrid keeps
the server in "activating", and `server stop` waits for it (docs/properties.md, Ice.Admin.ServerId).
A router that does not register fails here: `server start` ends with "activation timed out"
after the descriptor's activation-timeout (15 s), `server properties` "couldn't reach the server's
Admin object", and `server stop` SIGKILLs it after the deactivation-timeout (15 s).

Checks, in order: the node (and its registry) comes up; `application add`; `server start`
returns within 20 s and the state is `active`; a Python Ice client creates a Glacier2 session
through the router (Glacier2/NullPermissionsVerifier); `server pid` names the router's process;
`server properties` and `server property` (the Properties facet of the admin object, reached
through the node) return the descriptor's values; `server stop` returns within 20 s, the process
is gone, the node saw it end with exit status 0, through the Process proxy (Process::shutdown,
not SIGTERM), and the state is `inactive`. The same checks pass with `--router glacier2`
(/usr/bin/glacier2router deployed instead). One line per check, `PASS|FAIL`; exit status 1 if
any failed. Every wait is bounded; the node is stopped with `node shutdown`, then SIGTERM, then
SIGKILL, by PID (it stops the server it started); the temporary directory is removed unless
--keep. Run time: about 1 s (about 35 s when the router does not register).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "interop"))
import Ice  # noqa: E402
import harness  # noqa: E402  (before Glacier2: see harness._import_glacier2; wait_until)
import Glacier2  # noqa: E402
import ports  # noqa: E402

HOST = "127.0.0.1"
SERVER_ID = "router"
NODE = "node1"


class Abort(Exception):
    """A check the later ones depend on failed."""


def write_properties(path, props):
    with open(path, "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in sorted(props.items())))


def descriptor(exe, props):
    """The application: one node, one manually activated server running `exe`."""
    lines = ['<icegrid>',
             '  <application name="moraine-icegrid-test">',
             '    <node name="%s">' % NODE,
             '      <server id="%s" exe="%s" activation="manual" activation-timeout="15"'
             ' deactivation-timeout="15"%s>' % (SERVER_ID, exe, ' user="root"' if os.geteuid() == 0 else "")]
    lines += ['        <property name="%s" value="%s"/>' % kv for kv in sorted(props.items())]
    lines += ['      </server>', '    </node>', '  </application>', '</icegrid>']
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--router", choices=["moraine", "glacier2"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, data)")
    a = ap.parse_args()
    exe = os.path.abspath(a.moraine_bin) if a.router == "moraine" else "/usr/bin/glacier2router"
    failures = []
    started = time.monotonic()

    def check(name, ok, detail=""):
        print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail.strip()) if detail and not ok else ""),
              flush=True)
        if not ok:
            failures.append(name)
        return ok

    tmp = tempfile.mkdtemp(prefix="moraine-icegrid-")
    registry_port, client_port = ports.free_port(HOST), ports.free_port(HOST)
    locator = "IceGrid/Locator:tcp -h %s -p %d" % (HOST, registry_port)
    for d in ("registry", "node", "output"):
        os.mkdir(os.path.join(tmp, d))
    node_cfg = os.path.join(tmp, "node.cfg")
    write_properties(node_cfg, {
        "Ice.Default.Locator": locator,
        "IceGrid.InstanceName": "IceGrid",
        "IceGrid.Registry.Client.Endpoints": "tcp -h %s -p %d" % (HOST, registry_port),
        "IceGrid.Registry.Server.Endpoints": "tcp -h %s" % HOST,
        "IceGrid.Registry.Internal.Endpoints": "tcp -h %s" % HOST,
        "IceGrid.Registry.LMDB.Path": os.path.join(tmp, "registry"),
        "IceGrid.Registry.LMDB.MapSize": "16",
        "IceGrid.Registry.PermissionsVerifier": "IceGrid/NullPermissionsVerifier",
        "IceGrid.Registry.AdminPermissionsVerifier": "IceGrid/NullPermissionsVerifier",
        "IceGrid.Registry.DefaultTemplates": "",
        "IceGrid.Node.Name": NODE,
        "IceGrid.Node.Endpoints": "tcp -h %s" % HOST,
        "IceGrid.Node.Data": os.path.join(tmp, "node"),
        "IceGrid.Node.CollocateRegistry": "1",
        # Run as root (a container), icegridnode runs a server without `user` as "nobody", who cannot
        # read the temporary directory: the descriptor names root, which this allows.
        "IceGrid.Node.AllowRunningServersAsRoot": "1" if os.geteuid() == 0 else "0",
        "IceGrid.Node.Output": os.path.join(tmp, "output"),
        "IceGrid.Node.Trace.Activator": "2",
        "IceGrid.Node.Trace.Server": "1",
    })
    admin_cfg = os.path.join(tmp, "admin.cfg")
    write_properties(admin_cfg, {"Ice.Default.Locator": locator})
    router_props = {
        "Glacier2.InstanceName": "Glacier2",
        "Glacier2.Client.Endpoints": "tcp -h %s -p %d" % (HOST, client_port),
        "Glacier2.PermissionsVerifier": "Glacier2/NullPermissionsVerifier",
        "Glacier2.SessionTimeout": "30",
    }
    app_xml = os.path.join(tmp, "application.xml")
    with open(app_xml, "w") as f:
        f.write(descriptor(exe, router_props))
    node_log_path = os.path.join(tmp, "node.log")
    node_log = open(node_log_path, "w")
    node = subprocess.Popen(["/usr/bin/icegridnode", "--Ice.Config=" + node_cfg], stdout=node_log,
                            stderr=subprocess.STDOUT, cwd=tmp)
    router_pid = None

    def node_output():
        with open(node_log_path) as f:
            return f.read()

    def router_output():
        out = ""
        for name in sorted(os.listdir(os.path.join(tmp, "output"))):
            with open(os.path.join(tmp, "output", name)) as f:
                out += "[%s] %s" % (name, f.read())
        return out

    def admin(command, timeout=20):
        """Runs one icegridadmin command; returns (exit status or None on timeout, output)."""
        try:
            p = subprocess.run(["/usr/bin/icegridadmin", "--Ice.Config=" + admin_cfg, "-u", "test", "-p", "test",
                                "-e", command], capture_output=True, text=True, timeout=timeout, cwd=tmp)
            return p.returncode, (p.stdout + p.stderr).strip()
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"") + (e.stderr or b"")
            return None, "timed out after %d s: %s" % (timeout, out.decode(errors="replace") if out else "")

    def wait_for(pred, timeout, interval=0.1):
        return harness.wait_until(pred, timeout, interval)

    try:
        up = wait_for(lambda: node.poll() is not None or admin("node ping %s" % NODE, 5)[1].endswith("node is up"),
                      15, 0.2) and node.poll() is None
        if not check("icegridnode with a collocated registry comes up", up, node_output()[-600:]):
            raise Abort()
        rc, out = admin("application add '%s'" % app_xml)
        if not check("application add", rc == 0, out):
            raise Abort()

        t0 = time.monotonic()
        rc, out = admin("server start %s" % SERVER_ID, 25)
        took = time.monotonic() - t0
        check("server start returns within 20 s (%.1f s)" % took, rc == 0 and took <= 20,
              "exit %s: %s\n%s\n%s" % (rc, out, node_output()[-800:], router_output()[-800:]))
        state = admin("server state %s" % SERVER_ID, 5)[1]
        check("server state is active", state.startswith("active"), state)

        # A Glacier2 session through the router IceGrid started.
        communicator = Ice.initialize(["--Ice.Override.Timeout=5000", "--Ice.Default.Router=Glacier2/router:tcp -h %s -p %d"
                                       % (HOST, client_port)])
        try:
            session_ok, detail = False, ""
            try:
                router = Glacier2.RouterPrx.checkedCast(communicator.getDefaultRouter())
                router.createSession("icegrid", "test")
                router.refreshSession()  # SessionNotExistException without a session
                router.destroySession()
                session_ok = True
            except Ice.Exception as e:
                detail = str(e)
            check("a Glacier2 session through the deployed router", session_ok, detail)
        finally:
            communicator.destroy()

        rc, out = admin("server pid %s" % SERVER_ID, 5)
        pid_ok = rc == 0 and out.isdigit()
        if pid_ok:
            router_pid = int(out)
            try:
                pid_ok = os.path.realpath("/proc/%d/exe" % router_pid) == os.path.realpath(exe)
            except OSError as e:
                pid_ok, out = False, str(e)
        check("server pid names the router's process", pid_ok, out)

        rc, out = admin("server properties %s" % SERVER_ID, 10)
        expected = ["%s=%s" % kv for kv in router_props.items()] + ["Ice.Admin.ServerId=%s" % SERVER_ID]
        missing = [e for e in expected if e not in out.splitlines()]
        check("server properties (the Properties facet) lists the descriptor's properties", rc == 0 and not missing,
              "exit %s, missing %s: %s" % (rc, missing, out[-600:]))
        rc, out = admin("server property %s Glacier2.InstanceName" % SERVER_ID, 10)
        check("server property Glacier2.InstanceName", rc == 0 and out == "Glacier2", "exit %s: %s" % (rc, out))

        t0 = time.monotonic()
        rc, out = admin("server stop %s" % SERVER_ID, 25)
        took = time.monotonic() - t0
        check("server stop returns within 20 s (%.1f s)" % took, rc == 0 and took <= 20, "exit %s: %s" % (rc, out))
        gone = router_pid is not None and wait_for(lambda: not os.path.exists("/proc/%d" % router_pid), 5)
        check("the router process is gone", gone, "pid %s" % router_pid)
        log = wait_for(lambda: ("detected termination of server `%s'" % SERVER_ID) in node_output() and node_output(), 5)
        # The trace: "detected termination of server `ID'", then "exit code = N" or "signal = S" unless 0.
        ended = re.split(r"\n(?=-- |!! )", (log or "").split("detected termination of server `%s'" % SERVER_ID)[-1])[0]
        check("the node saw the router exit with status 0",
              bool(log) and "exit code =" not in ended and "signal =" not in ended, ended or node_output()[-600:])
        check("the node stopped it through its Process proxy (Process::shutdown), not a signal",
              ("deactivating `%s' using process proxy" % SERVER_ID) in node_output(),
              "\n".join(l for l in node_output().splitlines() if "deactivating" in l) or node_output()[-600:])
        state = wait_for(lambda: admin("server state %s" % SERVER_ID, 5)[1].startswith("inactive")
                         and "inactive", 5, 0.2)
        check("server state is inactive", bool(state), admin("server state %s" % SERVER_ID, 5)[1])
    except Abort:
        pass
    finally:
        admin("node shutdown %s" % NODE, 10)
        try:
            node.wait(timeout=10)
        except subprocess.TimeoutExpired:
            node.send_signal(signal.SIGTERM)
            try:
                node.wait(timeout=10)
            except subprocess.TimeoutExpired:
                node.send_signal(signal.SIGKILL)
                node.wait()
        # The node stops the servers it started; a router it left behind (it was killed) is ours to stop.
        if router_pid is not None and os.path.exists("/proc/%d" % router_pid):
            try:
                if os.path.realpath("/proc/%d/exe" % router_pid) == os.path.realpath(exe):
                    os.kill(router_pid, signal.SIGKILL)
            except OSError:
                pass
        node_log.close()
        if failures:
            print("--- node log (tail)\n%s\n--- router output (tail)\n%s"
                  % (node_output()[-1500:], router_output()[-1500:]), flush=True)
        if a.keep:
            print("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("icegrid deploy (%s): %s in %.1f s" % (a.router, "all passed" if not failures else "%d failed" % len(failures),
                                                 time.monotonic() - started))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
