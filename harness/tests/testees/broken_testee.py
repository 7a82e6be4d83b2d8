#!/usr/bin/env python3
"""A deliberately broken testee, for the runner's robustness tests (test_testee.py).

    broken_testee.py MODE TARGET -- REAL_TESTEE_COMMAND...

A proxy: it starts the real testee and relays every request and answer, except that when a
request concerns vector TARGET (its "id"; TARGET "hello" means the hello request, "*" every
request, "sweep:ID" only the truncation-sweep request of vector ID) it misbehaves in the way
MODE says instead of relaying:

  hang            never answer (sleep)
  crash           die by SIGSEGV              exit         exit with status 3
  garbage         a frame of non-CBOR bytes   not-a-map    a CBOR array
  long-length     declare 100 more bytes than it sends (then wait)
  short-length    declare 5 fewer bytes than it sends (the rest trails the frame)
  zero-length     a frame of length 0         huge-length  a frame of length 2^31
  deep            an answer nested 100000 arrays deep
  trailing-cbor   two CBOR items in one frame
  bad-status      {"status": 7}               unknown-status  {"status": "NOPE"}
  wrong-status    "OK" <-> "LENGTH" swapped on the real answer
  extra-key       the real answer plus {"bogus": 1}
  skip            {"skip": "not implemented here"}
  banner          write a text banner on stdout before the hello answer
  protocol-3      answer hello with protocol 3 (the runner speaks 2)
  protocol-1      answer hello with protocol 1 (no end states: an older testee)
  wrong-end       a decode answer's "end" (a stream's end state) changed: "eof" <->
                  "end_frame", null -> "eof"
  wrong-ends      the same for every entry of a sweep answer's "ends"
  exit-after      relay the answer, then exit (the runner must restart it quietly)

The real testee runs as a child; the proxy exits at the end of its input.
"""
import os
import signal
import struct
import subprocess
import sys
import time

import cbor2


def read_frame(f):
    hdr = f.read(4)
    if len(hdr) < 4:
        return None
    (n,) = struct.unpack("<I", hdr)
    return f.read(n)


def write_raw(data):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def frame(body):
    return struct.pack("<I", len(body)) + body


def flip_end(end):
    return {"eof": "end_frame", "end_frame": "eof"}.get(end, "eof")


def main():
    mode, target = sys.argv[1], sys.argv[2]
    real = sys.argv[sys.argv.index("--") + 1:]
    child = subprocess.Popen(real, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    first = True
    while True:
        body = read_frame(sys.stdin.buffer)
        if body is None:
            child.stdin.close()
            child.wait()
            return 0
        req = cbor2.loads(body)
        child.stdin.write(frame(body))
        child.stdin.flush()
        answer = read_frame(child.stdout)
        hit = target == "*" or (target == "hello" and req.get("op") == "hello") or \
            req.get("id") == target or \
            (req.get("op") == "sweep" and f"sweep:{req.get('id')}" == target)
        if first and mode == "banner":
            write_raw(b"broken testee v0 starting\n")
        first = False
        if not hit:
            write_raw(frame(answer))
            continue
        if mode == "hang":
            time.sleep(3600)
        elif mode == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif mode == "exit":
            sys.exit(3)
        elif mode == "garbage":
            write_raw(frame(b"\xff\xfe this is not CBOR"))
        elif mode == "not-a-map":
            write_raw(frame(cbor2.dumps([1, 2, 3])))
        elif mode == "long-length":
            write_raw(struct.pack("<I", len(answer) + 100) + answer)
        elif mode == "short-length":
            write_raw(struct.pack("<I", len(answer) - 5) + answer)
        elif mode == "zero-length":
            write_raw(struct.pack("<I", 0))
        elif mode == "huge-length":
            write_raw(struct.pack("<I", 1 << 31) + b"\xa0")
        elif mode == "deep":
            write_raw(frame(b"\x81" * 100000 + b"\x00"))
        elif mode == "trailing-cbor":
            write_raw(frame(answer + b"\x00"))
        elif mode in ("bad-status", "unknown-status", "wrong-status", "extra-key", "skip",
                      "protocol-3", "protocol-1", "wrong-end", "wrong-ends"):
            a = cbor2.loads(answer)
            if mode == "bad-status":
                a = {"status": 7}
            elif mode == "unknown-status":
                a["status"] = "NOPE"
            elif mode == "wrong-status":
                a = {"status": "LENGTH"} if a.get("status") == "OK" else {"status": "OK"}
            elif mode == "extra-key":
                a["bogus"] = 1
            elif mode == "skip":
                a = {"skip": "not implemented here"}
            elif mode == "protocol-3":
                a["protocol"] = 3
            elif mode == "protocol-1":
                a["protocol"] = 1
            elif mode == "wrong-end" and "end" in a:
                a["end"] = flip_end(a["end"])
            elif mode == "wrong-ends" and "ends" in a:
                a["ends"] = [flip_end(e) for e in a["ends"]]
            write_raw(frame(cbor2.dumps(a)))
        elif mode == "exit-after":
            write_raw(frame(answer))
            sys.stdout.close()
            sys.exit(0)
        else:
            sys.exit(f"broken_testee: unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main())
