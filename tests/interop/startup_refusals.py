#!/usr/bin/python3
"""moraine-router must refuse to start on a configuration it cannot serve, and say why.

  /usr/bin/python3 tests/interop/startup_refusals.py [--moraine-bin build/bin/moraine-router]
                                                     [--timeout S] [--keep]

Each case writes a configuration into a temporary directory, runs MORAINE_BIN on it and
requires: the process exits by itself within --timeout seconds (default 5; otherwise it is
killed, by PID, and the case fails), with an exit status above 0 (not a signal), and its stderr
names what is wrong (the key, and the value or file where it matters). Certificates are made
with the `openssl` command (tls_certs.py). One line per case, `PASS|FAIL name seconds reason`;
the exit status is 1 if any case failed. The `control` case checks that the base configuration
the other cases alter is accepted (the router is still running after 1 s; it is then stopped).
Cases that must start (`control`, `noop_keys_warned`) are checked the same way, and their
expectations are then looked for in what the router wrote by then: documented keys Moraine
accepts without acting on them each get one start-up warning naming file, line and key
(docs/properties.md).
"""
import argparse
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import tls_certs  # noqa: E402
import ports  # noqa: E402

HOST = "127.0.0.1"
_prctl = ctypes.CDLL(None, use_errno=True).prctl
PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Child side of fork: get SIGTERM if this script dies without stopping the router."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))


