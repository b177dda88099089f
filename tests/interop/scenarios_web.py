"""Ice for JavaScript scenarios: a real browser over ws/wss, and Node over tcp (registered last).

- `browser_ws`, `browser_wss`: Debian's headless Chromium (/usr/bin/chromium), driven by
  tests/browser/run_page.js (playwright-core over CDP), opens tests/browser/page/index.html,
  served over http on 127.0.0.1 by a static server this module starts (`python3 -m
  http.server`, a child process like the peers). The page loads the npm `ice` package's browser
  bundles (Ice.js, Glacier2.js) and the slice2js output of Demo.ice, and runs the Glacier2 flow
  of page/client.js through the router's ws (wss) client endpoint; the router's server
  endpoint is tcp, for the Python back end's callbacks. For wss, Chromium trusts the test CA
  (tls_certs.py) through an NSS database in a temporary HOME.
- `ws_backend_and_callbacks`: no browser: a Python client over tcp calls a back end that listens
  on ws only (the router reaches it over WebSocket), and that back end calls back through the
  router's ws server endpoint.
- `node_tcp`: the same flow (page/client.js) with the npm `ice` package in Node
  (tests/browser/node_client.js), over tcp, against the `main` configuration.

Each router configuration here is one property file for both routers, as everywhere in the
suite. Needs tests/browser/setup (npm ci of exact versions, slice2js): it is run once per suite
run (quick when up to date); if it fails, every scenario here fails and says why. None of this
needs the C++ build, so `--no-cpp` runs them too.
"""
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import harness as H  # before Glacier2: see harness._import_glacier2
import scenarios_tls
from harness import Failure, check
from scenarios import CallbackI, callback_adapter, callbacks_arrive, main_router, scenario, session, short, unique
from harness import Demo

BROWSER_DIR = os.path.join(H.REPO, "tests", "browser")
SETUP = os.path.join(BROWSER_DIR, "setup")
RUN_PAGE = os.path.join(BROWSER_DIR, "run_page.js")
NODE_CLIENT = os.path.join(BROWSER_DIR, "node_client.js")
CHROMIUM = "/usr/bin/chromium"
SESSION_TIMEOUT = 30
PAGE_TIMEOUT = 20  # seconds for the page to report (run_page.js --timeout); it takes about 0.5 s


# ---------------------------------------------------------------------------------------------
# Router configurations: ws or wss client endpoint, tcp server endpoint (the back end is tcp)

