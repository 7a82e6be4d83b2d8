"""Atheris target: the Python binding's readers of untrusted bytes (make fuzz-python).

The first input byte picks the entry point, the rest is what it reads:
  0  hurray.Descriptor.decode(bytes), then encode() and a second decode of that
  1  hurray.decode_quantization(bytes)
  2  hurray.StreamReader over the bytes (a buffer), every item read
  3  hurray.StreamReader over a pipe (an fd; the bytes written and the write end closed
     first, so a reader that waited for more would hang: a finding through -timeout)
  4  hurray.load(path) of the bytes as a file, copy mode; 5 the same with mmap=True
  6  hurray.load_kv(path)
every one under the default limits, as users call them.

The oracle, beyond "the interpreter does not crash": an entry point either returns or raises
one of the binding's exception classes for malformed input (hurray.HurrayError and its
subclasses, InternalError excepted: that one says the C library's invariant failed). Anything
else -- InternalError, SystemError, MemoryError (amplification), TypeError, ValueError, a
reference leak the debug build would catch -- propagates and atheris reports it with the input.

Coverage: atheris instruments the Python side (the hurray package's modules); `make fuzz-python`
runs a build of the extension with clang's coverage callbacks and ASan+UBSan, under the
libFuzzer + ASan runtime of the atheris wheel (asan_with_fuzzer.so, preloaded), so libFuzzer
sees the C code's coverage too (fuzz/fuzz.mk and fuzz/README.md § Python say how). The seeds are
the vectors and the campaign's corpora, each prefixed with the entry bytes of its kind. When
HURRAY_FUZZ_SITE names that build, the run refuses to start on any other copy of hurray.
"""
import os
import sys
import tempfile

import atheris

with atheris.instrument_imports():
    import hurray

_SITE = os.environ.get("HURRAY_FUZZ_SITE")
if _SITE and not os.path.abspath(hurray.__file__).startswith(os.path.join(_SITE, "")):
    raise SystemExit(f"fuzz_python: hurray comes from {hurray.__file__}, not the instrumented "
                     f"build in {_SITE}")

_TMP = tempfile.NamedTemporaryFile(prefix="hurray-atheris-", suffix=".hry", delete=False)
_TMP.close()


def _expected(exc):
    return isinstance(exc, hurray.HurrayError) and not isinstance(exc, hurray.InternalError)


def _touch(item):
    """Reads what an accepted item exposes (the descriptor fields, the members)."""
    if isinstance(item, hurray.Composite):
        _ = (item.composition_rule, item.combine_op, item.member_roles, item.descriptor)
        for m in item.members:
            _touch(m)
        return
    _ = (item.dtype, item.shape, item.layout, item.buffer_count, item.quantization)


def _descriptor(data):
    d = hurray.Descriptor.decode(data)
    again = hurray.Descriptor.decode(d.encode())
    if again != d:
        raise AssertionError("decode(encode(d)) != d")
    _ = (d.dtype, d.shape, d.layout, d.buffer_handles, d.quantization, d.statistics, d.shard)


def _stream(source):
    with hurray.StreamReader(source) as r:
        for item in r:
            _touch(item)


def _pipe(data):
    if len(data) > 60 * 1024:  # what a pipe holds without a reader
        return
    rfd, wfd = os.pipe()
    try:
        os.write(wfd, data)
        os.close(wfd)
        wfd = -1
        _stream(rfd)
    finally:
        os.close(rfd)
        if wfd >= 0:
            os.close(wfd)


def _file(data, **kw):
    with open(_TMP.name, "wb") as f:
        f.write(data)
    for item in hurray.load(_TMP.name, **kw).values():
        _touch(item)


def _kv(data):
    with open(_TMP.name, "wb") as f:
        f.write(data)
    hurray.load_kv(_TMP.name)


ENTRIES = (
    _descriptor,
    hurray.decode_quantization,
    lambda d: _stream(d),
    _pipe,
    _file,
    lambda d: _file(d, mmap=True),
    _kv,
)


def TestOneInput(data):
    if not data:
        return
    entry = ENTRIES[data[0] % len(ENTRIES)]
    try:
        entry(bytes(data[1:]))
    except Exception as e:  # noqa: BLE001 -- the oracle sorts them
        if not _expected(e):
            raise


# which entry bytes a vector of each manifest kind seeds
SEED_ENTRIES = {"descriptor": (0,), "quantization": (1,), "stream": (2, 3), "file": (4, 5, 6)}
CORPUS_ENTRIES = {"fuzz_descriptor": (0,), "fuzz_quant": (1,), "fuzz_stream": (2, 3),
                  "fuzz_file": (4, 5, 6)}


def make_seeds(out, vectors, corpora):
    """Writes the seeds: every vector (and campaign corpus entry) under 64 KiB, prefixed with
    the entry bytes that read its kind."""
    import cbor2

    os.makedirs(out, exist_ok=True)
    n = 0

    def put(entries, data):
        nonlocal n
        if len(data) > 64 * 1024:
            return
        for e in entries:
            with open(os.path.join(out, f"seed-{n:06d}"), "wb") as f:
                f.write(bytes([e]) + data)
            n += 1

    with open(os.path.join(vectors, "manifest.cbor"), "rb") as f:
        for v in cbor2.load(f)["vectors"]:
            if v["kind"] in SEED_ENTRIES:
                with open(os.path.join(vectors, v["path"]), "rb") as g:
                    put(SEED_ENTRIES[v["kind"]], g.read())
    for target, entries in CORPUS_ENTRIES.items():
        d = os.path.join(corpora, target)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            with open(os.path.join(d, name), "rb") as g:
                put(entries, g.read())
    print(f"fuzz_python: {n} seeds in {out}")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--make-seeds":
        make_seeds(*sys.argv[2:])
        os.unlink(_TMP.name)
        return
    atheris.Setup(sys.argv, TestOneInput)
    try:
        atheris.Fuzz()
    finally:
        os.unlink(_TMP.name)


if __name__ == "__main__":
    main()
