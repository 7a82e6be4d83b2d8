"""The `hurray` command (hurray.cli; also `python -m hurray`): inspect, verify, convert, their
output (a table and --json), exit statuses (0 success, 1 invalid or not convertible, 2 usage
or I/O) and the progress bar. Test names carry requirement ids
(docs/requirements/python-binding.md).
"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

import hurray
from hurray import cli
from catalog import partition


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.hry"
    q = hurray.Tensor([bytes(64), np.ones(2, np.float16).tobytes()], hurray.int8, (2, 32),
                      quantization=hurray.BlockAffine(1, 32, hurray.float16))
    hurray.save(path, {"embed.weight": hurray.from_numpy(np.ones((4, 8), np.float32)),
                       "q.weight": q, "grid": partition()},
                kv={"arch": "tiny", "layers": 2, "scale": 0.5, "blob": b"\x00\xff",
                    "tags": ["a", 1]})
    return path


# ---- inspect ---------------------------------------------------------------------------------------


def test_REQ_CLI_INSPECT_table(model, capsys):
    code, out, err = run(["inspect", model], capsys)
    assert code == 0 and err == ""
    assert "Hurray file, 3 tensors" in out
    lines = out.splitlines()
    header = next(ln for ln in lines if ln.startswith("NAME"))
    assert header.split() == ["NAME", "DTYPE", "SHAPE", "LAYOUT", "QUANTIZATION", "BYTES"]
    row = next(ln for ln in lines if ln.startswith("embed.weight"))
    assert row.split() == ["embed.weight", "float32", "[4,", "8]", "row_major", "-", "128"]
    q = next(ln for ln in lines if ln.startswith("q.weight"))
    assert "int8" in q and "BlockAffine(axis=1, block_size=32, scale_dtype=float16" in q
    assert q.rstrip().endswith(" 68")  # 64 code bytes + 2 float16 scales
    assert any(ln.startswith("grid ") and "composite (partition)" in ln for ln in lines)
    assert any(ln.startswith("  grid.0 ") for ln in lines)  # members, indented
    md = {ln.split()[0]: ln.split(None, 2)[1:] for ln in lines[lines.index("metadata:") + 1:]}
    assert md["arch"] == ["str", "'tiny'"] and md["layers"] == ["int", "2"]
    assert md["blob"] == ["bytes", "<2 bytes>"]


def test_REQ_CLI_INSPECT_json(model, capsys):
    code, out, _ = run(["inspect", model, "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["format"] == "hurray" and doc["size"] == os.path.getsize(model)
    assert doc["metadata"] == {"arch": "tiny", "layers": 2, "scale": 0.5,
                               "blob": {"bytes": "AP8="}, "tags": ["a", 1]}
    by = {t["name"]: t for t in doc["tensors"]}
    assert by["embed.weight"] == {"name": "embed.weight", "kind": "tensor", "dtype": "float32",
                                  "shape": [4, 8], "layout": "row_major", "quantization": None,
                                  "nbytes": 128, "device": "cpu", "buffers": [128]}
    assert by["q.weight"]["buffers"] == [64, 4] or by["q.weight"]["buffers"][0] == 64
    assert by["grid"]["kind"] == "composite" and len(by["grid"]["members"]) == 2


def test_REQ_CLI_INSPECT_stream_names_and_metadata(tmp_path, capsys):
    path = tmp_path / "s.hrs"
    with open(path, "wb") as f, hurray.StreamWriter(f) as w:
        w.write(hurray.from_numpy(np.ones(3, np.float32)), name="a", metadata={"step": 1})
        w.write(hurray.from_numpy(np.ones((2, 2), np.int8)))
    code, out, _ = run(["inspect", path], capsys)
    assert code == 0
    assert "Hurray stream, 2 items, finished (end frame)" in out
    assert any(ln.startswith("a ") and "float32" in ln for ln in out.splitlines())
    assert any(ln.startswith("#1 ") and "int8" in ln for ln in out.splitlines())
    assert "metadata of a:" in out and "step" in out
    code, out, _ = run(["inspect", path, "--json"], capsys)
    doc = json.loads(out)
    assert doc["end"] == "end_frame"
    assert [(i["name"], i["named"], i["metadata"]) for i in doc["items"]] == [
        ("a", True, {"step": 1}), ("#1", False, {})]


def test_REQ_CLI_INSPECT_not_hurray_is_usage_error(tmp_path, capsys):
    (tmp_path / "x.bin").write_bytes(b"GGUF" + bytes(20))
    code, _, err = run(["inspect", tmp_path / "x.bin"], capsys)
    assert code == 2 and "not a Hurray file or stream" in err
    code, _, err = run(["inspect", tmp_path / "missing.hry"], capsys)
    assert code == 2 and "No such file" in err


# ---- verify ----------------------------------------------------------------------------------------


def test_REQ_CLI_VERIFY_exit_statuses(model, tmp_path, capsys):
    code, out, _ = run(["verify", model], capsys)
    assert code == 0 and out.strip() == f"{model}: OK (hurray, 3 tensors)"
    bad = tmp_path / "bad.hry"
    data = bytearray(model.read_bytes())
    i = data.find(b"HRYD")  # the first descriptor: a reserved byte set
    data[i + 12] = 7
    bad.write_bytes(bytes(data))
    code, out, _ = run(["verify", bad], capsys)
    assert code == 1
    assert "INVALID" in out and "field index[0]" in out and "RESERVED_NONZERO" in out
    code, out, _ = run(["verify", bad, "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["valid"] is False
    assert doc["problems"][0]["code"] == "RESERVED_NONZERO"
    assert doc["problems"][0]["field"].startswith("index[0]")
    bad.write_bytes(model.read_bytes()[:-10])
    code, out, _ = run(["verify", bad], capsys)
    assert code == 1 and "TRUNCATED" in out
    (tmp_path / "other.gguf").write_bytes(b"GGUF" + bytes(100))
    code, out, _ = run(["verify", tmp_path / "other.gguf"], capsys)
    assert code == 1 and "BAD_MAGIC" in out
    code, _, err = run(["verify", tmp_path / "missing.hry"], capsys)
    assert code == 2 and "No such file" in err
    code, _, err = run(["verify", tmp_path], capsys)
    assert code == 2


def test_REQ_CLI_VERIFY_index_contents_of_sparse_and_paged(tmp_path, capsys):
    """verify runs the on-demand index checks (status INDEX) the loader leaves out."""
    pytest.importorskip("scipy")
    ok = hurray.sparse_coo(np.array([[0, 2]], np.uint64), np.array([1.0, 2.0], np.float32), (3,))
    path = tmp_path / "s.hry"
    hurray.save(path, {"sp": ok})
    assert run(["verify", path], capsys)[0] == 0
    # an index out of the shape, written into the file's data (the loader does not read
    # index contents; the descriptor is untouched)
    data = bytearray(path.read_bytes())
    at = data.find(struct.pack("<QQ", 0, 2), 4096)
    assert at > 0
    data[at + 8:at + 16] = struct.pack("<Q", 5)
    path.write_bytes(bytes(data))
    hurray.load(path)  # loads
    code, out, _ = run(["verify", path], capsys)
    assert code == 1 and "tensor 'sp'" in out and "INDEX" in out


def test_REQ_CLI_VERIFY_stream(tmp_path, capsys):
    path = tmp_path / "s.hrs"
    w = hurray.StreamWriter()
    w.write(hurray.from_numpy(np.ones(3, np.float32)), name="a")
    path.write_bytes(w.getvalue())  # not finished: no end frame
    code, out, _ = run(["verify", path], capsys)
    assert code == 0 and "no end frame" in out
    path.write_bytes(w.getvalue()[:-3])
    code, out, _ = run(["verify", path], capsys)
    assert code == 1 and "TRUNCATED" in out


# ---- convert ---------------------------------------------------------------------------------------


def test_REQ_CLI_CONVERT_exit_statuses_and_force(model, tmp_path, capsys):
    out_path = tmp_path / "o.safetensors"
    hurray.save(tmp_path / "p.hry", {"w": hurray.from_numpy(np.ones(4, np.float32))},
                kv={"format": "pt"})
    code, out, _ = run(["convert", tmp_path / "p.hry", out_path], capsys)
    assert code == 0 and "1 tensors, 1 metadata entries" in out
    code, _, err = run(["convert", tmp_path / "p.hry", out_path], capsys)
    assert code == 2 and "--force" in err
    assert run(["convert", tmp_path / "p.hry", out_path, "-f", "-q"], capsys)[:2] == (0, "")
    code, _, err = run(["convert", model, tmp_path / "m.safetensors"], capsys)
    assert code == 1 and "metadata 'blob' is a bytes" in err  # safetensors: strings only
    hurray.save(tmp_path / "q.hry", {"q.weight": hurray.load(model)["q.weight"]})
    code, _, err = run(["convert", tmp_path / "q.hry", tmp_path / "m.safetensors"], capsys)
    assert code == 1 and "'q.weight' is quantized" in err
    assert not (tmp_path / "m.safetensors").exists()
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    code, _, err = run(["convert", model, tmp_path / "m.weird"], capsys)
    assert code == 2 and "--from/--to" in err
    code, _, _ = run(["convert", model, tmp_path / "m.weird", "--to", "hurray"], capsys)
    assert code == 0 and hurray.load(tmp_path / "m.weird")
    code, _, err = run(["convert", tmp_path / "nope.npz", tmp_path / "x.hry"], capsys)
    assert code == 2


def test_REQ_CLI_PROGRESS_bar_on_stderr_only_when_asked_or_a_tty(tmp_path, capsys):
    np.savez(tmp_path / "a.npz", **{f"t{i}": np.full(100, i, np.int32) for i in range(5)})
    code, out, err = run(["convert", tmp_path / "a.npz", tmp_path / "a.hry"], capsys)
    assert code == 0 and err == ""  # stderr is not a terminal here
    code, out, err = run(["convert", tmp_path / "a.npz", tmp_path / "b.hry", "--progress"],
                         capsys)
    assert code == 0 and "100%" in err and "read npz" in err and "#" * 30 in err
    assert "100%" not in out
    # a terminal gets the bar unasked; --no-progress silences it
    tty = io.StringIO()
    tty.isatty = lambda: True
    bar = cli.Progress(stream=tty)
    bar.start(4, "read x")
    bar.update(2, "t1")
    bar.update(2, "t2")
    bar.done()
    assert " 50% " in tty.getvalue() and "100%" in tty.getvalue()
    assert cli.Progress(stream=tty, enabled=False).enabled is False


# ---- the entry points ------------------------------------------------------------------------------


def test_REQ_CLI_ENTRY_POINTS_python_m_and_console_script(model, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(__file__))
    p = subprocess.run([sys.executable, "-m", "hurray", "verify", str(model)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "OK" in p.stdout
    p = subprocess.run([sys.executable, "-m", "hurray"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2 and "usage: hurray" in p.stderr
    script = shutil.which("hurray", path=os.path.dirname(sys.executable))
    assert script, "the hurray console script is installed beside python"
    bad = tmp_path / "bad.hry"
    bad.write_bytes(b"HRRYFILE" + bytes(100))
    p = subprocess.run([script, "verify", str(bad)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, (p.stdout, p.stderr)
    p = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == f"hurray {hurray.__version__}"
