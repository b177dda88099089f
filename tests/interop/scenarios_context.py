"""Glacier2.AddConnectionContext: what a back end learns about the client's connection. Each
scenario runs against both routers with the same property files."""

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
from harness import check
from scenarios import hello_prx, router_prx, scenario

CON_KEYS = {"_con.type", "_con.localAddress", "_con.localPort", "_con.remoteAddress", "_con.remotePort"}


def context_seen(env, props, sent):
    """The context the back end saw for one routed sayHello with context `sent`, and the
    client's own connection (local port) and the router's client port."""
    base = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30"}
    name = "ctx-" + "-".join("%s%s" % (k.split(".")[-1], v) for k, v in sorted(props.items()))
    router = env.router(name, dict(base, **props))
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        prx.createSession("alice", "secret")
        hello = hello_prx(env, ic)
        hello.sayHello("ctx", sent)
        info = prx.ice_getCachedConnection().getInfo()
        return hello.lastContext(), info.localPort, router.client_port


@scenario
def add_connection_context(env):
    """`Glacier2.AddConnectionContext=1`: a forwarded request carries `_con.type` (tcp),
    `_con.localAddress`/`_con.localPort` (the router's side: its client port) and
    `_con.remoteAddress`/`_con.remotePort` (the client's address and port), with or without
    ForwardContext; with ForwardContext=1 the client's own entries come too, and a client that
    sends its own `_con.remoteAddress` does not fool the back end. `=2` and `=0` add nothing to
    forwarded requests (glacier2router 3.7.8, observed)."""
    env.backend()
    ctx, client_port, router_port = context_seen(env, {"Glacier2.AddConnectionContext": "1"}, {"k": "v"})
    check(set(ctx) == CON_KEYS, "AddConnectionContext=1: the back end saw %s" % ctx)
    check(ctx["_con.type"] == "tcp" and ctx["_con.remoteAddress"] == "127.0.0.1" and
          ctx["_con.localAddress"] == "127.0.0.1", "AddConnectionContext=1: %s" % ctx)
    check(ctx["_con.remotePort"] == str(client_port) and ctx["_con.localPort"] == str(router_port),
          "ports: %s; the client's port is %d, the router's %d" % (ctx, client_port, router_port))
    fwd, _, _ = context_seen(env, {"Glacier2.AddConnectionContext": "1", "Glacier2.Client.ForwardContext": "1"},
                             {"k": "v", "_con.remoteAddress": "6.6.6.6"})
    check(fwd.get("k") == "v" and set(fwd) == CON_KEYS | {"k"},
          "AddConnectionContext=1 + ForwardContext=1: back end saw %s" % fwd)
    # glacier2router 3.7.8 passes the client's own `_con.remoteAddress` on (observed), so a back
    # end cannot trust it; Moraine writes the real one (README: differences from Glacier2).
    forged = fwd["_con.remoteAddress"] != "127.0.0.1"
    if not env.is_glacier2:
        check(not forged, "a client forged _con.remoteAddress through moraine-router: %s" % fwd)
    two, _, _ = context_seen(env, {"Glacier2.AddConnectionContext": "2"}, {"k": "v"})
    check(two == {}, "AddConnectionContext=2: the back end saw %s (expected nothing)" % two)
    return "=1: %s; a client's forged _con.remoteAddress %s; =2: nothing forwarded" % (
        ", ".join(sorted(ctx)), "passed on (%s)" % fwd["_con.remoteAddress"] if forged else "replaced by the real one")


@scenario
def return_client_proxy(env):
    """`Glacier2.ReturnClientProxy=1`: getClientProxy (after createSession) returns a proxy
    `dummy` at the router's client endpoint instead of nil (glacier2router 3.7.8, observed);
    with 0 it returns nil. Both routers, same property files."""
    got = {}
    for v in ("0", "1"):
        router = env.router("return-client-proxy-" + v, {"Glacier2.CryptPasswords": env.passwords,
                                                        "Glacier2.SessionTimeout": "30",
                                                        "Glacier2.ReturnClientProxy": v})
        with env.communicator(router) as ic:
            prx = router_prx(ic)
            prx.createSession("alice", "secret")
            proxy, has_table = prx.getClientProxy()
            got[v] = proxy
            check(has_table is True, "ReturnClientProxy=%s: hasRoutingTable %s" % (v, has_table))
            if v == "0":
                check(proxy is None, "ReturnClientProxy=0: getClientProxy returned %s, expected nil" % proxy)
            else:
                ports = [e.getInfo().port for e in proxy.ice_getEndpoints()] if proxy else []
                check(proxy is not None and proxy.ice_getIdentity().name == "dummy" and ports == [router.client_port],
                      "ReturnClientProxy=1: getClientProxy returned %s, expected dummy at port %d"
                      % (proxy, router.client_port))
    return "=0: nil; =1: %s" % got["1"]
