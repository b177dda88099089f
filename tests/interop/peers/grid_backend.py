#!/usr/bin/python3
"""Demo back end registered with an IceGrid registry (dynamic registration): hosts `hello` and
`greeter` (the scenarios register the latter as a well-known object) in an
object adapter with an adapter id, on 127.0.0.1:PORT; the adapter registers its endpoints with
the locator when it is activated, and unregisters them when it is deactivated.

  grid_backend.py PORT LOCATOR_PORT ADAPTER_ID [REPLICA_GROUP_ID]

With REPLICA_GROUP_ID the adapter registers as a member of that replica group (dynamic
registration creates the group).
"""
import sys

import Ice

from backend import HelloI
from peer_common import communicator

if __name__ == "__main__":
    port, locator_port, adapter_id = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    with communicator() as ic:
        props = ic.getProperties()
        props.setProperty("Grid.Endpoints", "tcp -h 127.0.0.1 -p %d" % port)
        props.setProperty("Grid.AdapterId", adapter_id)
        props.setProperty("Grid.Locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p %d" % locator_port)
        if len(sys.argv) > 4 and not sys.argv[4].startswith("--"):
            props.setProperty("Grid.ReplicaGroupId", sys.argv[4])
        adapter = ic.createObjectAdapter("Grid")
        adapter.add(HelloI(), Ice.stringToIdentity("hello"))
        adapter.add(HelloI(), Ice.stringToIdentity("greeter"))
        adapter.activate()  # registers with the locator (setAdapterDirectProxy) before it returns
        print("ready", flush=True)
        ic.waitForShutdown()
