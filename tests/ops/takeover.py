#!/usr/bin/python3
"""Live upgrade, phase 1: `moraine-router --takeover PATH` takes the listening sockets over.

  /usr/bin/python3 tests/ops/takeover.py [--moraine-bin build/bin/moraine-router] [--keep]

All on loopback, with tests/interop/harness.py (the Python Demo back end, real Ice 3.7 clients).
One property file serves both routers: client endpoints tcp, ws, ssl and wss (certificates from
tests/interop/tls_certs.py), a server endpoint, the topic service (TopicManager, Publish) with a
topic database, /metrics, Moraine.Takeover.Socket and a short Moraine.Takeover.DrainTimeout (4 s).

  1. router A (2 shards) starts; sessions S1 (tcp) and S2 (ssl) are created on it, each with its
     callback object subscribed to a topic of A's own topic service (which keeps a database),
     and S3 (ssl), not subscribed. S1 moves to B with the topic service and its database; S2
     and S3 stay with A (TLS sessions do not move), and S2 gets its events from B's topic
     service through A (docs/takeover.md "Sessions that stay");
  2. a loop opens connections without a pause (tcp: connect + Ice validate connection; of every
     ten, one each on ws, ssl and wss: handshake + validate) and counts every refusal or failure;
  3. router B (3 shards) starts with --takeover: it must log that it accepts on all 15 sockets
     (7 endpoints x 2 shards + /metrics); A must log the handover;
  4. new sessions all land on B (Glacier2.Trace.Session lines); A moves S1; 3 events published
     to B's topic service reach S1 (in B) and S2 (in A) once each; S1, S2 and S3 keep calling;
     S2 destroys its session;
  5. A closes S3 at its drain deadline and exits 0 by itself, having closed one session there;
     the loop is stopped: 0 refused, 0 failed;
  6. B keeps serving: a new session, /metrics, and its topic service, which opened the
     database A closed once its catalog went, serves A's topic;
  7. a router whose configuration names another client port asks B for a takeover: it exits 1
     saying which endpoint differs, and B goes on serving;
  8. garbage, another format version and a hello carrying descriptors, sent to B's takeover
     socket, are each refused with a message; B's descriptor count is unchanged; B still
     serves a new session; B exits 0 on SIGTERM;
  9. router D with a topic database; E, the same listeners but a database directory that does
     not exist, takes the sockets but cannot start: E refuses and exits 1, D serves on;
 10. router G with a session is taken over by H; a SIGTERM to G during its drain (60 s
     deadline) makes it close the session and exit 0 at once.

Prints PASS with the figures, or FAIL with the reason (logs kept), and exits 0 or 1.
Every process is stopped by PID; each wait is bounded.
"""
import argparse
import os
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
import Glacier2  # noqa: E402,F401  (after harness: see harness._import_glacier2)
import Ice  # noqa: E402
import IceStorm  # noqa: E402
import tls_certs  # noqa: E402  (tests/interop/tls_certs.py: the project's test PKI)
from routed_client import RoutedClient, log_text  # noqa: E402

Demo = H.Demo
DRAIN_MS = 4000
# Client endpoints tcp, ws, ssl and wss, a server endpoint, TopicManager and Publish on 2 shards,
# and /metrics.
SOCKETS = 7 * 2 + 1


def wait_log(proc, needle, timeout):
    """True once `needle` is in proc's log (False after `timeout` s or if proc exited first)."""
    return H.wait_until(lambda: needle in log_text(proc) or not proc.alive(), timeout) and needle in log_text(proc)


class Client(RoutedClient):
    def where(self, routers):
        return self.traced_by(routers)


class TlsClient(Client):
    """A client whose session is on the ssl client endpoint: TLS sessions do not move (phase 2a),
    so they show the drain of what stays with the old router."""

    def __init__(self, env, proxy, hello, certs):
        self.ic = env.communicator(extra={"Ice.Default.Router": proxy, "Ice.Plugin.IceSSL": "IceSSL:createIceSSL",
                                          "IceSSL.DefaultDir": certs, "IceSSL.CAs": "ca.pem"})
        self.router = Glacier2.RouterPrx.checkedCast(self.ic.getDefaultRouter())
        self.hello = Demo.HelloPrx.uncheckedCast(self.ic.stringToProxy(hello))
        self.category = None


