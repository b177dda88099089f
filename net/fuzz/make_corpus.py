#!/usr/bin/env python3
"""Writes the seed corpora of the connection fuzz targets from the golden vectors
(tests/vectors/*.jsonl, real Ice 3.7.8 traffic):

  router/fuzz/corpus/          client_connection_fuzz: what a client sent to Glacier2, per connection
  icestorm-bridge/fuzz/corpus/ topic_publisher_fuzz: what a peer sent to IceStorm's TopicManager
                               and Publish endpoints, per connection

Each seed is one input as connection_harness.hpp reads it: a mode byte, a chunk table, then the
stream. Every stream is written whole (one chunk) and also cut in small pieces, under a few modes.
Run from anywhere: net/fuzz/make_corpus.py (it replaces the seeds it writes, keeps others).
"""
import struct
import json
import pathlib

root = pathlib.Path(__file__).resolve().parents[3]
vectors = root / "tests" / "vectors"

# chunk tables: whole; 1, 7 and 60 bytes in turn (a header cut anywhere); 3 bytes then 64.
CHUNKINGS = {"whole": [], "cut": [1, 7, 60], "small": [3, 128]}


def streams(leg, sender):
    """{(scenario, conn): bytes} of the messages `sender` wrote on `leg`, in order."""
    out = {}
    for path in sorted(vectors.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("leg") != leg or "hex" not in rec or not rec.get("dir", "").startswith(sender + "->"):
                continue
            key = (path.stem, rec["conn"])
            out[key] = out.get(key, b"") + bytes.fromhex(rec["hex"])
    return out


def replace_in_messages(stream, old, new):
    """`stream` with `old` replaced by `new` inside each message, its header's size fixed."""
    out = b""
    while len(stream) >= 14:
        size = struct.unpack_from("<i", stream, 10)[0]
        message = stream[:size].replace(old, new)
        out += message[:10] + struct.pack("<i", len(message)) + message[14:]
        stream = stream[size:]
    return out + stream


def seed(mode, chunking, stream):
    table = CHUNKINGS[chunking]
    return bytes([mode, len(table)] + table) + stream


def write(dir_, name, data):
    dir_.mkdir(parents=True, exist_ok=True)
    (dir_ / f"{name}.bin").write_bytes(data)


def router_corpus():
    dir_ = root / "router" / "fuzz" / "corpus"
    # mode: bit 0 session, bit 1 routes, bit 2 stalled peer, bits 3-4 configuration (see the target)
    for (scenario, conn), data in streams("client-router", "client").items():
        write(dir_, f"{scenario}-{conn}-whole", seed(0x00, "whole", data))
        write(dir_, f"{scenario}-{conn}-cut-buffered", seed(0x08, "cut", data))
        write(dir_, f"{scenario}-{conn}-small-filters", seed(0x10, "small", data))
        # the same requests once a session and its routes exist (createSession again: refused)
        write(dir_, f"{scenario}-{conn}-routes-hold", seed(0x1B, "whole", data))


def topics_corpus():
    dir_ = root / "icestorm-bridge" / "fuzz" / "corpus"
    # mode: bit 0 publish side, bit 1 subscribers, bit 2 topic, bit 3 link, bit 4 stalled, bit 5 shard 1
    for (scenario, conn), data in streams("peer-publish", "peer").items():
        write(dir_, f"{scenario}-publish-{conn}-subscribers", seed(0x03, "whole", data))
        write(dir_, f"{scenario}-publish-{conn}-linked-cut", seed(0x2F, "cut", data))
        write(dir_, f"{scenario}-publish-{conn}-topic-small", seed(0x45, "small", data))
        if b"clock-b.link" in data:  # a linked IceStorm's forward, to this service's own topic
            own = replace_in_messages(data, b"\x0cclock-b.link", b"\x0aclock.link")
            write(dir_, f"{scenario}-publish-{conn}-forward-subscribers", seed(0x03, "whole", own))
    for (scenario, conn), data in streams("peer-topicmanager", "peer").items():
        write(dir_, f"{scenario}-manager-{conn}-empty", seed(0x00, "whole", data))
        write(dir_, f"{scenario}-manager-{conn}-subscribers-cut", seed(0x22, "cut", data))
        write(dir_, f"{scenario}-manager-{conn}-topic-small", seed(0x0C, "small", data))


if __name__ == "__main__":
    router_corpus()
    topics_corpus()
