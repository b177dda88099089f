"""Trace categories: Glacier2.Client.Trace.Request / Reject, Glacier2.Server.Trace.Request,
Glacier2.Trace.RoutingTable and Glacier2.Trace.Session turn on log lines about forwarded
requests, refused requests, callbacks, routing-table additions and sessions; without them
nothing of the kind is logged. Both routers, same property files; the wording differs (Ice's
trace format for glacier2router, `[category] ...` lines for moraine-router), so the shared check
is on what the lines name (operations, identities), and moraine-router's lines are checked by
category too."""
import time

import harness as H  # noqa: F401  (before Glacier2: see harness._import_glacier2)
import Glacier2  # noqa: E402,F401
import Ice  # noqa: E402
from harness import check
from scenarios import CallbackI, callback_adapter, hello_prx, scenario, session

TRACE = {"Glacier2.Client.Trace.Request": "1", "Glacier2.Client.Trace.Reject": "1",
         "Glacier2.Server.Trace.Request": "1", "Glacier2.Trace.RoutingTable": "1", "Glacier2.Trace.Session": "1"}
OFF = {k: "0" for k in TRACE}
# Names only the traffic below uses, so they can be looked for in the router's log.
OPERATION, REFUSED, CALLBACK, USER = "sayHello", "tracerefused", "tracecb", "alice"


def traffic(env, router):
    """A session, a routed sayHello, a request refused by the identity filter and a callback."""
    with session(env, router) as (ic, prx):
        servant = CallbackI()
        cb = callback_adapter(ic, prx, servant, name=CALLBACK)
        hello = hello_prx(env, ic)
        check(hello.sayHello("trace") == "hello trace", "routed sayHello failed")
        try:
            hello_prx(env, ic, REFUSED).sayHello("x")
            check(False, "a request outside Glacier2.Filter.Identity.Accept was forwarded")
        except Ice.ObjectNotExistException:
            pass
        hello.callMeBack(cb, "trace-ring")
        check(servant.wait_for("trace-ring"), "callback not received (got %s)" % servant.got)


def router_log(router, settle=0.5):
    time.sleep(settle)  # the session's end is logged after the client's connection closes
    router.proc.log.flush()
    with open(router.proc.log_path, errors="replace") as f:
        return f.read()


@scenario
def trace_categories(env):
    """With the trace keys at 1 the router's log names the forwarded operation, the refused
    identity, the callback identity and the session's user; with them at 0 it names none of
    them. glacier2router 3.7.8 writes `created session` / `destroying session` (id, category,
    addresses), `adding proxy to routing table`, `routing`, `rejecting request: identity filter`
    and `reverse routing` entries (observed)."""
    env.backend()
    base = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
            "Glacier2.Filter.Identity.Accept": "hello"}
    logs = {}
    for name, props in (("on", TRACE), ("off", OFF)):
        router = env.router("trace-" + name, dict(base, **props))
        traffic(env, router)
        logs[name] = router_log(router)
    on, off = logs["on"], logs["off"]
    for token in (OPERATION, REFUSED, CALLBACK, USER):
        check(token in on, "trace on: %r not in the router's log" % token)
        check(token not in off, "trace off: %r in the router's log:\n%s" % (token, off[-2000:]))
    if not env.is_glacier2:
        lines = on.splitlines()

        def category(c, *parts):
            found = [l for l in lines if "[%s]" % c in l and all(p in l for p in parts)]
            check(found, "no [%s] line naming %s in:\n%s" % (c, parts, on[-3000:]))
            return found

        category("Glacier2.Client.Trace.Request", "'hello'", "'%s'" % OPERATION, "as twoway")
        category("Glacier2.Client.Trace.Reject", "'%s'" % REFUSED)
        category("Glacier2.Server.Trace.Request", CALLBACK, "'ping'")
        category("Glacier2.Trace.RoutingTable", "adding", "hello")
        category("Glacier2.Trace.Session", "created session", "'alice'")
        category("Glacier2.Trace.Session", "destroyed session", "'alice'")
        check("[Glacier2." not in off, "trace off: a trace line was logged:\n%s" % off[-2000:])
    count = sum(1 for l in on.splitlines() if any(t in l for t in (OPERATION, REFUSED, CALLBACK, USER)))
    return "on: %d log lines name the traffic; off: none" % count
