"""Glacier2.AddConnectionContext and Glacier2.ReturnClientProxy: what a back end, a permissions
verifier and a session manager learn about the client's connection and request context, and
what getClientProxy returns. Each scenario runs against both routers with the same property
files."""
import json

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
import scenarios_tls as T  # noqa: E402
from harness import Demo, check
from scenarios import hello_prx, router_prx, scenario

CON_KEYS = {"_con.type", "_con.localAddress", "_con.localPort", "_con.remoteAddress", "_con.remotePort"}
SSL_KEYS = CON_KEYS | {"_con.cipher", "_con.peerCert"}
# What a client sends with createSession: its own entries, one of them posing as a router entry.
CLIENT_CTX = {"k": "v", "_con.remoteAddress": "6.6.6.6", "_con.peerCert": "forged", "_con.foo": "x"}


def contexts_seen(ic, port, op, remote_port):
    """The contexts a peer's `contexts` recorder kept for calls `op` from the client whose
    connection has local port remote_port (or, without `_con.*` entries, the last such call)."""
    prx = Demo.RecorderPrx.uncheckedCast(ic.stringToProxy("contexts:" + H.endpoint(port))).ice_router(None)
    seen = [e["ctx"] for e in map(json.loads, prx.events()) if e["op"] == op]
    return [c for c in seen if c.get("_con.remotePort") == str(remote_port)] or seen[-1:]


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




@scenario
def connection_context_session_calls(env):
    """The context of createSession reaches PermissionsVerifier::checkPermissions and
    SessionManager::create without the reserved `_con.*` keys (a client's `_con.remoteAddress`
    and `_con.peerCert` are dropped, `_con.foo` kept), whatever AddConnectionContext says; with
    AddConnectionContext 1 and 2 both calls also carry the router's `_con.*` entries for the
    client's connection. A back end gets them with 1 only (glacier2router 3.7.8, observed)."""
    env.backend()
    vport, mport = env.peer("verifier"), env.peer("session_manager")
    own = {"k": "v", "_con.foo": "x"}
    for add in ("0", "1", "2"):
        router = env.router("ctx-session-calls-" + add, {
            "Glacier2.PermissionsVerifier": "verifier:" + H.endpoint(vport),
            "Glacier2.SessionManager": "manager:" + H.endpoint(mport),
            "Glacier2.SessionTimeout": "30", "Glacier2.AddConnectionContext": add})
        user = "ctxcalls" + add
        with env.communicator(router) as ic:
            prx = router_prx(ic)
            prx.createSession(user, user + "-ok", CLIENT_CTX)
            port = prx.ice_getCachedConnection().getInfo().localPort
            hello = hello_prx(env, ic)
            hello.sayHello("ctx", {"k": "v"})
            backend = hello.lastContext()
            for op, peer in (("check", vport), ("create", mport)):
                seen = contexts_seen(ic, peer, op, port)
                check(len(seen) == 1, "AddConnectionContext=%s: %s calls seen: %s" % (add, op, seen))
                ctx = seen[0]
                if add == "0":
                    check(ctx == own, "AddConnectionContext=0: %s got %s, expected %s" % (op, ctx, own))
                    continue
                check(set(ctx) == CON_KEYS | set(own) and all(ctx[k] == v for k, v in own.items()),
                      "AddConnectionContext=%s: %s got %s" % (add, op, ctx))
                check(ctx["_con.type"] == "tcp" and ctx["_con.remoteAddress"] == "127.0.0.1" and
                      ctx["_con.remotePort"] == str(port) and ctx["_con.localPort"] == str(router.client_port),
                      "AddConnectionContext=%s: %s got %s (client port %d, router port %d)"
                      % (add, op, ctx, port, router.client_port))
            expected = CON_KEYS if add == "1" else set()
            check(set(backend) == expected, "AddConnectionContext=%s: the back end saw %s" % (add, backend))
    return "=0: the client's context minus reserved keys; =1, =2: plus the 5 tcp _con.* entries"