def ws_router(env):
    return env.router("ws", {"Glacier2.CryptPasswords": env.passwords,
                             "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)},
                      transport="ws", server_transport="tcp")


def wss_router(env):
    """The IceSSL properties as in scenarios_tls (server.pem, the test CA), VerifyPeer=0: a
    browser presents no certificate."""
    c = scenarios_tls.certs(env)
    props = c.ice_props("server", verify_peer=0)
    props.update({"Glacier2.CryptPasswords": env.passwords,
                  "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)})
    return env.router("wss", props, transport="wss", server_transport="tcp", tls=c.probe_context())


def ws_server_router(env):
    """tcp client endpoint, ws server endpoint: back ends call back over WebSocket."""
    return env.router("ws-server", {"Glacier2.CryptPasswords": env.passwords,
                                    "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)},
                      transport="tcp", server_transport="ws")


# ---------------------------------------------------------------------------------------------
# tests/browser: setup, the static HTTP server

def browser_setup(env):
    """Runs tests/browser/setup once per suite run; a failure is the scenarios' failure."""
    def starter():
        if shutil.which("node") is None:
            raise Failure("`node` not found: the Ice for JavaScript scenarios need Node.js 20+ (and npm)")
        try:
            out = subprocess.run(["bash", SETUP], capture_output=True, text=True, timeout=360)
        except subprocess.TimeoutExpired:
            raise Failure("tests/browser/setup did not finish within 360 s")
        if out.returncode != 0:
            # One line: setup's own messages and npm's error code, else the last lines.
            lines = [line.strip() for line in (out.stdout + out.stderr).splitlines() if line.strip()]
            key = [line for line in lines if line.startswith(("tests/browser/setup:", "npm error code",
                                                              "npm error network"))]
            raise Failure("tests/browser/setup failed (exit %d), so node_modules or generated/Demo.js is"
                          " missing: %s" % (out.returncode, " | ".join(key or lines[-3:])[-500:]))
        return True
    return env.start_once(env.__dict__.setdefault("_web_once", {}), "tests/browser", starter)


def page_server(env):
    """`python3 -m http.server` on a free loopback port serving tests/browser (page/,
    node_modules/ice/lib/, generated/), started once; returns its base URL."""
    browser_setup(env)

    def starter():
        port = H.free_port()
        proc = env.start("http-browser", [H.PYTHON, "-m", "http.server", "--bind", H.HOST, str(port),
                                          "--directory", BROWSER_DIR])
        base = "http://%s:%d" % (H.HOST, port)

        def up():
            if not proc.alive():
                raise Failure("static HTTP server exited (%s)%s" % (proc.popen.returncode, proc.log_tail()))
            try:
                with urllib.request.urlopen(base + "/page/index.html", timeout=1) as r:
                    return r.status == 200
            except (OSError, urllib.error.URLError):
                return False
        if not H.wait_until(up, 10):
            proc.stop()
            raise Failure("static HTTP server not serving %s/page/index.html after 10 s%s" % (base, proc.log_tail()))
        return base
    return env.start_once(env.__dict__.setdefault("_web_once", {}), "static HTTP server", starter)


def run_json(cmd, what, timeout):
    """Runs a node script that prints its result as JSON on its last stdout line; returns
    (result, completed process)."""
    # SIGTERM, not SIGKILL, when it overruns or the suite dies (PR_SET_PDEATHSIG): run_page.js
    # then stops its Chromium itself. (Both scripts bound themselves well within timeout.)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, cwd=BROWSER_DIR, preexec_fn=H._die_with_parent)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise Failure("%s did not finish within %d s (stopped by PID %d)" % (what, timeout, proc.pid))
    out = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    lines = out.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise Failure("%s (exit %d) printed no JSON result: %s" % (what, out.returncode,
                                                                  short(out.stdout + out.stderr)))
    return result, out


def header(headers, key):
    """A header's value from a CDP header dictionary (any case), or None."""
    for k, v in (headers or {}).items():
        if k.lower() == key.lower():
            return v
    return None


def ws_summary(ws):
    """What matters of a WebSocket run_page.js saw, for a failure reason."""
    summary = {k: ws[k] for k in ("url", "status", "frameError") if k in ws}
    for key in ("Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions"):
        value = header(ws.get("responseHeaders"), key)
        if value is not None:
            summary[key] = value
    return summary


def check_flow(result, out, tag, what):
    """The checks shared by the browser and the Node client (see page/client.js)."""
    if not result.get("ok"):
        steps = result.get("steps") or []
        browser = result.get("browser") or {}
        detail = ""
        if browser:
            sockets = [ws_summary(ws) for ws in browser.get("websockets", [])]
            console = browser.get("console", [])[-5:]
            detail = "; websockets: %s; console: %s" % (json.dumps(sockets), json.dumps(console))
        raise Failure("%s failed after step %r (exit %d): %s%s%s" % (
            what, steps[-1] if steps else None, out.returncode, result.get("error"), detail,
            ("; stderr: " + short(out.stderr)) if out.stderr.strip() else ""))
    check(out.returncode == 0, "%s: exit %d although the result is ok" % (what, out.returncode))
    check(result.get("session") is None, "%s: createSession returned %r, expected nil" % (what, result.get("session")))
    check(result.get("sessionTimeout") == SESSION_TIMEOUT,
          "%s: getSessionTimeout() = %r" % (what, result.get("sessionTimeout")))
    check(result.get("hello") == "hello " + tag, "%s: sayHello(%r) = %r" % (what, tag, result.get("hello")))
    boom = "boom-" + tag
    check(result.get("boom") == boom,
          "%s: fail(%r) gave %r, expected Demo::Boom(why=%r)" % (what, boom, result.get("boom"), boom))
    check(result.get("category"), "%s: getCategoryForClient() is empty" % what)
    want = ["twoway-" + tag, "oneway-" + tag]
    check(sorted(result.get("callbacks") or []) == sorted(want),
          "%s: callbacks %r, expected exactly %r" % (what, result.get("callbacks"), want))
    check(result.get("destroyed") is True, "%s: destroySession did not complete" % what)


def browser_flow(env, make_router, name, ca=None):
    """Opens the page in Chromium against make_router(env) (ws or wss); returns the PASS note.
    ca: a function returning the CA file Chromium must trust (wss)."""
    check(os.access(CHROMIUM, os.X_OK), "%s not found (Debian package chromium)" % CHROMIUM)
    base = page_server(env)  # first: no router is started when tests/browser is not usable
    router = make_router(env)
    tag = unique(name)
    query = urllib.parse.urlencode({"router": router.proxy, "hello": env.hello_proxy(),
                                    "user": "alice", "password": "secret", "tag": tag})
    cmd = ["node", RUN_PAGE, base + "/page/index.html?" + query, "--timeout", str(PAGE_TIMEOUT),
           "--screenshot", os.path.join(env.dir, name + ".png")]
    if ca:
        cmd += ["--ca", ca()]
    start = time.monotonic()
    result, out = run_json(cmd, "run_page.js", PAGE_TIMEOUT + 30)
    took = time.monotonic() - start
    check_flow(result, out, tag, "the page")
    browser = result.get("browser") or {}
    sockets = browser.get("websockets") or []
    check(len(sockets) == 1, "expected one WebSocket (to the router), saw %s" % json.dumps(sockets))
    ws = sockets[0]
    scheme = router.transport  # "ws" or "wss"
    check(ws.get("url", "").startswith("%s://%s:%d/" % (scheme, H.HOST, router.client_port)),
          "WebSocket URL %r, expected the router's %s client endpoint" % (ws.get("url"), scheme))
    check(ws.get("status") == 101, "WebSocket handshake status %r" % ws.get("status"))
    offered = header(ws.get("requestHeaders"), "Sec-WebSocket-Extensions")
    accepted = header(ws.get("responseHeaders"), "Sec-WebSocket-Extensions")
    return "Chromium %s, Ice %s; page %.2f s, run_page.js %.1f s; extensions offered %r, accepted %r" % (
        browser.get("version"), result.get("iceVersion"), result.get("ms", 0) / 1000.0, took, offered, accepted)


# ---------------------------------------------------------------------------------------------
# Scenarios

@scenario
def browser_ws(env):
    return browser_flow(env, ws_router, "browser_ws")


@scenario
def browser_wss(env):
    return browser_flow(env, wss_router, "browser_wss",
                        ca=lambda: os.path.join(scenarios_tls.certs(env).dir, "ca.pem"))


@scenario
def ws_backend_and_callbacks(env):
    router = ws_server_router(env)
    port = env.peer("backend", args=["--Ice.Default.Protocol=ws"], name="backend-ws", transport="ws")
    with session(env, router) as (ic, prx):
        hello = Demo.HelloPrx.uncheckedCast(ic.stringToProxy("hello:ws -h %s -p %d" % (H.HOST, port)))
        check(hello.sayHello("ws") == "hello ws", "sayHello through the router to a ws back end")
        servant = CallbackI()
        cb = callback_adapter(ic, prx, servant)
        check(cb.ice_getEndpoints()[0].toString().startswith("ws "),
              "the callback proxy's endpoint is not the router's ws server endpoint: %s" % cb)
        callbacks_arrive(hello, cb, servant, "ws")


@scenario
def node_tcp(env):
    browser_setup(env)
    router = main_router(env)
    tag = unique("node_tcp")
    cmd = ["node", NODE_CLIENT, "--router", router.proxy, "--hello", env.hello_proxy(), "--user", "alice",
           "--password", "secret", "--tag", tag, "--timeout", "20"]
    result, out = run_json(cmd, "node_client.js", 50)
    check_flow(result, out, tag, "the Node client")
    return "Node %s, Ice %s; flow %.2f s" % (result.get("node"), result.get("iceVersion"), result.get("ms", 0) / 1000.0)
