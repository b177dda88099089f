#!/usr/bin/python3
"""Datagram back end: hosts `hello` on tcp and udp, both 127.0.0.1:PORT (the udp scenarios,
tests/interop/scenarios_udp.py).

  udp_backend.py PORT

It is backend.py's Hello with two differences:
- note(msg) is counted under "msg@udp" or "msg@tcp" (the transport it arrived on), and
  "msg@id<N>" for a request id N other than 0, so a scenario can tell a datagram from a
  oneway over tcp: countOf("x@udp") is the number of notes "x" that came as datagrams;
- its callbacks are datagrams: burst(cb, prefix, n, ...) calls cb->ice_datagram()->ping(prefix + i)
  n times (the `oneway` and pause arguments are ignored), callMeBackOneway(cb, msg) once.
"""
import sys

import Ice

from backend import HelloI
from peer_common import communicator


class DatagramHelloI(HelloI):
    def note(self, msg, current):
        udp = isinstance(current.con.getInfo(), Ice.UDPConnectionInfo)
        super().note("%s@%s" % (msg, "udp" if udp else "tcp"), current)
        if current.requestId != 0:
            super().note("%s@id%d" % (msg, current.requestId), current)

    def callMeBackOneway(self, cb, msg, current):
        cb.ice_datagram().ping(msg)

    def burst(self, cb, prefix, n, ctx, pause_after_first_ms, oneway, current):
        prx = cb.ice_datagram()
        for i in range(n):
            prx.ping("%s%d" % (prefix, i), ctx)


if __name__ == "__main__":
    with communicator() as ic:
        port = int(sys.argv[1])
        adapter = ic.createObjectAdapterWithEndpoints(
            "Peer", "tcp -h 127.0.0.1 -p %d:udp -h 127.0.0.1 -p %d" % (port, port))
        adapter.add(DatagramHelloI(), Ice.stringToIdentity("hello"))
        adapter.activate()
        print("ready", flush=True)
        ic.waitForShutdown()
