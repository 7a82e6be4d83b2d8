"""The vector registry: builders and mutators add vectors here; every addition is checked
against the self-check decoder (oracle.py) before it can reach the manifest."""
import re

import containers
import oracle
from decoded import descriptor_map, quant_map
from encoder import Buf, encode, encode_quant, serialize, to_raw
from tables import ERROR_CODES, LIMITS, layout_kind

AREAS = ("dtype", "device", "layout", "quant", "sect", "desc", "kv", "file", "stream", "comp")
_ID = re.compile(r"^[yni]_(dtype|device|layout|quant|sect|desc|kv|file|stream|comp)_[a-z0-9_]+$")
# the id's first letter is the vector's class (vectors/SCHEMA.md § Classes)
CLASS_PREFIX = {"valid": "y", "invalid": "n", "implementation-defined": "i"}
# which kinds each area may hold (README § areas)
AREA_KINDS = {"kv": ("kv",), "file": ("file",), "stream": ("stream",), "comp": ("stream", "file")}


class GenError(Exception):
    pass


def shape_info(shape):
    resolved = [e for e in shape if e is not None]
    n = 0 if any(e == 0 for e in resolved) else 1
    if n:
        for e in resolved:
            n *= e
    return n, any(e is None for e in shape)


def fill(d, unknown_size=64):
    """Give a named-layout descriptor exactly the buffers it requires (required size, or
    `unknown_size` where the requirement cannot be evaluated)."""
    if d.buffers is not None:
        return d
    if layout_kind(d.layout) != "named":
        d.buffers = []
        return d
    n, dyn = shape_info(d.shape)
    req = oracle._requirements(d.dtype, d.layout, d.shape, n, dyn, d.byte_offset, d.params, d.quant)
    d.buffers = [Buf(unknown_size if r is None else r, 0 if r == 0 else 6) for r in req]
    return d


