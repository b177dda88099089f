#!/usr/bin/python3
"""Demo back end: hosts `hello`, `allowed/hello` (for category filters) and `slowhello` (its
note() takes 20 ms: the buffered-mode override scenarios) on 127.0.0.1:PORT.

  backend.py PORT [--Ice.Config=FILE]

The endpoint is tcp, or ssl when FILE sets Ice.Default.Protocol=ssl (with the IceSSL plugin's
properties): the TLS scenarios' back end.
"""
import sys
import threading
import time

from peer_common import Demo, communicator, serve


class HelloI(Demo.Hello):
    def __init__(self, note_delay=0.0):
        self._lock = threading.Lock()
        self._notes = {}
        self._order = []  # every note, in arrival order (notesFrom)
        self._note_delay = note_delay
        self._last_ctx = {}

    def sayHello(self, name, current):
        self._last_ctx = dict(current.ctx)
        return "hello " + name

    def fail(self, why, current):
        raise Demo.Boom(why)

    def note(self, msg, current):
        with self._lock:
            self._notes[msg] = self._notes.get(msg, 0) + 1
            self._order.append(msg)
        if self._note_delay:
            time.sleep(self._note_delay)

    def count(self, current):
        with self._lock:
            return sum(self._notes.values())

    def countOf(self, msg, current):
        with self._lock:
            return self._notes.get(msg, 0)

    def callMeBack(self, cb, msg, current):
        cb.ping(msg)

    def callMeBackOneway(self, cb, msg, current):
        cb.ice_oneway().ping(msg)

    def lastContext(self, current):
        return self._last_ctx

    def burst(self, cb, prefix, n, ctx, pause_after_first_ms, oneway, current):
        prx = cb.ice_oneway() if oneway else cb.ice_twoway()
        for i in range(n):
            prx.ping("%s%d" % (prefix, i), ctx)
            if i == 0 and pause_after_first_ms > 0:
                time.sleep(pause_after_first_ms / 1000.0)

    def notesFrom(self, prefix, current):
        with self._lock:
            return [m for m in self._order if m.startswith(prefix)]


if __name__ == "__main__":
    with communicator() as ic:
        serve(ic, int(sys.argv[1]), {"hello": HelloI(), "allowed/hello": HelloI(), "slowhello": HelloI(0.02)})
