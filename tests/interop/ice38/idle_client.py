"""An Ice 3.8 (Python, zeroc-ice from PyPI) Glacier2 client that goes idle: createSession, one
routed call, `--idle` seconds of nothing, then a second routed call on the same session. Prints
one JSON line: whether the connection to the router was closed while idle (and when), and how
the second call went. Run with the Python that has Ice 3.8 (scripts/ice38-setup).

Ice 3.8 closes a connection it read nothing from for 60 s (its idle check): the router must send
something (heartbeats) for the session to survive a longer idle period."""

import argparse
import json
import sys
import threading
import time

import Ice
import Glacier2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--router", required=True, help="router proxy, e.g. Glacier2/router:tcp -h 127.0.0.1 -p 4063")
    ap.add_argument("--target", required=True, help="a back-end proxy to ice_ping through the router")
    ap.add_argument("--user", default="alice")
    ap.add_argument("--password", default="secret")
    ap.add_argument("--idle", type=float, default=75.0)
    a = ap.parse_args()
    out = {"ice": None, "session": False, "first_call": None, "closed_at": None, "second_call": None}
    init = Ice.InitializationData()
    init.properties = Ice.createProperties()
    init.properties.setProperty("Ice.Default.Router", a.router)
    init.properties.setProperty("Ice.RetryIntervals", "-1")  # a lost session must show, not be retried away
    with Ice.initialize(initData=init) as ic:
        out["ice"] = Ice.stringVersion()
        router = Glacier2.RouterPrx.checkedCast(ic.getDefaultRouter())
        router.createSession(a.user, a.password)
        out["session"] = True
        target = ic.stringToProxy(a.target)
        target.ice_ping()
        out["first_call"] = "ok"
        t0 = time.monotonic()
        closed = threading.Event()

        def on_close(_conn):
            out["closed_at"] = round(time.monotonic() - t0, 3)
            closed.set()

        router.ice_getCachedConnection().setCloseCallback(on_close)
        closed.wait(a.idle)
        remaining = a.idle - (time.monotonic() - t0)
        if remaining > 0:
            time.sleep(remaining)
        try:
            target.ice_ping()
            out["second_call"] = "ok"
        except Ice.Exception as e:
            out["second_call"] = type(e).__name__
        print(json.dumps(out), flush=True)  # before the communicator's destruction closes the connection
    return 0


if __name__ == "__main__":
    sys.exit(main())
