"""The manifest's `decoded` map, derived from the generator's model (vectors/README.md
§ decoded). The self-check decoder (oracle.py) derives the same map from the bytes; the
generator requires both to agree for every valid vector."""
from tables import (BLOCK_PAGED, COMBINES, COMPOSITE, CSF, COO, CSC, CSR, DTYPES, ROLES, RULES,
                    SCHEMES, STRIDED, SYNC_MODES, TILED, device_name, dtype_name, layout_kind,
                    layout_name, memclass_name)

ABSENT = 0xFF


def _idx(v):
    return None if v == ABSENT else v


def quant_map(q):
    s = q["scheme"]
    m = {"scheme": SCHEMES[s][0]}
    if s == 0x01:
        m["scale"] = {"f64": q["scale"]}
        m["zero_point"] = q["zero_point"]
    elif s in (0x02, 0x03):
        m["axis"] = q["axis"]
        m["scale_buffer_index"] = q["scale_idx"]
        m["zero_point_buffer_index"] = _idx(q["zp_idx"])
        m["scale_dtype"] = DTYPES[q["scale_dtype"]][0]
        m["zero_point_dtype"] = None if q["zp_dtype"] == 0 else DTYPES[q["zp_dtype"]][0]
        if s == 0x03:
            m["block_size"] = q["block_size"]
    elif s == 0x04:
        m["double_quant"] = bool(q["flags"] & 1)
        m["block_size"] = q["block_size"]
        m["absmax_buffer_index"] = q["absmax_idx"]
        m["nested_absmax_buffer_index"] = _idx(q["nested_idx"])
        m["quant_map_buffer_index"] = _idx(q["qmap_idx"])
        m["nested_block_size"] = q["nested_block_size"]
        m["nested_offset"] = {"f32": q["nested_offset"]}
    elif s == 0x05:
        m["axis"] = q["axis"]
        m["scale_buffer_index"] = q["scale_idx"]
        m["block_size"] = q["block_size"]
    elif s == 0x06:
        m["axis"] = q["axis"]
        m["scale_buffer_index"] = q["scale_idx"]
        m["block_size"] = q["block_size"]
        m["tensor_scale"] = {"f32": q["tensor_scale"]}
    return m


def layout_map(layout, p):
    m = {"tag": layout, "name": layout_name(layout)}
    kind = layout_kind(layout)
    if kind == "private":
        m["extension_layout_id"] = p["extension_layout_id"]
        m["extension_data"] = bytes(p["extension_data"])
    elif kind == "reserved":
        m["params"] = bytes(p["params"])
    elif layout == STRIDED:
        m["strides"] = list(p["strides"])
    elif layout == TILED:
        m["tile_shape"] = list(p["tile_shape"])
        m["outer_strides"] = list(p["outer_strides"])
        m["inner_strides"] = list(p["inner_strides"])
    elif layout in (COO, CSR, CSC):
        m["nnz"] = p["nnz"]
    elif layout == CSF:
        m["nnz"] = p["nnz"]
        m["fiber_counts"] = list(p["fiber_counts"])
        m["mode_order"] = list(p["mode_order"])
    elif layout == BLOCK_PAGED:
        for k in ("page_size", "num_pages", "num_seqs", "num_blocks"):
            m[k] = p[k]
    elif layout == COMPOSITE:
        m["rule"] = RULES[p["rule"]]
        m["combine"] = COMBINES.get(p["combine"]) if p["combine"] else None
        m["member_count"] = p["member_count"]
    return m


def stats_map(st):
    f = st["flags"]
    mm, nc = bool(f & 1), bool(f & 2)
    return {
        "has_min_max": mm,
        "has_nan_count": nc,
        "min": {"f64": st["min"]} if mm else None,
        "max": {"f64": st["max"]} if mm else None,
        "nan_count": st["nan_count"] if nc else None,
    }


def descriptor_map(d, encoded_len):
    return {
        "encoded_len": encoded_len,
        "version": [d.version[0], d.version[1]],
        "dtype": dtype_name(d.dtype),
        "dtype_tag": d.dtype,
        "device": device_name(d.device),
        "device_tag": d.device,
        "memory_class": memclass_name(d.memclass),
        "memory_class_tag": d.memclass,
        "shape": list(d.shape),
        "byte_offset": d.byte_offset,
        "buffers": [{"size": b.size, "alignment": 1 << b.align, "sync_mode": SYNC_MODES[b.sync]}
                    for b in d.buffers],
        "layout": layout_map(d.layout, d.params),
        "quantization": quant_map(d.quant) if d.quant is not None else None,
        "statistics": stats_map(d.stats) if d.stats is not None else None,
        "shard": ({"shard_index": d.shard["index"], "shard_count": d.shard["count"],
                   "global_shape": list(d.shard["global_shape"]),
                   "global_offset": list(d.shard["global_offset"])}
                  if d.shard is not None else None),
        "role": ROLES[d.role] if d.role is not None else None,
        "unknown_sections": [{"type": t, "flags": f, "data": bytes(data)}
                             for (t, f, data) in sorted(d.unknown, key=lambda u: u[0])],
    }
