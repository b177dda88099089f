#!/usr/bin/python3
"""The Ice admin object of a router started with the upstream test scripts' endpoint style, with
a real Ice 3.7 client (Python): what icegridnode and Ice's admin tools call.

  /usr/bin/python3 tests/ops/admin_object.py [--router moraine|glacier2]
                                             [--moraine-bin build/bin/moraine-router]

The router gets `Glacier2.Server.Endpoints=tcp` (no host, no port), `Ice.Default.Host=127.0.0.1`
and `Ice.Admin.Endpoints=tcp -p PORT`, `Ice.Admin.InstanceName=Glacier2`. Checks, in order:
every socket the router listens on is bound to 127.0.0.1 (Ice.Default.Host), not to every
interface; `Glacier2/admin -f Process` and `-f Properties` answer ice_isA; getProperty and
getPropertiesForPrefix return the file's values; setProperties changes what getProperty returns
(and Moraine reloads, as on SIGHUP); writeMessage reaches stdout; Process::shutdown makes the
router exit 0 within 10 s. The same checks pass against glacier2router (--router glacier2).
One line per check, `PASS|FAIL`; exit status 1 if any failed. Bounded: 30 s.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "interop"))
import Ice  # noqa: E402
import ports  # noqa: E402

HOST = "127.0.0.1"


def listening_addresses(pid):
    """The local addresses of the TCP sockets `pid` listens on (its socket inodes, matched
    against ports.listening_sockets)."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return [(ip, port) for ip, port, inode in ports.listening_sockets() if inode in inodes]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--router", choices=["moraine", "glacier2"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(REPO, "build", "bin", "moraine-router"))
    a = ap.parse_args()
    failures = []

    def check(name, ok, detail=""):
        print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail and not ok else ""), flush=True)
        if not ok:
            failures.append(name)

    tmp = tempfile.mkdtemp(prefix="moraine-admin-")
    client_port, admin_port = ports.free_port(HOST), ports.free_port(HOST)
    props = {
        "Glacier2.InstanceName": "Glacier2",
        "Glacier2.Client.Endpoints": "tcp -p %d" % client_port,
        "Glacier2.Server.Endpoints": "tcp",
        "Glacier2.PermissionsVerifier": "Glacier2/NullPermissionsVerifier",
        "Glacier2.SessionTimeout": "30",
        "Ice.Default.Host": HOST,
        "Ice.Admin.Endpoints": "tcp -p %d" % admin_port,
        "Ice.Admin.InstanceName": "Glacier2",
    }
    cfg = os.path.join(tmp, "router.cfg")
    with open(cfg, "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in sorted(props.items())))
    cmd = ([a.moraine_bin, "--Ice.Config=" + cfg] if a.router == "moraine"
           else ["/usr/bin/glacier2router", "--Ice.Config=" + cfg])
    out_path = os.path.join(tmp, "router.out")
    out = open(out_path, "w")
    router = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    communicator = Ice.initialize(["--Ice.Override.Timeout=5000"])
    try:
        deadline = time.monotonic() + 10
        process = None
        base = "Glacier2/admin -f %%s:tcp -h %s -p %d" % (HOST, admin_port)
        while time.monotonic() < deadline and router.poll() is None:
            try:
                process = Ice.ProcessPrx.checkedCast(communicator.stringToProxy(base % "Process"))
                break
            except Ice.ConnectFailedException:
                time.sleep(0.1)
        check("router starts with Glacier2.Server.Endpoints=tcp", router.poll() is None,
              open(out_path).read()[-400:])
        check("Process facet answers ice_isA(::Ice::Process)", process is not None)
        bound = listening_addresses(router.pid) if router.poll() is None else []
        check("every listener bound to Ice.Default.Host (%s)" % HOST,
              bound and all(addr == HOST for addr, _ in bound), "listening on %s" % bound)
        check("the admin endpoint listens on its port", any(p == admin_port for _, p in bound), str(bound))
        if process is None:
            return 1
        admin = Ice.PropertiesAdminPrx.checkedCast(communicator.stringToProxy(base % "Properties"))
        check("Properties facet answers ice_isA(::Ice::PropertiesAdmin)", admin is not None)
        check("getProperty returns the file's value",
              admin.getProperty("Glacier2.SessionTimeout") == "30", admin.getProperty("Glacier2.SessionTimeout"))
        check("getProperty of an unset key is empty", admin.getProperty("Glacier2.NoSuchKey") == "")
        prefix = admin.getPropertiesForPrefix("Ice.Admin.")
        check("getPropertiesForPrefix lists Ice.Admin.*",
              prefix.get("Ice.Admin.InstanceName") == "Glacier2" and "Ice.Admin.Endpoints" in prefix, str(prefix))
        admin.setProperties({"Glacier2.Trace.Session": "1"})
        check("setProperties: getProperty returns the new value",
              admin.getProperty("Glacier2.Trace.Session") == "1", admin.getProperty("Glacier2.Trace.Session"))
        if a.router == "moraine":
            time.sleep(0.5)
            log = open(out_path).read()
            check("setProperties reloads as SIGHUP does", "reloaded" in log, log[-400:])
        process.writeMessage("admin-write-message-check", 1)
        time.sleep(0.3)
        check("writeMessage reaches the router's stdout", "admin-write-message-check" in open(out_path).read())
        t0 = time.monotonic()
        process.shutdown()
        try:
            rc = router.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
        check("Process::shutdown: the router exits 0 (%.1f s)" % (time.monotonic() - t0), rc == 0, "exit %s" % rc)
    finally:
        communicator.destroy()
        if router.poll() is None:
            router.send_signal(signal.SIGKILL)
            router.wait()
        out.close()
    print("admin object (%s): %s" % (a.router, "all passed" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
