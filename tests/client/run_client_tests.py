#!/usr/bin/python3
"""Runs client_smoke (moraine::client's integration test) against a real router.

  /usr/bin/python3 tests/client/run_client_tests.py --router glacier2 --client-bin build-client/bin/client_smoke
  /usr/bin/python3 tests/client/run_client_tests.py --router moraine --moraine-bin build-client/bin/moraine-router \
      --client-bin build-client/bin/client_smoke

Starts, with tests/interop/harness.py, the Python Demo back end and the router under test on the
same property files as the interop suite (`main`: crypt passwords, SessionTimeout=30, server
endpoints; `expiry`: SessionTimeout=2, no server endpoints), then runs:
  smoke      client_smoke: denied password, sayHello, fail -> ::Demo::Boom, ObjectNotExist,
             oneways, callbacks (twoway, oneway, unhosted name), 200 concurrent sessions, destroy,
             std::future completions from another thread
  keepalive  client_smoke --idle 5 on `expiry`: heartbeats keep an idle session; without them
             the router drops it
  smoke-wss  the smoke again over a `wss` client endpoint (IceSSL, fresh test certificates from
             tests/interop/tls_certs.py; server endpoint tcp): TLS, then the WebSocket upgrade
             and every message in a binary frame inside TLS; 50 concurrent sessions
  measure    (--measure N) N idle sessions at once: RSS per session
Prints PASS/FAIL per run and exits 1 if any failed (logs kept then).
"""
import argparse
import os
import ssl
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402
import tls_certs  # noqa: E402  (the project's one test PKI)


def run_smoke(name, cmd, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    ok = rc == 0 and out.rstrip().endswith("PASS")
    print("%s %s %.1fs" % ("PASS" if ok else "FAIL", name, time.monotonic() - t0))
    for line in out.rstrip().splitlines():
        print("    " + line)
    if not ok:
        print("    (exit status %s)" % rc)
    return ok


def run_smoke_wss(env, base):
    """The smoke through a router whose client endpoint is wss (VerifyPeer=0: no client certificate)."""
    try:
        certs = tls_certs.make(os.path.join(env.dir, "tls"))
    except (RuntimeError, OSError) as e:
        raise H.Failure("test certificates: %s" % e)
    props = {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30",
             "Ice.Plugin.IceSSL": "IceSSL:createIceSSL", "IceSSL.DefaultDir": certs, "IceSSL.CAs": "ca.pem",
             "IceSSL.CertFile": "server.pem", "IceSSL.KeyFile": "server_key.pem", "IceSSL.VerifyPeer": "0"}
    probe = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.path.join(certs, "ca.pem"))
    router = env.router("wss", props, transport="wss", server_transport="tcp", tls=probe)
    return run_smoke("smoke-wss", base + ["--router", H.endpoint(router.client_port, "wss"),
                                          "--tls-ca", os.path.join(certs, "ca.pem"),
                                          "--tls-server-name", "127.0.0.1", "--sessions", "50"], 120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine"], default="glacier2")
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--client-bin", default=os.path.join(H.REPO, "build", "bin", "client_smoke"))
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--measure", type=int, default=0, metavar="N",
                    help="also open N idle sessions on `main` and print the RSS per session")
    ap.add_argument("--keep", action="store_true", help="keep configs and logs even on success")
    args = ap.parse_args()

    env = H.Env(args.router, os.path.abspath(args.moraine_bin), keep=args.keep)
    results = []
    try:
        main_router = env.router("main", {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30"})
        hello = env.hello_proxy()
        base = [os.path.abspath(args.client_bin), "--hello", hello, "--user", "alice", "--password", "secret"]
        results.append(run_smoke("smoke", base + ["--router", H.endpoint(main_router.client_port),
                                                  "--sessions", str(args.sessions)], 120))
        if args.measure:
            results.append(run_smoke("measure", base + ["--router", H.endpoint(main_router.client_port),
                                                        "--measure", str(args.measure)], 300))
        # Outgoing contexts reach the back end through a router that forwards them.
        fwd = env.router("forward-context", {"Glacier2.CryptPasswords": env.passwords,
                                             "Glacier2.Client.ForwardContext": "1"})
        results.append(run_smoke("context", base + ["--router", H.endpoint(fwd.client_port), "--forward-context"], 60))
        expiry = env.router("expiry", {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "2"},
                            server=False)
        results.append(run_smoke("keepalive", base + ["--router", H.endpoint(expiry.client_port), "--idle", "5"], 60))
        results.append(run_smoke_wss(env, base))
    except H.Failure as e:
        print("FAIL setup: %s" % e)
        results.append(False)
    finally:
        env.close(all(results) and bool(results))
    print("%d/%d passed (router %s)" % (sum(results), len(results), args.router))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
