#!/usr/bin/python3
"""moraine-topics on its own (no router): a real Ice 3.7.8 subscriber and publisher use it as
they would use IceStorm. Loopback, free ports, bounded waits; stops what it started by PID.

  standalone.py --bin build/bin/moraine-topics [--tls | --udp]

With --tls, the same over TLS end to end: the TopicManager and Publish endpoints are ssl
(moraine-topics --config with a `tls:` section), the IceSSL subscriber listens on ssl only, so
moraine-topics delivers the events over an outgoing TLS connection, presenting its certificate.
With --udp, the same over datagrams: the Publish endpoints are tcp and udp, the publisher sends
through `getPublisher()->ice_datagram()` (its udp endpoint), and the subscriber is a datagram
proxy on a udp-only adapter, so every event crosses udp twice.
"""
import argparse, os, shutil, socket, subprocess, sys, tempfile, threading, time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice("-I/usr/share/ice/slice " + os.path.join(HERE, "..", "interop", "Demo.ice"))
Ice.loadSlice("-I/usr/share/ice/slice /usr/share/ice/slice/IceStorm/IceStorm.ice")
import Demo, IceStorm  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import tls_certs  # noqa: E402
import ports  # noqa: E402


def free_port():
    return ports.free_port("127.0.0.1")


def wait_port(port, proc, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            sys.exit("moraine-topics exited with %s" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("moraine-topics not listening on %d" % port)


class Clock(Demo.Clock):
    def __init__(self):
        self.got, self.done, self.transports = [], threading.Event(), set()

    def tick(self, t, current):
        self.got.append(t)
        self.transports.add(current.con.type() if current.con else "collocated")
        if len(self.got) == 3:
            self.done.set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-topics"))
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--udp", action="store_true")
    a = ap.parse_args()
    tm, pub = free_port(), free_port()
    proto = "ssl" if a.tls else "tcp"
    tmp = tempfile.mkdtemp(prefix="moraine-topics-")
    ice_args = ["t", "--Ice.Warn.Connections=0"]
    cmd = [a.bin, "--instance-name", "Storm", "--topic-manager", "%s -h 127.0.0.1 -p %d" % (proto, tm),
           "--publish", "%s -h 127.0.0.1 -p %d" % (proto, pub) + (":udp -h 127.0.0.1 -p %d" % pub if a.udp else "")]
    if a.tls:
        certs = tls_certs.make(os.path.join(tmp, "tls"))
        yaml = os.path.join(tmp, "topics.yaml")
        with open(yaml, "w") as f:
            f.write("tls:\n  default_dir: %s\n  cas: ca.pem\n  cert_file: server.pem\n  key_file: server_key.pem\n"
                    "  verify_peer: 2\n" % certs)
        cmd += ["--config", yaml]
        ice_args += ["--Ice.Plugin.IceSSL=IceSSL:createIceSSL", "--IceSSL.DefaultDir=" + certs, "--IceSSL.CAs=ca.pem",
                     "--IceSSL.CertFile=client_a.pem", "--IceSSL.KeyFile=client_a_key.pem", "--IceSSL.VerifyPeer=2"]
    proc = subprocess.Popen(cmd)
    try:
        wait_port(tm, proc)
        wait_port(pub, proc)
        with Ice.initialize(ice_args) as ic:
            manager = IceStorm.TopicManagerPrx.checkedCast(
                ic.stringToProxy("Storm/TopicManager:%s -h 127.0.0.1 -p %d" % (proto, tm)))
            topic = manager.create("time")
            adapter = ic.createObjectAdapterWithEndpoints("Sub", "%s -h 127.0.0.1" % ("udp" if a.udp else proto))
            servant = Clock()
            sub = adapter.addWithUUID(servant)
            sub = sub.ice_datagram() if a.udp else sub.ice_oneway()
            adapter.activate()
            topic.subscribeAndGetPublisher({}, sub)
            publisher = manager.retrieve("time").getPublisher()
            publisher = Demo.ClockPrx.uncheckedCast(publisher.ice_datagram() if a.udp else publisher.ice_oneway())
            for t in ("1", "2", "3"):
                publisher.tick(t)
            if not servant.done.wait(5) or servant.got != ["1", "2", "3"]:
                print("FAIL moraine-topics: subscriber got %s" % servant.got)
                return 1
            if a.udp and servant.transports != {"udp"}:
                print("FAIL moraine-topics: events arrived over %s, not udp" % sorted(servant.transports))
                return 1
        how = " over TLS (ssl endpoints, ssl subscriber)" if a.tls else ""
        how = " over udp (datagram publisher, datagram subscriber)" if a.udp else how
        print("PASS moraine-topics standalone%s: create, subscribe, publish, 3 events in order" % how)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
