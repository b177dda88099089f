#!/usr/bin/python3
"""An unchanged Ice 3.7 Python client that fails over between routers (tests/interop/failover.py).

  failover_client.py ROUTER-PROXY HELLO-PROXY USER PASSWORD [--Ice.Prop=value ...]
        [--before N] [--after N] [--interval-ms MS] [--wait S]

ROUTER-PROXY is set as Ice.Default.Router; with several endpoints (`Glacier2/router:tcp -p A:tcp
-p B`) Ice picks one to connect to, and after a failure tries them again. The client:

  1. createSession, a servant in the session's category on an adapter with the router, one
     twoway callback (hello.callMeBack) to it, then --before calls of hello.sayHello;
     prints `ready session=1 port=P category=C t=T` (P: the remote port of the connection
     the calls went through, from ice_getConnection().getInfo(); T: CLOCK_MONOTONIC seconds,
     which the driver shares);
  2. keeps calling sayHello every --interval-ms until a call raises (the driver kills the
     router at P meanwhile); prints `failed exc=TYPE ok_calls=N t=T`;
  3. creates a new session with the same router proxy (no new communicator, no new proxy:
     Ice connects again through the proxy's endpoints), re-creates its callback adapter under
     the new category and checks a callback; prints `session session=2 port=P category=C
     attempts=K t=T` and `callback ok t=T`;
  4. --after more sayHello calls: `call ok t=T` after the first, `calls ok n=N t=T` after all;
     destroySession, `PASS`.

With --locator PROXY, ROUTER-PROXY may be indirect (the well-known `Glacier2/router`, or
`Glacier2/router@RouterGroup`): it is first resolved through that locator (findObjectById, then
findAdapterById) into a proxy with every endpoint the registry gives, which is then the router
proxy, as above (tests/interop/router_replica_group.py). An Ice 3.7 client given the indirect
proxy itself as Ice.Default.Router routes nothing through the router: its calls go straight to
the back end, and callbacks find no adapter (observed, see router_replica_group.py).

Any other exception prints `FAIL step: reason` and exits 1. Nothing waits unbounded: Ice's
invocation and connect timeouts bound each call, --wait bounds step 2 (default 30 s).
Ice properties on the command line (--Ice.RetryIntervals=-1, --Ice.Trace.Retry=1,
--Ice.LogFile=...) override the defaults set here.
"""
import argparse
import sys
import threading
import time

import Ice

import harness  # noqa: F401  (loads Demo.ice, and imports Glacier2 safely: see harness._import_glacier2)
import Demo  # noqa: E402
import Glacier2  # noqa: E402


def say(line):
    print(line, flush=True)


class CallbackI(Demo.Callback):
    def __init__(self):
        self.got = []
        self.cond = threading.Condition()

    def ping(self, msg, current):
        with self.cond:
            self.got.append(msg)
            self.cond.notify_all()

    def wait_for(self, msg, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: msg in self.got, timeout)


def remote_port(prx):
    """The remote port of the connection prx's calls go through (for a routed proxy: the
    connection to the router)."""
    info = prx.ice_getConnection().getInfo()
    while not isinstance(info, Ice.IPConnectionInfo) and info.underlying is not None:
        info = info.underlying  # ssl, ws: the TCP connection underneath
    return info.remotePort


def open_session(ic, router, hello, user, password, tag, old_adapter=None):
    """createSession, then a callback adapter under the session's category, checked with one
    callMeBack. Returns (adapter, category)."""
    router.createSession(user, password)
    category = router.getCategoryForClient()
    if old_adapter is not None:
        old_adapter.destroy()  # bound to the lost session's category and router endpoints
    adapter = ic.createObjectAdapterWithRouter("", router)
    servant = CallbackI()
    cb = Demo.CallbackPrx.uncheckedCast(adapter.add(servant, Ice.Identity("cb", category)))
    adapter.activate()
    hello.callMeBack(cb, tag)
    if not servant.wait_for(tag, 5):
        raise RuntimeError("callback %s not received" % tag)
    return adapter, category


