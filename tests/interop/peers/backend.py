#!/usr/bin/python3
"""Demo back end: hosts `hello` and `allowed/hello` (for category filters) on 127.0.0.1:PORT.

  backend.py PORT [--Ice.Config=FILE]

The endpoint is tcp, or ssl when FILE sets Ice.Default.Protocol=ssl (with the IceSSL plugin's
properties): the TLS scenarios' back end.
"""
import sys
import threading

from peer_common import Demo, communicator, serve


class HelloI(Demo.Hello):
    def __init__(self):
        self._lock = threading.Lock()
        self._notes = {}
        self._last_ctx = {}

    def sayHello(self, name, current):
        self._last_ctx = dict(current.ctx)
        return "hello " + name

    def fail(self, why, current):
        raise Demo.Boom(why)

    def note(self, msg, current):
        with self._lock:
            self._notes[msg] = self._notes.get(msg, 0) + 1

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


if __name__ == "__main__":
    with communicator() as ic:
        serve(ic, int(sys.argv[1]), {"hello": HelloI(), "allowed/hello": HelloI()})
