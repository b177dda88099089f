#!/usr/bin/python3
"""Moraine interop suite: real Ice 3.7 clients against glacier2router or moraine-router.

  /usr/bin/python3 tests/interop/run.py --router glacier2
  /usr/bin/python3 tests/interop/run.py --router moraine [--moraine-bin build/bin/moraine-router]
  options: -k NAME (substring, repeatable or comma-separated), --timeout S (default 300),
           --cpp-build-dir DIR, --no-cpp, --keep (keep the temp dir with configs and logs), --list

Prints one PASS/FAIL line per scenario and exits 1 if any failed (2 on overall timeout).
See README.md for what each scenario checks.
"""
import argparse
import glob
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
import scenarios  # noqa: E402
import scenarios_icestorm  # noqa: E402  (registers the topic-service scenarios after scenarios.py's)
import scenarios_icestorm_admin  # noqa: E402  (icestormadmin and createOrRetrieve, after those)
import scenarios_icestorm_delivery  # noqa: E402  (ordered delivery, retryCount, after those)
import scenarios_buffered  # noqa: E402  (registers the buffered-mode scenarios after those)
import scenarios_tls  # noqa: E402  (registers the TLS scenarios after those)
import scenarios_java  # noqa: E402  (registers the Ice for Java scenarios after those)
import scenarios_web  # noqa: E402  (registers the ws/wss, browser and Node scenarios last)
import scenarios_chaos  # noqa: E402  (registers the chaos scenarios after all of those: they kill their own peers)
import scenarios_context  # noqa: E402  (registers Glacier2.AddConnectionContext)
import scenarios_dropin  # noqa: E402  (registers the drop-in scenarios: glacier2router's command line)
import scenarios_locator  # noqa: E402  (registers the locator (IceGrid) scenarios)
import scenarios_icestorm_trace  # noqa: E402  (registers IceStorm's trace categories)
import scenarios_topic_store  # noqa: E402  (registers the topic database scenarios: they restart their own router)
import scenarios_upstream  # noqa: E402  (registers the upstream-link scenario (moraine only) after the chaos ones)
import scenarios_trace  # noqa: E402  (registers the trace-category scenario)
import scenarios_udp  # noqa: E402  (registers the udp scenarios: datagram forwarding and callbacks)
import scenarios_ops  # noqa: E402  (registers the operations scenarios (metrics; moraine only) last)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--router", choices=["glacier2", "moraine"], default="glacier2")
    ap.add_argument("--moraine-bin", default=os.path.join(H.REPO, "build", "bin", "moraine-router"))
    ap.add_argument("-k", action="append", default=[], metavar="NAME",
                    help="run scenarios whose name contains NAME (repeatable, or comma-separated)")
    ap.add_argument("--skip", action="append", default=[], metavar="NAME",
                    help="leave out scenarios whose name contains NAME (repeatable, or comma-separated)")
    ap.add_argument("--timeout", type=float, default=300.0, help="overall bound in seconds")
    ap.add_argument("--cpp-build-dir", default=os.path.join(H.REPO, "build", "interop-cpp"),
                    help="where the C++ client is built (reused between runs)")
    ap.add_argument("--no-cpp", action="store_true", help="skip the C++ client scenario")
    ap.add_argument("--keep", action="store_true", help="keep configs and logs even on success")
    ap.add_argument("--list", action="store_true", help="list scenario names and exit")
    return ap.parse_args()


def selected(names, skip=()):
    wanted = [w for k in names for w in k.split(",") if w]
    unwanted = [w for k in skip for w in k.split(",") if w]
    return [(n, f) for n, f in scenarios.SCENARIOS
            if (not wanted or any(w in n for w in wanted)) and not any(w in n for w in unwanted)]


def run_one(env, name, fn):
    start = time.monotonic()
    verdict = "PASS"
    try:
        note = fn(env)
        ok, reason = True, note or ""
    except H.Skip as e:
        ok, reason, verdict = True, str(e), "SKIP"
    except H.Failure as e:
        ok, reason = False, str(e)
    except Exception as e:  # noqa: BLE001  (an unexpected exception is a failure, with where)
        # Name the scenario line that raised (the innermost frames are Ice's generated code).
        ours = (scenarios.__file__, scenarios_icestorm.__file__, scenarios_buffered.__file__, scenarios_tls.__file__)
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename in ours]
        where = " (at %s:%d)" % (os.path.basename(frames[-1].filename), frames[-1].lineno) if frames else ""
        ok, reason = False, "%s: %s%s" % (type(e).__name__, scenarios.short(e), where)
    took = time.monotonic() - start
    print("%s %-30s %5.1fs %s" % (verdict if ok else "FAIL", name, took, reason), flush=True)
    return ok


def main():
    args = parse_args()
    todo = selected(args.k, args.skip)
    if args.list:
        print("\n".join(n for n, _ in todo))
        return 0
    if not todo:
        print("no scenario matches %s" % args.k, file=sys.stderr)
        return 2
    if args.router == "moraine" and not os.access(args.moraine_bin, os.X_OK):
        others = glob.glob(os.path.join(H.REPO, "build*", "bin", "moraine-router"))
        print("moraine-router not found or not executable: %s%s" % (
            args.moraine_bin, "; found: " + " ".join(others) if others else ""), file=sys.stderr)
        return 2

    env = H.Env(args.router, os.path.abspath(args.moraine_bin), keep=args.keep,
                cpp_build_dir=None if args.no_cpp else os.path.abspath(args.cpp_build_dir))

    watchdog = env.start_watchdog(args.timeout)

    print("router under test: %s%s" % (args.router, " (%s)" % env.moraine_bin if args.router == "moraine" else ""),
          flush=True)
    start = time.monotonic()
    failed = []
    try:
        for name, fn in todo:
            if not run_one(env, name, fn):
                failed.append(name)
    finally:
        watchdog.cancel()
        # moraine-router must exit 0 on SIGTERM: under ASan that also means no leak report.
        for name, rc, tail in env.close(success=not failed):
            print("FAIL %s did not shut down cleanly on SIGTERM (exit status %s)%s" % (name, rc, tail), flush=True)
            failed.append(name)
    print("%d scenarios, %d failed%s, %.1f s" % (len(todo), len(failed),
                                               (": " + " ".join(failed)) if failed else "",
                                               time.monotonic() - start), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
