#!/usr/bin/python3
"""A short real Ice 3.7 session through moraine-router (demo/run, until the clock demo lands).

Starts a Hello back end on loopback, then, as an unmodified Ice client using the router as its
Ice.Default.Router: creates a session (user demo/demo), calls the back end, gets a user
exception back, and receives a callback over its own router connection.
  hello_demo.py --router-endpoint "tcp -h 127.0.0.1 -p 4063"
"""
import argparse, os, socket, subprocess, sys, threading, time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice("-I/usr/share/ice/slice " + os.path.join(HERE, "Demo.ice"))
import Demo, Glacier2  # noqa: E402

BACKEND = r'''
import sys, Ice
Ice.loadSlice(sys.argv[1])
import Demo
class HelloI(Demo.Hello):
    def sayHello(self, name, current): return "hello " + name
    def fail(self, why, current): raise Demo.Boom(why)
    def note(self, msg, current): pass
    def count(self, current): return 0
    def callMeBack(self, cb, msg, current): cb.ping(msg)
with Ice.initialize(["backend"]) as ic:
    a = ic.createObjectAdapterWithEndpoints("Hello", "tcp -h 127.0.0.1 -p " + sys.argv[2])
    a.add(HelloI(), Ice.stringToIdentity("hello"))
    a.activate()
    print("ready", flush=True)
    ic.waitForShutdown()
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--router-endpoint", default="tcp -h 127.0.0.1 -p 4063")
    ap.add_argument("--user", default="demo")
    ap.add_argument("--password", default="demo")
    a = ap.parse_args()

    port = free_port()
    backend = subprocess.Popen([sys.executable, "-c", BACKEND, os.path.join(HERE, "Demo.ice"), str(port)],
                               stdout=subprocess.PIPE, text=True)
    try:
        backend.stdout.readline()
        run_client(a, port)
    finally:
        backend.terminate()
        backend.wait(5)


def run_client(a, port):
    props = ["demo", "--Ice.Default.Router=Glacier2/router:" + a.router_endpoint, "--Ice.Warn.Connections=0"]
    with Ice.initialize(props) as ic:
        t0 = time.perf_counter()
        router = Glacier2.RouterPrx.checkedCast(ic.getDefaultRouter())
        router.createSession(a.user, a.password)
        print("session created for %r in %.1f ms" % (a.user, (time.perf_counter() - t0) * 1000))
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello:tcp -h 127.0.0.1 -p %d" % port))
        t0 = time.perf_counter()
        print("back end says %r (first call, with addProxies: %.1f ms)" %
              (hello.sayHello("moraine"), (time.perf_counter() - t0) * 1000))
        try:
            hello.fail("on purpose")
        except Demo.Boom as e:
            print("user exception carried back: Demo::Boom(%r)" % e.why)
        got = threading.Event()

        class Callback(Demo.Callback):
            def ping(self, msg, current):
                print("callback from the back end through the router: %r" % msg)
                got.set()
        adapter = ic.createObjectAdapterWithRouter("callbacks", ic.getDefaultRouter())
        cb = Demo.CallbackPrx.uncheckedCast(
            adapter.add(Callback(), Ice.Identity("cb", router.getCategoryForClient())))
        adapter.activate()
        hello.callMeBack(cb, "ring")
        if not got.wait(5):
            sys.exit("no callback within 5 s")
        router.destroySession()
        print("session destroyed")


if __name__ == "__main__":
    main()
