#!/usr/bin/python3
"""moraine-topics on its own (no router): a real Ice 3.7.8 subscriber and publisher use it as
they would use IceStorm. Loopback, free ports, bounded waits; stops what it started by PID.

  standalone.py --bin build/bin/moraine-topics
"""
import argparse, os, socket, subprocess, sys, threading, time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice("-I/usr/share/ice/slice " + os.path.join(HERE, "..", "interop", "Demo.ice"))
Ice.loadSlice("-I/usr/share/ice/slice /usr/share/ice/slice/IceStorm/IceStorm.ice")
import Demo, IceStorm  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        self.got, self.done = [], threading.Event()

    def tick(self, t, current):
        self.got.append(t)
        if len(self.got) == 3:
            self.done.set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-topics"))
    a = ap.parse_args()
    tm, pub = free_port(), free_port()
    proc = subprocess.Popen([a.bin, "--instance-name", "Storm", "--topic-manager", "tcp -h 127.0.0.1 -p %d" % tm,
                             "--publish", "tcp -h 127.0.0.1 -p %d" % pub])
    try:
        wait_port(tm, proc)
        wait_port(pub, proc)
        with Ice.initialize(["t", "--Ice.Warn.Connections=0"]) as ic:
            manager = IceStorm.TopicManagerPrx.checkedCast(ic.stringToProxy("Storm/TopicManager:tcp -h 127.0.0.1 -p %d" % tm))
            topic = manager.create("time")
            adapter = ic.createObjectAdapterWithEndpoints("Sub", "tcp -h 127.0.0.1")
            servant = Clock()
            sub = adapter.addWithUUID(servant).ice_oneway()
            adapter.activate()
            topic.subscribeAndGetPublisher({}, sub)
            publisher = Demo.ClockPrx.uncheckedCast(manager.retrieve("time").getPublisher().ice_oneway())
            for t in ("1", "2", "3"):
                publisher.tick(t)
            if not servant.done.wait(5) or servant.got != ["1", "2", "3"]:
                print("FAIL moraine-topics: subscriber got %s" % servant.got)
                return 1
        print("PASS moraine-topics standalone: create, subscribe, publish, 3 events in order")
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
