#!/usr/bin/python3
"""Glacier2::SSLPermissionsVerifier peer on 127.0.0.1:PORT, identities `sslverifier` and `recorder`.

  ssl_verifier.py PORT ACCEPT_CN

authorize(info) records the SSLInfo it got as one JSON line (remoteHost, remotePort, localHost,
localPort, cipher, certs, plus `cn`: the subject CN of certs[0], read with `openssl x509`).
It accepts only a chain whose first certificate's subject CN is ACCEPT_CN; anyone else is
refused with reason "ssl verifier refused <cn>" (an empty chain: "ssl verifier refused no
certificate"). Each call's context is recorded, as one JSON line {"op": "authorize", "user": cn,
"ctx": {...}}, by a second recorder, `contexts`.
"""
import json
import os
import sys

import Glacier2
from peer_common import RecorderI, communicator, serve

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tls_certs  # noqa: E402


class SSLVerifierI(Glacier2.SSLPermissionsVerifier):
    def __init__(self, recorder, accept_cn, contexts):
        self._rec, self._accept, self._ctx = recorder, accept_cn, contexts

    def authorize(self, info, current):
        try:
            cn = tls_certs.subject_cn(info.certs[0]) if info.certs else None
        except Exception as e:  # noqa: BLE001  (a chain openssl cannot read is refused, and recorded)
            cn = "unreadable: %s" % e
        self._rec.record(json.dumps({
            "remoteHost": info.remoteHost, "remotePort": info.remotePort,
            "localHost": info.localHost, "localPort": info.localPort,
            "cipher": info.cipher, "certs": list(info.certs), "cn": cn}))
        self._ctx.record(json.dumps({"op": "authorize", "user": cn, "ctx": dict(current.ctx)}, sort_keys=True))
        if cn is not None and cn == self._accept:
            return (True, "")
        return (False, "ssl verifier refused " + (cn if cn is not None else "no certificate"))


if __name__ == "__main__":
    rec, contexts = RecorderI(), RecorderI()
    with communicator() as ic:
        serve(ic, int(sys.argv[1]), {"sslverifier": SSLVerifierI(rec, sys.argv[2], contexts), "recorder": rec,
                                     "contexts": contexts})