def publish(env, tm_proxy, n):
    """Publishes n pings to topic `takeover` through its publisher at tm_proxy's topic service,
    twoway, with a communicator of its own (no router). @return the messages."""
    messages = ["event %d after the takeover" % i for i in range(n)]
    with env.communicator() as ic:
        tm = IceStorm.TopicManagerPrx.checkedCast(ic.stringToProxy(tm_proxy))
        publisher = Demo.CallbackPrx.uncheckedCast(tm.retrieve("takeover").getPublisher())
        for m in messages:
            publisher.ping(m)
    return messages


def subscribe_callback(client, tm_proxy):
    """Subscribes a callback object of `client`'s session to topic `takeover` of the router's own
    topic service (routed through the router)."""
    adapter = client.ic.createObjectAdapterWithRouter("Subscriber", client.router)
    client.events = CallbackI()
    subscriber = adapter.add(client.events, Ice.Identity("sub", client.category))
    adapter.activate()
    tm = IceStorm.TopicManagerPrx.checkedCast(client.ic.stringToProxy(tm_proxy))
    try:
        topic = tm.retrieve("takeover")
    except IceStorm.NoSuchTopic:
        topic = tm.create("takeover")
    topic.subscribeAndGetPublisher({}, subscriber)


class CallbackI(Demo.Callback):
    """Counts the events it receives."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = []

    def ping(self, msg, current):
        with self.lock:
            self.got.append(msg)

    def received(self):
        with self.lock:
            return list(self.got)


class Hammer(threading.Thread):
    """Opens connections back to back until stopped: tcp (validate connection read); of every ten,
    one on ws, one on ssl, one on wss (the handshake, then the validate connection). Counts
    attempts, refusals and other failures (with the first few reasons)."""

    def __init__(self, ports, tls):
        super().__init__(daemon=True)
        self.ports, self.tls = ports, tls
        self.attempts = self.refused = self.failed = 0
        self.reasons = []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            self.attempts += 1
            try:
                kind = {0: "ws", 3: "ssl", 6: "wss"}.get(self.attempts % 10, "tcp")
                port = self.ports["client" if kind == "tcp" else kind]
                H.probe(port, kind, timeout=3.0, tls=self.tls)
            except ConnectionRefusedError as e:
                self.refused += 1
                self.reasons.append("refused: %s" % e)
            except (OSError, H.Failure) as e:
                self.failed += 1
                self.reasons.append("%s: %s" % (type(e).__name__, e))

    def stop(self):
        self.stopping.set()
        self.join(10)


FORMAT = 3  # the takeover format version moraine-router speaks (docs/takeover.md "Wire format")


def takeover_message(version, mtype, body=b""):
    return b"MRTK" + struct.pack("<HB", version, mtype) + body


def ask_raw(path, data, fds=()):
    """Sends one message to a takeover socket and returns the answer's bytes (b"" if closed)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(10)
        s.connect(path)
        if fds:
            socket.send_fds(s, [data], list(fds))
        else:
            s.send(data)
        return s.recv(65536)


