#!/usr/bin/env python3
"""A minimal testee: the smallest program the conformance runner can test.

It implements one thing, the first four steps of descriptor.md § Decoding order — the 16-byte
descriptor header — and answers everything else with "skip". That is enough to take part: run
it with its failure list and the run passes while it fails exactly the vectors it cannot decide.

    hurray-conformance --vectors vectors --kind descriptor \\
        --testee "python3 docs/conformance/minimal_testee.py" \\
        --failure-list docs/conformance/minimal_testee.failures

It links nothing of this repository (the standard library and cbor2 only), so it is also the
template for a testee in another language: replace decode_header() with a call into your
decoder and fill in "decoded" and "encoded" (README.md in this folder walks through it;
testee-protocol.md is the byte-level specification).
"""
import struct
import sys

import cbor2

FRAME_MAX = 1 << 30  # a frame's length is 1 .. 2^30 - 1


# ---------------------------------------------------------------- the "decoder" ---
class Undecided(Exception):
    """The header is fine; the rest of the descriptor is not implemented here."""


def decode_header(data, limits):
    """Steps 1-4 of descriptor.md § Decoding order. Returns a status name, or raises
    Undecided when all four steps pass (a real decoder would go on with step 5)."""
    if len(data) < 16:                                    # 1. the header is there
        return "TRUNCATED"
    if data[0:4] != b"HRYD":                              # 2. magic
        return "BAD_MAGIC"
    if data[4] != 1:                                      #    major version
        return "VERSION"
    if any(data[6:8]) or any(data[12:16]):                #    reserved bytes
        return "RESERVED_NONZERO"
    (encoded_len,) = struct.unpack_from("<I", data, 8)    # 3. encoded_len
    if encoded_len < 40 or encoded_len % 8:
        return "LENGTH"
    if encoded_len > min(limits["max_descriptor_bytes"], (1 << 32) - 8):
        return "LIMIT"
    if len(data) < encoded_len:                           # 4. the whole descriptor is there
        return "TRUNCATED"
    raise Undecided("steps 5 and later are not implemented")


# ---------------------------------------------------------------- the protocol ---
def on_hello(req):
    # protocol 2 (testee-protocol.md § 2); name and version appear in the runner's report
    return {"protocol": 2, "name": "minimal-testee", "version": "1"}


def on_decode(req):
    # testee-protocol.md § 3. A full testee answers {"status": "OK", "decoded": {...},
    # "encoded": b"..."} for an accepted input; this one never accepts anything.
    if req["kind"] != "descriptor":
        return {"skip": f"kind {req['kind']} is not implemented"}
    try:
        return {"status": decode_header(req["input"], req["limits"])}
    except Undecided as e:
        return {"skip": str(e)}


def on_sweep(req):
    # testee-protocol.md § 4: one status per prefix length of the input
    if req["kind"] != "descriptor":
        return {"skip": f"kind {req['kind']} is not implemented"}
    statuses = []
    for k in req["lengths"]:
        try:
            statuses.append(decode_header(req["input"][:k], req["limits"]))
        except Undecided as e:
            return {"skip": str(e)}
    return {"statuses": statuses}


HANDLERS = {"hello": on_hello, "decode": on_decode, "sweep": on_sweep}


def read_frame(stream):
    """One request: a 4-byte little-endian length, then that many bytes of CBOR.
    None at the end of input (the runner is done)."""
    header = stream.read(4)
    if len(header) < 4:
        return None
    (length,) = struct.unpack("<I", header)
    if not 0 < length < FRAME_MAX:
        raise SystemExit(f"minimal_testee: bad frame length {length}")
    body = stream.read(length)
    if len(body) < length:
        raise SystemExit("minimal_testee: input ended inside a frame")
    return cbor2.loads(body)


def write_frame(stream, answer):
    body = cbor2.dumps(answer)
    stream.write(struct.pack("<I", len(body)) + body)
    stream.flush()  # the runner waits for this answer before it sends anything else


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        req = read_frame(stdin)
        if req is None:
            return 0
        handler = HANDLERS.get(req.get("op"))
        write_frame(stdout, handler(req) if handler else {"skip": "unknown op"})


if __name__ == "__main__":
    sys.exit(main())
