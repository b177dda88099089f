#!/usr/bin/python3
"""Reproducer: N fresh connections each send one createSession at once (hand-encoded, no client
library), and every reply must be OK.

  /usr/bin/python3 tests/client/concurrent_create_session.py --router glacier2 -n 2000
  /usr/bin/python3 tests/client/concurrent_create_session.py --router moraine --moraine-bin build-client/bin/moraine-router -n 2000

glacier2router 3.7.8: all OK (4000 of 4000). For each connection that got anything else, prints
the reply and whether the connection has a session afterwards (getCategoryForClient is answered
only inside a session: the router closes the connection otherwise). Exit status 1 if any failed.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
import harness as H  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine"], default="glacier2")
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("-n", type=int, default=2000)
    args = ap.parse_args()
    env = H.Env(args.router, os.path.abspath(args.moraine_bin))
    bad = []
    try:
        r = env.router("main", {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": "30"})
        conns = [H.RawConn(r.client_port, timeout=60) for _ in range(args.n)]
        params = H.ice_string("alice") + H.ice_string("secret")
        for i, c in enumerate(conns):
            c.send(H.request(1000 + i, "router", "Glacier2", "createSession", params))
        for i, c in enumerate(conns):
            m = c.read(timeout=60)
            if isinstance(m, str) or H.reply_status(m) != (1000 + i, 0):
                bad.append((i, m))
        for i, m in bad[:5]:
            conns[i].send(H.request(7, "router", "Glacier2", "getCategoryForClient", b"", mode=1))
            after = conns[i].read(timeout=2)
            print("connection %d: createSession -> %r; then getCategoryForClient -> %s"
                  % (i, m if isinstance(m, str) else m[18:], after if isinstance(after, str) else "answered"))
        print("%s: %d of %d createSession calls failed" % (args.router, len(bad), args.n))
    finally:
        env.close(not bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