def refusal_reason(answer):
    """The reason of a refusal message (type 5), or raises Failure."""
    H.check(answer[:4] == b"MRTK" and len(answer) >= 11 and answer[6] == 5,
            "expected a refusal from the takeover socket, got %r" % answer[:40])
    n = struct.unpack("<I", answer[7:11])[0]
    return answer[11:11 + n].decode(errors="replace")


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def missing_store_refused(env, hello):
    """Router D with a topic database; E takes over with the same listeners but a database
    directory that does not exist, so it cannot start: E must exit 1 after refusing, D must serve
    on. (A database that D holds does not stop E: it waits for it, docs/takeover.md.)"""
    ports = {k: H.free_port() for k in ("client", "tm", "pub")}
    store = os.path.join(env.dir, "store")
    os.mkdir(store)
    sock_path = os.path.join(env.dir, "takeover-d.sock")
    props = {
        "Glacier2.InstanceName": "Glacier2",
        "Glacier2.Client.Endpoints": H.endpoint(ports["client"]),
        "Glacier2.CryptPasswords": env.passwords,
        "IceStorm.InstanceName": "IceStorm",
        "IceStorm.TopicManager.Endpoints": H.endpoint(ports["tm"]),
        "IceStorm.Publish.Endpoints": H.endpoint(ports["pub"]),
        "IceStorm.Transient": "0",
        "IceStorm.LMDB.Path": store,
        "Moraine.Takeover.Socket": sock_path,
    }
    cfg = os.path.join(env.dir, "router-store.cfg")
    H.write_properties(cfg, props)
    e_cfg = os.path.join(env.dir, "router-store-missing.cfg")
    H.write_properties(e_cfg, dict(props, **{"IceStorm.LMDB.Path": os.path.join(env.dir, "no-such-dir")}))
    d = env.start_ready("router-D", [env.moraine_bin, "--threads", "1", "--ice-config", cfg],
                        [(ports["client"], "Glacier2.Client.Endpoints")])
    e = env.start("router-E", [env.moraine_bin, "--threads", "1", "--ice-config", e_cfg, "--takeover", sock_path])
    try:
        rc = e.popen.wait(15)
    except Exception:  # noqa: BLE001  (still running is the failure)
        rc = None
    e_log = log_text(e)
    e.stop()
    env.procs.remove(e)
    H.check(rc == 1 and "takeover refused, the running router goes on serving: cannot start" in e_log
            and "does not exist" in e_log,
            "router E (no topic database directory): exit status %s, log: %s" % (rc, e_log.strip()[-500:]))
    H.check(wait_log(d, "refused the listening sockets: the new router cannot start", 5),
            "router D did not log E's refusal%s" % d.log_tail())
    c = Client(env, "Glacier2/router:" + H.endpoint(ports["client"]), hello)
    try:
        c.open()
    finally:
        c.close()
    return ("a router that cannot open its topic database (no such directory) refused the takeover (exit 1);"
            " the running one served on")