def resolve_router(init, router, locator):
    """`router` (indirect) with the endpoints the locator gives for it, as a string."""
    with Ice.initialize(init) as ic:
        loc = Ice.LocatorPrx.uncheckedCast(ic.stringToProxy(locator))
        prx = ic.stringToProxy(router)
        if not prx.ice_getAdapterId():
            found = loc.findObjectById(prx.ice_getIdentity())
            if found is None:
                raise RuntimeError("the locator knows no object %s" % router)
            prx = found if found.ice_getEndpoints() else prx.ice_adapterId(found.ice_getAdapterId())
        if not prx.ice_getEndpoints():
            adapter = loc.findAdapterById(prx.ice_getAdapterId())
            prx = prx.ice_endpoints(adapter.ice_getEndpoints()).ice_adapterId("")
        return ic.proxyToString(prx)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("router")
    ap.add_argument("hello")
    ap.add_argument("user")
    ap.add_argument("password")
    ap.add_argument("--before", type=int, default=5, help="calls on the first session before `ready`")
    ap.add_argument("--after", type=int, default=5, help="calls on the second session")
    ap.add_argument("--interval-ms", type=float, default=20.0, help="pause between calls while waiting for the failure")
    ap.add_argument("--wait", type=float, default=30.0, help="seconds to wait for a call to fail")
    init = Ice.InitializationData()
    init.properties = Ice.createProperties()
    for k, v in {"Ice.Warn.Connections": "0", "Ice.Default.InvocationTimeout": "5000",
                 "Ice.Override.ConnectTimeout": "3000", "Ice.Override.CloseTimeout": "3000"}.items():
        init.properties.setProperty(k, v)
    rest = init.properties.parseIceCommandLineOptions(sys.argv[1:])  # --Ice.* win over the above
    ap.add_argument("--locator", help="resolve an indirect ROUTER-PROXY through this locator first")
    args = ap.parse_args(rest)
    step = "start"
    try:
        if args.locator:
            step = "resolving the router proxy"
            args.router = resolve_router(init, args.router, args.locator)
            say("router %s" % args.router)
        init.properties.setProperty("Ice.Default.Router", args.router)
        with Ice.initialize(init) as ic:
            step = "first session"
            router = Glacier2.RouterPrx.checkedCast(ic.getDefaultRouter())
            hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy(args.hello))
            adapter, category = open_session(ic, router, hello, args.user, args.password, "ring1")
            for i in range(args.before):
                hello.sayHello("before%d" % i)
            say("ready session=1 port=%d category=%s t=%.6f" % (remote_port(hello), category, time.monotonic()))

            step = "waiting for the failure"
            ok_calls, end = 0, time.monotonic() + args.wait
            while True:
                try:
                    hello.sayHello("waiting")
                    ok_calls += 1
                except Ice.LocalException as e:
                    say("failed exc=%s ok_calls=%d t=%.6f" % (e.ice_id().lstrip(":"), ok_calls, time.monotonic()))
                    break
                if time.monotonic() > end:
                    raise RuntimeError("no call failed within %.0f s (%d calls)" % (args.wait, ok_calls))
                time.sleep(args.interval_ms / 1000.0)

            step = "second session"
            attempts = 0
            while True:
                attempts += 1
                try:
                    adapter, category = open_session(ic, router, hello, args.user, args.password, "ring2", adapter)
                    break
                except Ice.LocalException as e:
                    # Not expected (Ice tries every endpoint of the router proxy), but bounded.
                    say("attempt %d failed exc=%s t=%.6f" % (attempts, e.ice_id().lstrip(":"), time.monotonic()))
                    if attempts >= 5:
                        raise
                    time.sleep(0.2)
            t = time.monotonic()
            say("session session=2 port=%d category=%s attempts=%d t=%.6f"
                % (remote_port(hello), category, attempts, t))
            say("callback ok t=%.6f" % t)

            step = "calls on the second session"
            for i in range(args.after):
                hello.sayHello("after%d" % i)
                if i == 0:
                    say("call ok t=%.6f" % time.monotonic())
            say("calls ok n=%d t=%.6f" % (args.after, time.monotonic()))
            router.destroySession()
            adapter.destroy()
        say("PASS")
        return 0
    except Exception as e:  # noqa: BLE001  (any failure ends the client with its step)
        say("FAIL %s: %s: %s" % (step, type(e).__name__, str(e).replace("\n", " ")[:300]))
        return 1


if __name__ == "__main__":
    sys.exit(main())