@scenario
def connection_context_ssl(env):
    """Over ssl, AddConnectionContext adds `_con.type=ssl`, `_con.cipher` (the suite's OpenSSL
    name, as the SSLInfo cipher) and `_con.peerCert` (the client's certificate, PEM) to the
    addresses and ports: on forwarded requests with 1, and with 1 and 2 on
    SSLPermissionsVerifier::authorize and SSLSessionManager::create, which also get the
    context of createSessionFromSecureConnection (glacier2router 3.7.8, observed)."""
    c = T.certs(env)
    bport = env.backend()
    vport, mport = T.ssl_verifier_port(env), env.peer("session_manager")
    client_pem = c.pem("client_a")
    got = {}
    for add in ("1", "2"):
        props = c.ice_props("server", verify_peer=1)
        props.update({"Glacier2.SSLPermissionsVerifier": "sslverifier:" + H.endpoint(vport),
                      "Glacier2.SSLSessionManager": "sslmanager:" + H.endpoint(mport),
                      "Glacier2.SessionTimeout": "30", "Glacier2.AddConnectionContext": add})
        router = env.router("ctx-ssl-" + add, props, transport="ssl", tls=c.probe_context())
        with T.tls_client(env, router) as (ic, prx):
            prx.createSessionFromSecureConnection(CLIENT_CTX)
            port = prx.ice_getCachedConnection().getInfo().underlying.localPort
            hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello:" + H.endpoint(bport)))
            hello.sayHello("ctx", {"k": "v"})
            backend = hello.lastContext()
            for op, peer in (("authorize", vport), ("sslcreate", mport)):
                seen = contexts_seen(ic, peer, op, port)
                check(len(seen) == 1, "AddConnectionContext=%s: %s calls seen: %s" % (add, op, seen))
                ctx = seen[0]
                check(set(ctx) == SSL_KEYS | {"k", "_con.foo"} and ctx["k"] == "v",
                      "AddConnectionContext=%s: %s got keys %s" % (add, op, sorted(ctx)))
                check(ctx["_con.type"] == "ssl" and ctx["_con.peerCert"] == client_pem and
                      ctx["_con.remotePort"] == str(port) and ctx["_con.localPort"] == str(router.client_port)
                      and ctx["_con.cipher"] != "",
                      "AddConnectionContext=%s: %s got %s" % (add, op, {k: v[:40] for k, v in ctx.items()}))
                got[op] = ctx["_con.cipher"]
            if add == "1":
                check(set(backend) == SSL_KEYS, "AddConnectionContext=1: the back end saw keys %s" % sorted(backend))
                check(backend["_con.peerCert"] == client_pem and backend["_con.type"] == "ssl" and
                      backend["_con.cipher"] == got["authorize"],
                      "AddConnectionContext=1: the back end saw %s" % {k: v[:40] for k, v in backend.items()})
            else:
                check(backend == {}, "AddConnectionContext=2: the back end saw keys %s" % sorted(backend))
    return "_con.cipher=%s, _con.peerCert = the client's PEM" % got.get("authorize")



@scenario
def connection_context_wss(env):
    """Over wss, AddConnectionContext=1 gives `_con.type=wss` with addresses and ports but no
    `_con.cipher` / `_con.peerCert`, to the back end and to the session manager alike
    (glacier2router 3.7.8, observed: it reads those only from an ssl connection)."""
    c = T.certs(env)
    bport, mport = env.backend(), env.peer("session_manager")
    props = c.ice_props("server", verify_peer=1)
    props.update({"Glacier2.PermissionsVerifier": "verifier:" + H.endpoint(env.peer("verifier")),
                  "Glacier2.SessionManager": "manager:" + H.endpoint(mport),
                  "Glacier2.SessionTimeout": "30", "Glacier2.AddConnectionContext": "1"})
    router = env.router("ctx-wss", props, transport="wss", server_transport="tcp", tls=c.probe_context())
    with T.tls_client(env, router) as (ic, prx):
        prx.createSession("ctxwss", "ctxwss-ok")
        port = prx.ice_getCachedConnection().getInfo().underlying.underlying.localPort
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello:" + H.endpoint(bport)))
        hello.sayHello("ctx", {})
        backend = hello.lastContext()
        seen = contexts_seen(ic, mport, "create", port)
    for who, ctx in (("the back end", backend), ("the session manager", seen[0] if seen else {})):
        check(set(ctx) == CON_KEYS and ctx["_con.type"] == "wss" and ctx["_con.remotePort"] == str(port)
              and ctx["_con.localPort"] == str(router.client_port), "wss: %s saw %s" % (who, ctx))
    return "_con.type=wss, no _con.cipher / _con.peerCert"