def sigterm_cuts_drain(env, hello):
    """Router G (default takeover deadline, 60 s) with a session; H takes over; a SIGTERM to G
    during its drain must make it close the session gracefully and exit 0 at once."""
    port = H.free_port()
    sock_path = os.path.join(env.dir, "takeover-g.sock")
    props = {
        "Glacier2.InstanceName": "Glacier2",
        "Glacier2.Client.Endpoints": H.endpoint(port),
        "Glacier2.CryptPasswords": env.passwords,
        "Moraine.Takeover.Socket": sock_path,
    }
    cfg = os.path.join(env.dir, "router-sigterm.cfg")
    H.write_properties(cfg, props)
    ready = [(port, "Glacier2.Client.Endpoints")]
    g = env.start_ready("router-G", [env.moraine_bin, "--threads", "1", "--ice-config", cfg], ready)
    c = Client(env, "Glacier2/router:" + H.endpoint(port), hello)
    try:
        c.open()
        h = env.start("router-H", [env.moraine_bin, "--threads", "1", "--ice-config", cfg, "--takeover", sock_path])
        H.check(wait_log(g, "takeover: serving 1 session(s) until they end, for at most 60000 ms", 15),
                "router G did not begin its drain%s" % g.log_tail())
        t0 = time.monotonic()
        g.popen.terminate()
        try:
            rc = g.popen.wait(10)
        except Exception:  # noqa: BLE001  (still running is the failure)
            rc = None
        took = time.monotonic() - t0
        g_log = log_text(g)
        env.procs.remove(g)
        g.log.close()
        H.check(rc == 0 and "signal 15: closing the remaining sessions now" in g_log,
                "router G after SIGTERM in its drain: exit status %s, log: %s" % (rc, g_log.strip()[-500:]))
        H.check(h.alive(), "router H exited%s" % h.log_tail())
    finally:
        c.close()
    return "SIGTERM during the drain after a takeover: the old router closed its session and exited 0 in %.2f s" % took


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin), keep=args.keep)
    watchdog = env.start_watchdog(170)
    clients = []
    hammer = None
    ok = False
    name = "takeover (a second moraine-router takes the listening sockets over)"
    try:
        hello = env.hello_proxy()
        ports = {k: H.free_port() for k in ("client", "ws", "ssl", "wss", "server", "tm", "pub", "metrics", "other")}
        sock_path = os.path.join(env.dir, "takeover.sock")
        store = os.path.join(env.dir, "topics-db")
        os.mkdir(store)
        certs = tls_certs.make(os.path.join(env.dir, "certs"))
        tls = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.path.join(certs, "ca.pem"))

        def client_endpoints(tcp_port):
            return ":".join([H.endpoint(tcp_port), H.endpoint(ports["ws"], "ws"), H.endpoint(ports["ssl"], "ssl"),
                             H.endpoint(ports["wss"], "wss")])

        props = {
            "Glacier2.InstanceName": "Glacier2",
            "Glacier2.Client.Endpoints": client_endpoints(ports["client"]),
            "IceSSL.DefaultDir": certs,
            "IceSSL.CAs": "ca.pem",
            "IceSSL.CertFile": "server.pem",
            "IceSSL.KeyFile": "server_key.pem",
            "IceSSL.VerifyPeer": "0",
            "Glacier2.Server.Endpoints": H.endpoint(ports["server"]),
            "Glacier2.Trace.Session": "1",
            "Glacier2.CryptPasswords": env.passwords,
            "Glacier2.SessionTimeout": "30",
            "IceStorm.InstanceName": "IceStorm",
            "IceStorm.TopicManager.Endpoints": H.endpoint(ports["tm"]),
            "IceStorm.Publish.Endpoints": H.endpoint(ports["pub"]),
            "IceStorm.Transient": "0",
            "IceStorm.LMDB.Path": store,
            "Moraine.Metrics.Listen": "127.0.0.1:%d" % ports["metrics"],
            "Moraine.Takeover.Socket": sock_path,
            "Moraine.Takeover.DrainTimeout": str(DRAIN_MS),
        }
        cfg = os.path.join(env.dir, "router.cfg")
        H.write_properties(cfg, props)
        ready = [(ports["client"], "Glacier2.Client.Endpoints"), (ports["tm"], "IceStorm.TopicManager.Endpoints")]

        # 1. Router A with two sessions.
        a = env.start_ready("router-A", [env.moraine_bin, "--threads", "2", "--ice-config", cfg], ready)
        proxy = "Glacier2/router:" + H.endpoint(ports["client"])
        tls_proxy = "Glacier2/router:" + H.endpoint(ports["ssl"], "ssl")
        s1, s2, s3 = Client(env, proxy, hello), TlsClient(env, tls_proxy, hello, certs), TlsClient(env, tls_proxy, hello, certs)
        clients += [s1, s2, s3]
        s1.open()
        s2.open()
        s3.open()
        for s in (s1, s2):
            subscribe_callback(s, "IceStorm/TopicManager:" + H.endpoint(ports["tm"]))
        H.check(os.stat(sock_path).st_mode & 0o777 == 0o600, "the takeover socket is not mode 0600")

        # 2. Connections back to back, through the takeover.
        hammer = Hammer(ports, tls)
        hammer.start()
        time.sleep(0.5)

        # 3. B takes over.
        t0 = time.monotonic()
        b = env.start("router-B", [env.moraine_bin, "--threads", "3", "--ice-config", cfg, "--takeover", sock_path])
        H.check(wait_log(b, "takeover: accepting on %d listening socket(s)" % SOCKETS, 15),
                "router B did not take the %d sockets over%s" % (SOCKETS, b.log_tail()))
        t_taken = time.monotonic() - t0
        H.check(wait_log(a, "takeover: handed %d listening socket(s) over" % SOCKETS, 5),
                "router A did not log the handover%s" % a.log_tail())
        report = ["B took over %d listening sockets (client tcp, ws, ssl, wss, server, TopicManager, Publish on 2"
                  " shards; /metrics) %.0f ms after it started" % (SOCKETS, t_taken * 1e3)]

        # 4. New sessions land on B; S1 and S2 still work through A.
        fresh = []
        for _ in range(8):
            c = Client(env, proxy, hello)
            clients.append(c)
            fresh.append(c)
            c.open()
        routers = {"A": a, "B": b}
        time.sleep(0.2)  # trace lines are read through the file system
        places = [c.where(routers) for c in fresh]
        H.check(all(p == ["B"] for p in places), "new sessions after the takeover: %s, expected all on B" % places)
        H.check(all(s.where(routers) == ["A"] for s in (s1, s2, s3)), "S1, S2 and S3 were not created on A")
        # The topic service follows its subscribed sessions that move (S1): once it has, S1 is in B.
        H.check(wait_log(a, "takeover: moved the topic service to pid", 10),
                "router A did not move its topic service%s" % a.log_tail())
        H.check(wait_log(a, "subscribed session(s) stay here; the new router delivers their events through", 10),
                "router A did not say how the subscribed session that stays gets its events%s" % a.log_tail())
        published = publish(env, "IceStorm/TopicManager:" + H.endpoint(ports["tm"]), 3)
        H.check(H.wait_until(lambda: all(len([m for m in s.events.received() if m in published]) == 3
                                         for s in (s1, s2)), 5),
                "events published through B: S1 (moved) got %s, S2 (stayed in A) got %s of %s"
                % (s1.events.received(), s2.events.received(), published))
        for s in (s1, s2, s3):
            s.hello.sayHello("during the drain")
        s2.router.destroySession()
        report.append("8 new sessions all on B; S1 (tcp, subscribed) moved to B, S2 (ssl, subscribed) and S3 (ssl)"
                      " stayed on A; 3 events published through B's topic service reached S1 in B and S2 in A, once"
                      " each; all kept calling, then S2 ended its session")

        # 5. A closes S1 at the deadline and exits 0.
        time.sleep(1.0)
        s3.hello.sayHello("still on A, before the deadline")
        try:
            rc = a.popen.wait(DRAIN_MS / 1000.0 + 10)
        except Exception:  # noqa: BLE001  (subprocess.TimeoutExpired: still running is the failure)
            rc = None
        t_exit = time.monotonic() - t0
        H.check(rc == 0, "router A: exit status %s after the drain, expected 0%s" % (rc, a.log_tail()))
        a_log = log_text(a)
        env.procs.remove(a)  # its exit is the test's doing
        a.log.close()
        H.check("closing the other 1 gracefully" in a_log and "takeover: moved 1 session(s)" in a_log,
                "router A did not log its drain as expected (S1 moved, S3 closed):%s" % a_log[-800:])
        time.sleep(0.3)
        hammer.stop()
        H.check(hammer.attempts > 50, "only %d connection attempts" % hammer.attempts)
        H.check(hammer.refused == 0 and hammer.failed == 0,
                "%d of %d connections refused, %d failed: %s" % (hammer.refused, hammer.attempts, hammer.failed,
                                                                hammer.reasons[:5]))
        report.append("A drained: S2 ended on its own, S3 closed at the %d ms deadline; A exited 0 %.1f s after the"
                      " takeover began" % (DRAIN_MS, t_exit))
        report.append("%d connections opened back to back (tcp; 1 in 10 each on ws, ssl, wss) during the takeover:"
                      " 0 refused, 0 failed" % hammer.attempts)

        # 6. B serves on: a new session, /metrics, the topic service.
        again = Client(env, proxy, hello)
        clients.append(again)
        again.open()
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % ports["metrics"], timeout=5) as r:
            H.check(r.status == 200, "/metrics answered %s" % r.status)
        # The topic service moved to B with its database, which A closed once its catalog went.
        H.check("the topic database is closed here; the new router opens it" in a_log,
                "router A did not close its topic database:%s" % a_log[-800:])
        H.check("open here; its contents came with the takeover" in log_text(b),
                "router B did not open the topic database%s" % b.log_tail())
        with env.communicator() as ic:
            tm = IceStorm.TopicManagerPrx.checkedCast(ic.stringToProxy("IceStorm/TopicManager:" + H.endpoint(ports["tm"])))
            tm.retrieve("takeover")  # A's topic: NoSuchTopic fails the test
            tm.create("after-takeover")
        report.append("after A exited, B served a new session and /metrics; its topic service, with the database A"
                      " closed, served A's topic and stored a new one")

        # 7. A mismatched configuration is refused; B serves on.
        bad_props = dict(props)
        bad_props["Glacier2.Client.Endpoints"] = client_endpoints(ports["other"])
        bad_cfg = os.path.join(env.dir, "router-bad.cfg")
        H.write_properties(bad_cfg, bad_props)
        c = env.start("router-C", [env.moraine_bin, "--ice-config", bad_cfg, "--takeover", sock_path])
        try:
            rc = c.popen.wait(15)
        except Exception:  # noqa: BLE001
            rc = None
        c_log = log_text(c)
        c.stop()
        env.procs.remove(c)
        H.check(rc == 1, "router C (mismatched endpoints): exit status %s, expected 1%s" % (rc, c_log[-600:]))
        want = "this configuration listens on Glacier2.Client 'tcp -h 127.0.0.1 -p %d " % ports["other"]
        H.check("takeover refused" in c_log and want in c_log, "router C's refusal does not say %r: %s"
                % (want, c_log.strip()[-600:]))
        H.check(wait_log(b, "takeover refused, this router goes on serving", 5),
                "router B did not log the refusal%s" % b.log_tail())
        mismatch = Client(env, proxy, hello)
        clients.append(mismatch)
        mismatch.open()
        report.append("a router with another client port was refused (exit 1, naming the endpoint); B served on")

        # 8. Bad input on B's takeover socket.
        pid = b.popen.pid
        fds_before = open_fds(pid)
        garbage = refusal_reason(ask_raw(sock_path, b"GET / HTTP/1.1\r\n\r\n"))
        H.check("MRTK" in garbage, "garbage: refusal %r" % garbage)
        future = refusal_reason(ask_raw(sock_path, takeover_message(FORMAT + 1, 1, struct.pack("<I", 0) + struct.pack("<I", 1))))
        H.check("version %d" % (FORMAT + 1) in future, "version %d: refusal %r" % (FORMAT + 1, future))
        r, w = os.pipe()
        try:
            hello_v1 = takeover_message(FORMAT, 1, struct.pack("<I", 1) + b"x" + struct.pack("<I", 1))
            stray = refusal_reason(ask_raw(sock_path, hello_v1, fds=(r, w, r)))
        finally:
            os.close(r)
            os.close(w)
        H.check("descriptors" in stray, "a hello with descriptors: refusal %r" % stray)
        truncated = refusal_reason(ask_raw(sock_path, hello_v1[:-2]))
        H.check("truncated" in truncated, "a truncated hello: refusal %r" % truncated)
        H.check(H.wait_until(lambda: open_fds(pid) == fds_before, 3.0),
                "router B's descriptors: %d before the bad input, %d after" % (fds_before, open_fds(pid)))
        last = Client(env, proxy, hello)
        clients.append(last)
        last.open()
        report.append("garbage, version %d, a hello with 3 descriptors and a truncated hello were each refused"
                      " (%r...); B's descriptors %d before and after; B served on" % (FORMAT + 1, future[:60], fds_before))
        # 9. A new router that cannot start (the topic database is the running router's) is refused.
        report.append(missing_store_refused(env, hello))
        # 10. SIGTERM cuts the drain after a takeover short.
        report.append(sigterm_cuts_drain(env, hello))
        ok = True
        for line in report:
            print("    " + line)
    except (H.Failure, OSError, Ice.Exception) as e:
        print("FAIL %s: %s" % (name, e))
    finally:
        if hammer is not None and hammer.is_alive():
            hammer.stop()
        for c in clients:
            c.close()
        watchdog.cancel()
    return env.finish(name, ok)  # B must exit 0 on SIGTERM


if __name__ == "__main__":
    sys.exit(main())
