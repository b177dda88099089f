#!/usr/bin/python3
"""Glacier2::PermissionsVerifier peer on 127.0.0.1:PORT, identities `verifier` and `recorder`.

  verifier.py PORT

Accepts password == user + "-ok"; users named throw-* get a PermissionDeniedException thrown
(instead of returned false); everyone else is refused with reason "verifier refused <user>".
"""
import sys

import Glacier2
from peer_common import RecorderI, communicator, serve


class VerifierI(Glacier2.PermissionsVerifier):
    def __init__(self, recorder):
        self._rec = recorder

    def checkPermissions(self, user, password, current):
        self._rec.record("check %s %s" % (user, password))
        if password == user + "-ok":
            return (True, "")
        if user.startswith("throw-"):
            raise Glacier2.PermissionDeniedException("verifier threw for " + user)
        return (False, "verifier refused " + user)


if __name__ == "__main__":
    rec = RecorderI()
    with communicator() as ic:
        serve(ic, int(sys.argv[1]), {"verifier": VerifierI(rec), "recorder": rec})
