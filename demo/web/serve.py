#!/usr/bin/python3
"""The web clock demo's static file server: http on 127.0.0.1, in a thread.

It serves exactly the page's files, nothing else (no directory listing, no other path of the
repository): index.html, clock.js, generated/Clock.js (demo/web/setup makes it) and the npm
`ice` package's browser builds Ice.js, Glacier2.js and IceStorm.js (with their source maps);
and GET /clock: {"monotonic_ns": N}, this machine's CLOCK_MONOTONIC, the clock the publisher
stamps its ticks with, so that the page can measure latency (see clock.js). Given a status
object (demo/clock/run_demo.py --web gives its DemoStatus), also GET /demo-status: its
snapshot() as JSON, the C++ sessions running beside the page and the router's CPU and RSS, which
the page shows in its panel "Beside this page"; without one, 404 (the page then hides it).

Used by demo/clock/run_demo.py --web. Alone, for a router that is already running:
  python3 demo/web/serve.py [--port 4080] [--router "ws -h 127.0.0.1 -p 4065"] [--tm PROXY]
"""
import argparse, http.server, json, os, threading, time, urllib.parse

WEB_DIR = os.path.dirname(os.path.abspath(__file__))
ICE_LIB = ["node_modules/ice/lib/%s%s" % (name, ext)
           for name in ("Ice.js", "Glacier2.js", "IceStorm.js") for ext in ("", ".map")]
FILES = {"/": "index.html", "/index.html": "index.html", "/clock.js": "clock.js",
         "/generated/Clock.js": "generated/Clock.js"}
FILES.update({"/" + path: path for path in ICE_LIB})
DEFAULT_TM = "IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000"  # clock.js's default too
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".map": "application/json"}


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "moraine-demo-web"
    protocol_version = "HTTP/1.1"   # keep-alive: a /clock sample measures no TCP handshake,
    disable_nagle_algorithm = True  # and no delayed ACK between the headers and the body

    def log_message(self, *args):  # quiet: the demo prints its own status
        pass

    def send_body(self, status, ctype, body, head):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def reply(self, head):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/clock":
            mono, real = time.monotonic_ns(), time.time_ns()
            body = json.dumps({"monotonic_ns": str(mono), "realtime_ns": str(real)}).encode()
            return self.send_body(200, "application/json", body, head)
        if path == "/demo-status" and self.server.demo_status is not None:
            body = json.dumps(self.server.demo_status.snapshot()).encode()
            return self.send_body(200, "application/json", body, head)
        rel = FILES.get(path)
        if rel is None:
            return self.send_body(404, "text/plain; charset=utf-8", b"not found\n", head)
        try:
            with open(os.path.join(WEB_DIR, rel), "rb") as f:
                body = f.read()
        except OSError:
            return self.send_body(404, "text/plain; charset=utf-8",
                                  b"not found (run demo/web/setup)\n", head)
        self.send_body(200, TYPES[os.path.splitext(rel)[1]], body, head)

    def do_GET(self):
        self.reply(False)

    def do_HEAD(self):
        self.reply(True)


class WebServer:
    """The server, started in a daemon thread; port 0 = any free port. status: None, or an object
    whose snapshot() (called from the server's threads) returns what GET /demo-status answers."""

    def __init__(self, port=0, host="127.0.0.1", status=None):
        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.demo_status = status
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="demo-web", daemon=True)
        self.thread.start()

    def url(self, router, topic_manager=None, user="demo", password="demo"):
        """The page's URL for router endpoint `router` (e.g. "ws -h 127.0.0.1 -p 4065")."""
        query = {"router": router, "user": user, "password": password}
        if topic_manager and topic_manager != DEFAULT_TM:
            query["tm"] = topic_manager
        return "http://127.0.0.1:%d/?%s" % (self.port, urllib.parse.urlencode(query, quote_via=urllib.parse.quote))

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def main():
    ap = argparse.ArgumentParser(description="Serve the web clock demo on 127.0.0.1.")
    ap.add_argument("--port", type=int, default=4080)
    ap.add_argument("--router", default="ws -h 127.0.0.1 -p 4065", help="the router's ws endpoint")
    ap.add_argument("--tm", default=DEFAULT_TM,
                    help="the TopicManager proxy, reached through the router")
    a = ap.parse_args()
    server = WebServer(a.port)
    print("demo/web: open %s  (Ctrl-C to stop)" % server.url(a.router, a.tm), flush=True)
    try:
        server.thread.join()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