def free_port():
    return ports.free_port(HOST)


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class Cases:
    """The configurations, written into directory d (certificates in d/tls)."""

    def __init__(self, d):
        self.d = d
        self.tls = tls_certs.make(os.path.join(d, "tls"))
        hashed = tls_certs.openssl("passwd", "-6", "-salt", "moraine", "secret", cwd=d).strip()
        self.passwords = write(os.path.join(d, "passwords"), ["alice " + hashed])

    def ice(self, name, props):
        """A Glacier2 property file: the base (tcp client endpoint, crypt passwords) plus props
        (a value None removes the key). Returns the command-line arguments."""
        base = {"Glacier2.InstanceName": "Glacier2",
                "Glacier2.Client.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                "Glacier2.CryptPasswords": self.passwords}
        base.update(props)
        path = write(os.path.join(self.d, name + ".cfg"),
                     ["%s=%s" % (k, v) for k, v in sorted(base.items()) if v is not None])
        return ["--ice-config", path]

    def icessl(self, **overrides):
        """IceSSL properties of a TLS router; keyword names are the keys after `IceSSL.`."""
        props = {"Ice.Plugin.IceSSL": "IceSSL:createIceSSL",
                 "IceSSL.DefaultDir": self.tls,
                 "IceSSL.CAs": "ca.pem",
                 "IceSSL.CertFile": "server.pem",
                 "IceSSL.KeyFile": "server_key.pem",
                 "IceSSL.VerifyPeer": "1"}
        props.update({"IceSSL." + k: v for k, v in overrides.items()})
        return props

    def ssl_client(self):
        return {"Glacier2.Client.Endpoints": "ssl -h %s -p %d" % (HOST, free_port())}

    def yaml(self, name, text):
        return ["--config", write(os.path.join(self.d, name + ".yaml"), [text])]

    def noop_keys(self):
        """(argv, expectations): a file with one no-op key of each kind, and the warning each must get."""
        keys = {"Glacier2.Client.ThreadPool.Size": "4",
                "Glacier2.PermissionsVerifier.InvocationTimeout": "5000",
                "Glacier2.Server.ACM.Timeout": "30",
                "Glacier2.Client.MessageSizeMax": "2048",
                "IceStorm.TopicManager.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                "IceStorm.Publish.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                "IceStorm.Transient": "1",
                "IceStorm.Flush.Timeout": "500",
                "IceStorm.LMDB.MapSize": "16",
                "IceStorm.Trace.Election": "1"}
        argv = self.ice("noop-keys", keys)
        path = re.escape(argv[1])
        # The file's lines are the keys in sorted order (see ice()), so each line number is known.
        lines = sorted(list(keys) + ["Glacier2.InstanceName", "Glacier2.Client.Endpoints", "Glacier2.CryptPasswords"])
        expect = [(k, r"%s:%d: %s: accepted, has no effect in Moraine \(" % (path, lines.index(k) + 1, re.escape(k)))
                  for k in keys if not k.endswith("Endpoints") and k != "IceStorm.Transient"]
        return argv, expect

    def all(self):
        """[(name, argv, [(description, regex that stderr must match)], must_run)]; must_run: the
        router must start and keep running (its output is then checked), else it must refuse."""
        word = lambda w: (w, r"(?<![\w.])" + re.escape(w) + r"(?![\w])")  # noqa: E731
        return [
            ("control", self.ice("control", {}), [], True),
            ("noop_keys_warned",) + self.noop_keys() + (True,),
            ("icestorm_replication",
             self.ice("replication", {"IceStorm.TopicManager.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                                      "IceStorm.Publish.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                                      "IceStorm.Nodes.1": "IceStorm1/node:tcp -h %s -p %d" % (HOST, free_port())}),
             [word("IceStorm.Nodes.1"), ("replication", "replication is not supported")], False),
            ("topic_database_missing",
             self.ice("no-topic-db", {"IceStorm.TopicManager.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                                      "IceStorm.Publish.Endpoints": "tcp -h %s -p %d" % (HOST, free_port()),
                                      "IceStorm.LMDB.Path": os.path.join(self.d, "absent-db")}),
             [("the directory", re.escape(os.path.join(self.d, "absent-db")) + ".*does not exist")], False),
            ("removed_category_filter",
             self.ice("allow-categories", {"Glacier2.AllowCategories": "public"}),
             [word("Glacier2.AllowCategories"), word("Glacier2.Filter.Category.Accept")], False),
            ("ssl_without_certfile",
             self.ice("ssl-no-certfile", {**self.ssl_client(), **self.icessl(CertFile=None, KeyFile=None)}),
             [word("IceSSL.CertFile")], False),
            ("udp_endpoint",
             self.ice("udp", {"Glacier2.Client.Endpoints": "udp -h %s -p %d" % (HOST, free_port())}),
             [word("udp"), word("Glacier2.Client.Endpoints")], False),
            ("wss_without_certfile",
             self.ice("wss-no-certfile", {"Glacier2.Client.Endpoints": "wss -h %s -p %d" % (HOST, free_port())}),
             [word("IceSSL.CertFile"), word("wss")], False),
            ("missing_keyfile",
             self.ice("missing-keyfile", {**self.ssl_client(), **self.icessl(KeyFile="no_such_key.pem")}),
             [word("IceSSL.KeyFile"), word("no_such_key.pem")], False),
            ("yaml_ssl_without_tls",
             self.yaml("ssl-no-tls", 'client: {endpoints: "ssl -h %s -p %d"}' % (HOST, free_port())),
             [word("tls.cert_file")], False),
            ("indirect_locator",
             self.ice("indirect-locator", {"Ice.Default.Locator": "IceGrid/Locator@Registry"}),
             [word("Ice.Default.Locator"), ("direct proxy", r"must be a direct proxy")], False),
            ("verifier_own_locator",
             self.ice("verifier-own-locator", {
                 "Ice.Default.Locator": "IceGrid/Locator:tcp -h %s -p %d" % (HOST, free_port()),
                 "Glacier2.PermissionsVerifier": "verifier@Auth",
                 "Glacier2.PermissionsVerifier.Locator": "Other/Locator:tcp -h %s -p %d" % (HOST, free_port())}),
             [word("Glacier2.PermissionsVerifier.Locator"), word("Ice.Default.Locator")], False),
            ("adapter_id_without_locator",
             self.ice("adapter-no-locator", {"Glacier2.Client.AdapterId": "R1",
                                             "Glacier2.Client.ReplicaGroupId": "RouterGroup"}),
             [word("Glacier2.Client.AdapterId"), word("Ice.Default.Locator")], False),
            ("wrong_key_password",
             self.ice("wrong-password", {**self.ssl_client(),
                                         **self.icessl(KeyFile="encrypted_key.pem", Password="wrong-password")}),
             [word("IceSSL.Password")], False),
        ]


def tail(text, lines=6):
    text = text.strip()
    return " | ".join(text.splitlines()[-lines:]) if text else "(nothing)"


def run_case(name, binary, argv, expect, must_run, timeout, cwd):
    """(ok, reason)."""
    cmd = [binary] + argv
    if must_run:
        log_path = os.path.join(cwd, name + ".log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd,
                                    preexec_fn=_die_with_parent)
            try:
                rc = proc.wait(1.0)
            except subprocess.TimeoutExpired:
                rc = None
            if rc is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        with open(log_path, errors="replace") as f:
            text = f.read()
        if rc is not None:
            return False, "exited with %s within 1 s: %s" % (rc, tail(text))
        missing = [what for what, regex in expect if not re.search(regex, text)]
        if missing:
            return False, "started, but its output does not name %s: %s" % (
                " and ".join(repr(m) for m in missing), tail(text, 12))
        return True, "still running after 1 s (stopped)%s" % (
            "; %d warnings as expected" % len(expect) if expect else "")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                             stdin=subprocess.DEVNULL, cwd=cwd, preexec_fn=_die_with_parent)
    except subprocess.TimeoutExpired as e:  # run() has killed it
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return False, "still running after %.0f s (killed); stderr: %s" % (timeout, tail(err))
    if out.returncode <= 0:
        return False, "exit status %d (%s); stderr: %s" % (
            out.returncode, "killed by a signal" if out.returncode < 0 else "expected > 0", tail(out.stderr))
    missing = [what for what, regex in expect if not re.search(regex, out.stderr)]
    if missing:
        return False, "exit %d, but stderr does not name %s; stderr: %s" % (
            out.returncode, " and ".join(repr(m) for m in missing), tail(out.stderr))
    return True, "exit %d: %s" % (out.returncode, tail(out.stderr, 2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(REPO, "build", "bin", "moraine-router"))
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds each refusal may take")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    binary = os.path.abspath(args.moraine_bin)
    if not os.access(binary, os.X_OK):
        print("moraine-router not found or not executable: %s" % binary, file=sys.stderr)
        return 2
    d = tempfile.mkdtemp(prefix="moraine-refusals-")
    failed = []
    try:
        try:
            cases = Cases(d).all()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            print("FAIL setup: %s" % e, flush=True)
            failed.append("setup")
            cases = []
        for name, argv, expect, must_run in cases:
            start = time.monotonic()
            ok, reason = run_case(name, binary, argv, expect, must_run, args.timeout, d)
            print("%s %-22s %4.1fs %s" % ("PASS" if ok else "FAIL", name, time.monotonic() - start, reason),
                  flush=True)
            if not ok:
                failed.append(name)
    finally:
        if failed or args.keep:
            print("configurations kept in", d, file=sys.stderr)
        else:
            shutil.rmtree(d, ignore_errors=True)
    print("%d cases, %d failed%s" % (len(cases) if cases else 0, len(failed),
                                     (": " + " ".join(failed)) if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
