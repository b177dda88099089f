#!/usr/bin/python3
"""Glacier2::PermissionsVerifier peer on 127.0.0.1:PORT, identities `verifier` and `recorder`.

  verifier.py PORT

Accepts password == user + "-ok"; users named throw-* get a PermissionDeniedException thrown
(instead of returned false); everyone else is refused with reason "verifier refused <user>".
Each call's context is recorded, as one JSON line {"op": "check", "user": ..., "ctx": {...}},
by a second recorder, `contexts`.
"""
import json
import sys

import Glacier2
from peer_common import RecorderI, communicator, serve


class VerifierI(Glacier2.PermissionsVerifier):
    def __init__(self, recorder, contexts):
        self._rec, self._ctx = recorder, contexts

    def checkPermissions(self, user, password, current):
        self._rec.record("check %s %s" % (user, password))
        self._ctx.record(json.dumps({"op": "check", "user": user, "ctx": dict(current.ctx)}, sort_keys=True))
        if password == user + "-ok":
            return (True, "")
        if user.startswith("throw-"):
            raise Glacier2.PermissionDeniedException("verifier threw for " + user)
        return (False, "verifier refused " + user)


if __name__ == "__main__":
    rec, contexts = RecorderI(), RecorderI()
    with communicator() as ic:
        serve(ic, int(sys.argv[1]), {"verifier": VerifierI(rec, contexts), "recorder": rec, "contexts": contexts})
