"""Packaging, import hygiene and module constants.

Seed § Packaging; § Alignment is measured / Constants; § Dynamic dimensions;
ARCHITECTURE.md principle 8 (importing hurray imports neither NumPy nor torch
nor SciPy)."""
import importlib.metadata
import subprocess
import sys
import textwrap

import pytest

import hurray


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )


def test_REQ_PKG_NO_HEAVY_IMPORT_numpy_torch_scipy_not_imported():
    r = _run(
        """
        import sys
        import hurray, hurray.dtype
        heavy = sorted(m for m in ("numpy", "torch", "scipy", "jax", "cupy", "ml_dtypes")
                       if m in sys.modules)
        print(",".join(heavy))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


def test_REQ_PKG_IMPORT_WITHOUT_OPTIONAL_DEPS_blocked():
    # Even when importing numpy/torch/scipy would fail, hurray imports.
    r = _run(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("numpy", "torch", "scipy"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import hurray
        print(hurray.float32, hurray.Descriptor)
        """
    )
    assert r.returncode == 0, r.stderr
    assert "hurray.float32" in r.stdout


def test_REQ_CONST_ALIGNMENT_constants_mirror_the_core():
    assert hurray.MIN_BUFFER_ALIGNMENT == 64
    assert hurray.PAGE_ALIGNMENT == 4096


def test_REQ_PKG_VERSION_matches_distribution_metadata():
    assert isinstance(hurray.__version__, str)
    assert hurray.__version__ == importlib.metadata.version("hurray")
    assert hurray.FORMAT_VERSION == (1, 0)


def test_REQ_SHAPE_NO_SENTINEL_no_dynamic_dimension_constant():
    # Seed § Dynamic dimensions: None is the spelling; no sentinel constant.
    for name in dir(hurray):
        assert "DYNAMIC" not in name.upper(), name
        value = getattr(hurray, name)
        if isinstance(value, int) and not isinstance(value, bool):
            assert value not in (-1, 2**64 - 1), name


def test_REQ_PKG_NOT_ARRAY_API_namespace():
    # ADR-029: the hurray module is not an Array API namespace.
    assert not hasattr(hurray, "__array_namespace_info__")
    assert not hasattr(hurray, "__array_api_version__")


def test_public_names_resolve():
    for name in hurray.__all__:
        assert hasattr(hurray, name), name


def test_extension_types_live_in_hurray_module():
    for name in ("Dtype", "Device", "Layout", "CsrLayout", "Descriptor", "BufferHandle",
                 "PerTensorAffine", "HurrayError", "InvalidDescriptorError", "Tensor"):
        assert getattr(hurray, name).__module__ == "hurray", name


def test_module_state_isolated_per_interpreter_load():
    # Multi-phase init: a second module object (as a subinterpreter would get)
    # has its own classes and singletons.
    import importlib.util

    spec = importlib.util.find_spec("hurray._hurray")
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    assert other.Dtype is not hurray.Dtype
    assert other.dtype.float32 is not hurray.float32
    assert other.Dtype.from_name("float32") is other.dtype.float32
    assert other.InvalidDescriptorError is not hurray.InvalidDescriptorError


def test_free_threading_slot_declared():
    # On 3.13+ free-threaded builds an extension without Py_mod_gil re-enables
    # the GIL with a RuntimeWarning; on every version the import must be silent.
    r = _run(
        """
        import sys, hurray
        enabled = getattr(sys, "_is_gil_enabled", lambda: True)()
        print(enabled)
        """
    )
    assert r.returncode == 0, r.stderr
    assert "RuntimeWarning" not in r.stderr


def test_REQ_PKG_ISOLATED_SUBINTERPRETER_imports_and_decodes():
    # Multi-phase init with module state: the module imports in a
    # subinterpreter (on 3.12+ an isolated one with its own GIL, since the
    # module declares Py_mod_multiple_interpreters) and works there.
    r = _run(
        """
        try:
            import _interpreters as interp
        except ImportError:
            import _xxsubinterpreters as interp
        iid = interp.create()
        interp.run_string(iid, '''
        import hurray, struct
        data = (b"HRYD" + bytes([1, 0, 0, 0]) + struct.pack("<I", 72) + bytes(4)
                + bytes([0x0C, 1, 1, 1, 2, 1, 0, 0]) + bytes(8) + struct.pack("<2Q", 2, 3)
                + struct.pack("<QBB6x", 24, 6, 1) + bytes(8))
        d = hurray.Descriptor.decode(data)
        assert d.shape == (2, 3) and d.dtype is hurray.float32
        assert d.encode() == data
        ''')
        interp.destroy(iid)
        print("ok")
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