class Corpus:
    def __init__(self):
        self.vectors = {}

    def _add(self, v):
        vid = v["id"]
        if not _ID.match(vid) or "___" in vid:
            raise GenError(f"bad id {vid!r}")
        if vid in self.vectors:
            raise GenError(f"duplicate id {vid}")
        if vid[0] != CLASS_PREFIX[v["expect"]]:
            raise GenError(f"{vid}: a vector of class {v['expect']} is named {CLASS_PREFIX[v['expect']]}_...")
        area = vid.split("_")[1]
        if v["kind"] not in AREA_KINDS.get(area, ("descriptor", "quantization")):
            raise GenError(f"{vid}: kind {v['kind']} in area {area}")
        if v.get("options"):
            for k, val in v["options"].items():
                if k in ("cross_machine", "require_end_frame") and v["kind"] == "stream" and val is True:
                    continue
                if k not in LIMITS or not isinstance(val, int) or isinstance(val, bool):
                    raise GenError(f"{vid}: bad option {k}={val!r}")
        self.vectors[vid] = v

    # ------------------------------------------------------------ valid ---
    def y(self, vid, d, description, refs, options=None, trailing=b""):
        """A valid descriptor vector."""
        fill(d)
        body = encode(d)
        data = body + trailing
        decoded = descriptor_map(d, len(body))
        status, got = oracle.decode_descriptor(data, options)
        if status != "OK":
            raise GenError(f"{vid}: valid vector decodes as {status}: {got}")
        if got != decoded:
            raise GenError(f"{vid}: decoded mismatch\n model  {decoded}\n oracle {got}")
        for k in range(len(body)):  # the truncation sweep the manifest promises
            status, _ = oracle.decode_descriptor(data[:k], options)
            if status != "TRUNCATED":
                raise GenError(f"{vid}: prefix of {k} bytes decodes as {status}, not TRUNCATED")
        self._add({"id": vid, "kind": "descriptor", "expect": "valid", "data": data,
                   "decoded": decoded, "description": description, "spec_refs": refs,
                   "options": options})
        return d

    def yq(self, vid, q, description, refs):
        """A valid standalone quantization payload."""
        data = encode_quant(q)
        decoded = quant_map(q)
        status, got = oracle.decode_quantization(data)
        if status != "OK" or got != decoded:
            raise GenError(f"{vid}: standalone quantization {status}: {got} vs {decoded}")
        self._add({"id": vid, "kind": "quantization", "expect": "valid", "data": data,
                   "decoded": decoded, "description": description, "spec_refs": refs})

    # ------------------------------------------------------------ invalid ---
    def _n(self, vid, kind, data, error, description, refs, options):
        if error not in ERROR_CODES or error == "OK":
            raise GenError(f"{vid}: bad error {error}")
        if kind == "descriptor":
            status, where = oracle.decode_descriptor(data, options)
        else:
            status, where = oracle.decode_quantization(data)
        if status != error:
            raise GenError(f"{vid}: expected {error}, oracle says {status} ({where})")
        self._add({"id": vid, "kind": kind, "expect": "invalid", "error": error, "data": data,
                   "description": description, "spec_refs": refs, "options": options,
                   "where": where})

    def n_bytes(self, vid, data, error, description, refs, options=None):
        self._n(vid, "descriptor", bytes(data), error, description, refs, options)

    def n(self, vid, base, mutate, error, description, refs, options=None, base_options=None):
        """An invalid descriptor: `base` (a Desc) must be valid on its own (under
        base_options); `mutate(raw)` edits its raw record to break exactly one rule. With
        mutate=None, `base` itself is the invalid descriptor (a model-level break) and
        only its encoding is checked."""
        if mutate is None:
            fill(base)
            self._n(vid, "descriptor", encode(base), error, description, refs, options)
            return
        fill(base)
        status, where = oracle.decode_descriptor(encode(base), base_options)
        if status != "OK":
            raise GenError(f"{vid}: base is not valid: {status} {where}")
        raw = to_raw(base)
        mutate(raw)
        self._n(vid, "descriptor", serialize(raw), error, description, refs, options)

    def nq(self, vid, data, error, description, refs):
        self._n(vid, "quantization", bytes(data), error, description, refs, None)

    # ------------------------------------------------------------ KV sections ---
    def ykv(self, vid, entries, description, refs, options=None):
        """A valid standalone KV section of a model map (encoded canonically)."""
        data = containers.kv_encode(entries)
        decoded = {"entries": containers.kv_decoded(entries), "encoded_len": len(data)}
        status, got = oracle.decode_kv(data, options)
        if status != "OK" or got != decoded:
            raise GenError(f"{vid}: kv {status}: {got}\n model {decoded}")
        if containers.kv_encode(containers.kv_model(got["entries"])) != data:
            raise GenError(f"{vid}: re-encoding the decoded map does not reproduce the section")
        for k in range(len(data)):
            status, _ = oracle.decode_kv(data[:k], options)
            if status != "TRUNCATED":
                raise GenError(f"{vid}: prefix of {k} bytes decodes as {status}, not TRUNCATED")
        self._add({"id": vid, "kind": "kv", "expect": "valid", "data": data, "decoded": decoded,
                   "description": description, "spec_refs": refs, "options": options})

    def nkv(self, vid, data, error, description, refs, options=None):
        self._nx(vid, "kv", bytes(data), error, description, refs, options)

    # ------------------------------------------------------------ files ---
    def yfile(self, vid, named, description, refs, kv=None, options=None, vmin=0):
        """A valid file of [(name, item)] and a KV model map (None / {}: no section)."""
        raw = containers.file_raw(named, kv)
        raw["vmin"] = vmin
        data, _ = containers.file_serialize(raw)
        decoded = containers.file_decoded(named, kv, (1, vmin))
        status, got = oracle.decode_file(data, options)
        if status != "OK" or got != decoded:
            raise GenError(f"{vid}: file {status}: {got}\n model {decoded}")
        mv = memoryview(data)
        for k in range(len(data)):
            status, _ = oracle.decode_file(mv[:k], options)
            if status != "TRUNCATED":
                raise GenError(f"{vid}: prefix of {k} bytes decodes as {status}, not TRUNCATED")
        v = {"id": vid, "kind": "file", "expect": "valid", "data": data, "decoded": decoded,
             "description": description, "spec_refs": refs, "options": options}
        if vmin != 0:
            v["roundtrip"] = False
        self._add(v)
        return data

    def nfile(self, vid, data, error, description, refs, options=None):
        self._nx(vid, "file", bytes(data), error, description, refs, options)

    # ------------------------------------------------------------ streams ---
    def ystream(self, vid, items, description, refs, options=None, end=False, trailing=b""):
        """A valid stream: `items`, then (end=True) the end frame and `trailing` bytes after
        it, which a reader does not read (stream.md HR-STREAM-12)."""
        if trailing and not end:
            raise GenError(f"{vid}: trailing bytes only follow an end frame")
        data, info = containers.stream_encode(items, end)
        data += trailing
        decoded = containers.stream_decoded(items, end)
        status, got, n = oracle.decode_stream(data, options)
        if status != "OK" or got != decoded:
            raise GenError(f"{vid}: stream {status}: {got}\n model {decoded}")
        cuts = decoded["frame_offsets"]
        stop = info["size"]  # past the end frame, or the end of the items
        need_end = bool((options or {}).get("require_end_frame"))
        for k in range(len(data)):  # the stream truncation sweep (SCHEMA.md § Running a vector)
            status, got, n = oracle.decode_stream(data[:k], options)
            whole = sum(1 for e in cuts[1:] if e <= k)
            if end and k >= stop:
                want, want_end = "OK", "end_frame"
            elif k in cuts and not need_end:
                want, want_end = "OK", "eof"
            else:
                want, want_end = "TRUNCATED", None
            if status != want or n != whole or (want == "OK" and got["end"] != want_end):
                raise GenError(f"{vid}: prefix of {k} bytes: {status} after {n} items, "
                               f"not {want} after {whole}")
        self._add({"id": vid, "kind": "stream", "expect": "valid", "data": data,
                   "decoded": decoded, "description": description, "spec_refs": refs,
                   "options": options})
        return data

    def nstream(self, vid, data, error, after, description, refs, options=None):
        self._nx(vid, "stream", bytes(data), error, description, refs, options, after)

    # ------------------------------------------------------------ implementation-defined ---
    def i(self, vid, kind, data, outcomes, description, refs, options=None):
        """An implementation-defined vector: the spec allows every status in `outcomes`
        ("OK" = accepted); the oracle's own outcome must be one of them."""
        if not outcomes or len(set(outcomes)) != len(outcomes) or \
                any(o not in ERROR_CODES for o in outcomes):
            raise GenError(f"{vid}: bad outcomes {outcomes}")
        decoders = {"descriptor": lambda: oracle.decode_descriptor(data, options),
                    "quantization": lambda: oracle.decode_quantization(data),
                    "kv": lambda: oracle.decode_kv(data, options),
                    "file": lambda: oracle.decode_file(data, options),
                    "stream": lambda: oracle.decode_stream(data, options)[:2]}
        status, where = decoders[kind]()
        if status not in outcomes:
            raise GenError(f"{vid}: the oracle says {status} ({where}), not one of {outcomes}")
        self._add({"id": vid, "kind": kind, "expect": "implementation-defined", "data": bytes(data),
                   "i_outcomes": list(outcomes), "description": description, "spec_refs": refs,
                   "options": options})

    def _nx(self, vid, kind, data, error, description, refs, options, after=None):
        if error not in ERROR_CODES or error == "OK":
            raise GenError(f"{vid}: bad error {error}")
        if kind == "kv":
            status, where = oracle.decode_kv(data, options)
        elif kind == "file":
            status, where = oracle.decode_file(data, options)
        else:
            status, where, n = oracle.decode_stream(data, options)
            if status == error and n != after:
                raise GenError(f"{vid}: {error} after {n} items, declared {after} ({where})")
        if status != error:
            raise GenError(f"{vid}: expected {error}, oracle says {status} ({where})")
        v = {"id": vid, "kind": kind, "expect": "invalid", "error": error, "data": data,
             "description": description, "spec_refs": refs, "options": options, "where": where}
        if kind == "stream":
            v["error_after_items"] = after
        self._add(v)
