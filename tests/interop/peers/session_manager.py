#!/usr/bin/python3
"""Glacier2::SessionManager peer on 127.0.0.1:PORT, identities `manager` and `recorder`, and
Glacier2::SSLSessionManager `sslmanager`.

  session_manager.py PORT

create(user, control) returns a Session hosted here with identity session/<user>. What the
router passes is recorded; the user name selects extra behaviour, so that scenarios can ask
for it without a side channel:
  ctl-*     : calls control.getSessionTimeout() and control.categories().add(["allowed"])
  refuse-*  : throws CannotCreateSessionException("manager refused <user>")
  vanish-*  : returns the Session proxy but hosts no servant for it (a session the manager
              already dropped): pinging it gives ObjectNotExistException
Every ice_ping of a hosted Session is recorded as "ping <user>".
sslmanager's create(info, control) records "sslcreate <cn> control=<0|1> certs=<n> cipher=<c>"
(cn: the subject CN of info.certs[0]) and returns a Session session/<cn>.
The context of each create call is recorded, as one JSON line {"op": "create" or "sslcreate",
"user": user or cn, "ctx": {...}}, by a second recorder, `contexts`.
"""
import json
import os
import sys

import Glacier2
import Ice
from peer_common import RecorderI, communicator, serve

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tls_certs  # noqa: E402


class SessionI(Glacier2.Session):
    def __init__(self, user, recorder):
        self._user, self._rec = user, recorder

    def destroy(self, current):
        self._rec.record("destroy " + self._user)
        current.adapter.remove(current.id)

    def ice_ping(self, current=None):
        self._rec.record("ping " + self._user)


class ManagerI(Glacier2.SessionManager):
    def __init__(self, recorder, contexts):
        self._rec, self._ctx = recorder, contexts

    def create(self, user, control, current):
        self._rec.record("create %s control=%d" % (user, control is not None))
        self._ctx.record(json.dumps({"op": "create", "user": user, "ctx": dict(current.ctx)}, sort_keys=True))
        if user.startswith("refuse-"):
            raise Glacier2.CannotCreateSessionException("manager refused " + user)
        if user.startswith("ctl-") and control is not None:
            self._rec.record("timeout %s %d" % (user, control.getSessionTimeout()))
            control.categories().add(["allowed"])
            self._rec.record("categories %s %s" % (user, ",".join(control.categories().get())))
        if user.startswith("vanish-"):
            return Glacier2.SessionPrx.uncheckedCast(current.adapter.createProxy(Ice.Identity(user, "session")))
        prx = current.adapter.add(SessionI(user, self._rec), Ice.Identity(user, "session"))
        return Glacier2.SessionPrx.uncheckedCast(prx)


class SSLManagerI(Glacier2.SSLSessionManager):
    def __init__(self, recorder, contexts):
        self._rec, self._ctx = recorder, contexts

    def create(self, info, control, current):
        cn = tls_certs.subject_cn(info.certs[0]) if info.certs else "none"
        self._ctx.record(json.dumps({"op": "sslcreate", "user": cn, "ctx": dict(current.ctx)}, sort_keys=True))
        self._rec.record("sslcreate %s control=%d certs=%d cipher=%s"
                         % (cn, control is not None, len(info.certs), info.cipher))
        prx = current.adapter.add(SessionI(cn, self._rec), Ice.Identity(cn, "session"))
        return Glacier2.SessionPrx.uncheckedCast(prx)


if __name__ == "__main__":
    rec, contexts = RecorderI(), RecorderI()
    with communicator() as ic:
        serve(ic, int(sys.argv[1]), {"manager": ManagerI(rec, contexts), "sslmanager": SSLManagerI(rec, contexts),
                                     "recorder": rec, "contexts": contexts})
