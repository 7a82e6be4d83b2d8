"""hurray.torch and hurray.numpy: safetensors-style save_file / load_file, save / load in memory,
save_model / load_model with tied weights (REQ_FRAMEWORK_*)."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import hurray


def test_REQ_FRAMEWORK_IMPORT_hurray_alone_imports_neither():
    code = ("import sys, hurray; "
            "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
    code = "import hurray.numpy, sys; print('torch' in sys.modules, hurray.numpy.__name__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["False", "hurray.numpy"]


def test_REQ_FRAMEWORK_TORCH_save_file_load_file(tmp_path):
    import hurray.torch as ht

    p = tmp_path / "t.hr"
    tensors = {
        "w": torch.randn(4, 5),
        "b": torch.arange(5, dtype=torch.int64),
        "h": torch.ones(3, dtype=torch.float16),
        "view": torch.randn(6, 8)[:, ::2],  # non-contiguous
    }
    ht.save_file(tensors, p, metadata={"format": "pt"})
    got = ht.load_file(p)
    assert set(got) == set(tensors)
    for k, v in tensors.items():
        assert got[k].dtype == v.dtype and torch.equal(got[k], v), k
        assert got[k].device.type == "cpu"
    assert hurray.load_kv(p) == {"format": "pt"}
    data = ht.save(tensors, {"format": "pt"})
    assert data == p.read_bytes()
    assert all(torch.equal(ht.load(data)[k], tensors[k]) for k in tensors)
    assert torch.equal(ht.load_file(p, device="cpu", mmap=True)["w"], tensors["w"])


def test_REQ_FRAMEWORK_NUMPY_save_file_load_file(tmp_path):
    import hurray.numpy as hn

    p = tmp_path / "n.hr"
    tensors = {"a": np.arange(10, dtype=np.uint16), "f": np.asfortranarray(np.ones((3, 4))),
               "s": np.arange(100.0).reshape(10, 10)[::3, 1:4]}
    hn.save_file(tensors, p, metadata={"k": 1})
    got = hn.load_file(p)
    for k, v in tensors.items():
        np.testing.assert_array_equal(got[k], v)
        assert got[k].dtype == v.dtype
    assert hurray.load_kv(p) == {"k": 1}
    assert all(np.array_equal(hn.load(hn.save(tensors))[k], tensors[k]) for k in tensors)


def test_REQ_FRAMEWORK_TORCH_load_file_progress(tmp_path):
    import hurray.torch as ht

    p = tmp_path / "t.hr"
    ht.save_file({"w": torch.ones(40 << 18), "b": torch.zeros(3)}, p)  # 40 MiB of float32
    calls = []
    got = ht.load_file(p, progress=lambda done, total: calls.append((done, total)))
    assert torch.equal(got["w"], torch.ones(40 << 18))
    total = calls[-1][1]
    assert total >= 40 << 20 and calls[0] == (0, total) and calls[-1] == (total, total)
    assert len(calls) >= 4 and [d for d, _ in calls] == sorted(d for d, _ in calls)
    calls.clear()
    ht.load_file(p, mmap=True, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(total, total)]  # a mapped load reads nothing: one call
    loaded = []
    ht.load_model(torch.nn.Linear(2, 2), _linear_file(tmp_path, ht),
                  progress=lambda d, t: loaded.append(d))
    assert loaded and loaded[0] == 0
    with pytest.raises(TypeError, match="progress"):
        ht.load_file(p, progress=3)


def _linear_file(tmp_path, ht):
    p = tmp_path / "lin.hr"
    ht.save_model(torch.nn.Linear(2, 2), p)
    return p


def test_REQ_FRAMEWORK_NUMPY_load_file_progress(tmp_path):
    import hurray.numpy as hn

    p = tmp_path / "n.hr"
    hn.save_file({"a": np.ones(40 << 20, np.uint8)}, p, durable=False)
    calls = []
    got = hn.load_file(p, progress=lambda done, total: calls.append((done, total)))
    assert got["a"].shape == (40 << 20,) and bool(got["a"].all())
    total = calls[-1][1]
    assert calls[0] == (0, total) and calls[-1] == (total, total) and len(calls) >= 4
    with pytest.raises(TypeError, match="progress"):
        hn.load_file(p, progress="yes")


class TiedLM(torch.nn.Module):
    """A small language model whose output projection is its embedding (tied weights)."""

    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.block = torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.LayerNorm(dim))
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied
        self.register_buffer("steps", torch.tensor(7))

    def forward(self, ids):
        return self.head(self.block(self.embed(ids)))


def test_REQ_FRAMEWORK_TIED_weights_stored_once_and_restored(tmp_path):
    import hurray.torch as ht

    torch.manual_seed(0)
    model = TiedLM()
    p = tmp_path / "m.hr"
    ht.save_model(model, p, metadata={"arch": "TiedLM"})
    stored = hurray.load(p)
    assert "embed.weight" in stored and "head.weight" not in stored  # once
    kv = hurray.load_kv(p)
    assert kv["hurray.torch.alias_names"] == ["head.weight"]
    assert kv["hurray.torch.alias_targets"] == ["embed.weight"]
    assert kv["arch"] == "TiedLM"
    # the untied size would hold the 50 x 16 float32 table twice
    untied = ht.save(model.state_dict())
    assert p.stat().st_size <= len(untied) - 50 * 16 * 4

    torch.manual_seed(1)
    fresh = TiedLM()
    missing, unexpected = ht.load_model(fresh, p)
    assert missing == [] and unexpected == []
    assert fresh.head.weight is fresh.embed.weight  # still tied
    ids = torch.tensor([[1, 2, 3]])
    assert torch.equal(fresh(ids), model(ids))
    assert int(fresh.steps) == 7


def test_REQ_FRAMEWORK_TIED_reserved_metadata_and_bad_alias(tmp_path):
    import hurray.torch as ht

    with pytest.raises(ValueError, match="reserved"):
        ht.save_model(TiedLM(), tmp_path / "x.hr", metadata={"hurray.torch.alias_names": []})
    p = tmp_path / "bad.hr"
    hurray.save(p, {"embed.weight": torch.zeros(50, 16)},
                {"hurray.torch.alias_names": ["head.weight"],
                 "hurray.torch.alias_targets": ["nope"]})
    with pytest.raises(hurray.FileError, match="nope"):
        ht.load_model(TiedLM(), p)
    # alias lists that are not lists of str: a FileError naming the keys, not a TypeError
    for names, targets in ((b"head.weight", ["embed.weight"]), (["head.weight"], [3])):
        hurray.save(p, {"embed.weight": torch.zeros(50, 16)},
                    {"hurray.torch.alias_names": names, "hurray.torch.alias_targets": targets})
        with pytest.raises(hurray.FileError, match="lists of str"):
            ht.load_model(TiedLM(), p)


def test_REQ_FRAMEWORK_TORCH_overlapping_views_stored_separately(tmp_path):
    import hurray.torch as ht

    base = torch.arange(20.0)
    sd = {"a": base[:10], "b": base[5:15]}  # overlap, not the same view
    p = tmp_path / "o.hr"
    ht.save_file(sd, p)
    got = ht.load_file(p)
    assert torch.equal(got["a"], base[:10]) and torch.equal(got["b"], base[5:15])
