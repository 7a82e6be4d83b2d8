"""Run-time signatures and the type stubs agree (REQ_DOCS_SIGNATURES, REQ_DOCS_STUBS).

Every public function, method and constructor of the extension carries a
``__text_signature__`` (the ``name($module, a, /, b=None, *, c=None)\\n--\\n\\n`` head of its
C docstring), so ``inspect.signature`` and ``help()`` work. This walks every public callable
the package exports and compares its run-time signature with the one ``_hurray.pyi``
declares: the same parameter names, in the same order, of the same kinds, with a default
exactly where the stub has one. The few public functions written in Python (``hurray.open``,
``aligned_allocator``) are typed inline: their ``def`` in ``__init__.py`` is their stub, every
parameter and the return annotated. Classes the API returns without exporting them
(``hurray.open``'s File and FileSlice, the memory owners) are walked like the exported ones.
The stubs' dtype list (``dtype.pyi``) is the run-time table's.
mypy --strict and pyright over the stubs and the guide: ci/typecheck.py (make typecheck)."""
from __future__ import annotations

import ast
import inspect
import pydoc
from pathlib import Path

import pytest

import hurray
from hurray import _hurray

PKG = Path(hurray.__file__).resolve().parent
SRC = Path(__file__).resolve().parents[1] / "src" / "hurray"
# The stubs checked are the ones the installed package ships; they must be the repository's.
STUB = PKG / "_hurray.pyi"
DTYPE_STUB = PKG / "dtype.pyi"

P = inspect.Parameter
# Dunder methods the package defines for a protocol (DLPack, the native protocol, NumPy,
# context managers): checked like public ones. Slot wrappers (__hash__, __iter__, __next__,
# __eq__, ...) are CPython's and carry their own signatures.
PROTOCOL = {"__dlpack__", "__dlpack_device__", "__hurray__", "__array__", "__enter__",
            "__exit__"}


def _stub_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _stub_params(fn: ast.FunctionDef, drop_first: bool) -> list[tuple[str, str, bool]]:
    """(name, kind, has_default) of a stub function, as inspect would report them."""
    a = fn.args
    out: list[tuple[str, str, bool]] = []
    pos = a.posonlyargs + a.args
    defaults = [False] * (len(pos) - len(a.defaults)) + [True] * len(a.defaults)
    for i, (arg, has_default) in enumerate(zip(pos, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((arg.arg, kind, has_default))
    if a.vararg is not None:
        out.append((a.vararg.arg, "VAR_POSITIONAL", False))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "KEYWORD_ONLY", d is not None))
    if a.kwarg is not None:
        out.append((a.kwarg.arg, "VAR_KEYWORD", False))
    if drop_first:
        out = out[1:]
    return out


def _runtime_params(sig: inspect.Signature) -> list[tuple[str, str, bool]]:
    return [(p.name, p.kind.name, p.default is not P.empty) for p in sig.parameters.values()]


def _stub_index() -> tuple[dict[str, ast.FunctionDef], dict[str, ast.ClassDef]]:
    funcs: dict[str, ast.FunctionDef] = {}
    classes: dict[str, ast.ClassDef] = {}
    for node in _stub_tree(STUB).body:
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
    return funcs, classes


FUNCS, CLASSES = _stub_index()


def _init_functions() -> dict[str, ast.FunctionDef]:
    """The public functions __init__.py defines in Python (typed inline, no stub entry)."""
    tree = _stub_tree(SRC / "__init__.py")
    return {n.name: n for n in tree.body
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


INIT_FUNCS = _init_functions()


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    out = {}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef):
            decorators = {ast.unparse(d) for d in node.decorator_list}
            if "property" not in decorators:
                out[node.name] = node
    return out


def _public_functions() -> list[str]:
    return sorted(n for n in hurray.__all__
                  if inspect.isbuiltin(getattr(hurray, n)) or inspect.isfunction(getattr(hurray, n)))


def _public_classes() -> list[str]:
    return sorted(n for n in hurray.__all__ if isinstance(getattr(hurray, n), type)
                  and not issubclass(getattr(hurray, n), BaseException))


def _returned_classes() -> list[str]:
    """Classes of the extension the stubs declare that hurray does not export: values the
    API returns (hurray.open's handle, its slices, stream items). Walked like exported ones."""
    exported = set(_public_classes())
    return sorted(n for n in CLASSES if not n.startswith("_") and n not in exported
                  and isinstance(getattr(_hurray, n, None), type)
                  and not issubclass(getattr(_hurray, n), BaseException))


def _class(name: str) -> type:
    cls = getattr(hurray, name, None)
    return cls if isinstance(cls, type) else getattr(_hurray, name)


def _c_methods(cls: type) -> list[str]:
    """The methods the extension defines on cls (method tables), public or protocol."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_") and name not in PROTOCOL:
            continue
        if type(value).__name__ in ("method_descriptor", "classmethod_descriptor"):
            out.append(name)
    return sorted(out)


def test_REQ_DOCS_SIGNATURES_the_walk_covers_the_surface():
    # The walk below is not vacuous: it sees the package's functions, classes and methods.
    funcs, classes = _public_functions(), _public_classes()
    assert {"save", "load", "load_kv", "zeros", "from_dlpack", "asarray"} <= set(funcs)
    assert {"Tensor", "Composite", "StreamReader", "StreamWriter", "Device"} <= set(classes)
    assert {"buffer", "__dlpack__", "to_torch", "__hurray__"} <= set(
        _c_methods(hurray.Tensor))
    assert "from_name" in _c_methods(hurray.Dtype)
    assert {"open", "aligned_allocator"} <= set(INIT_FUNCS) & set(funcs)
    assert {"File", "FileSlice"} <= set(_returned_classes())
    assert {"keys", "get_tensor", "get_slice", "close", "__exit__"} <= set(
        _c_methods(_hurray.File))


@pytest.mark.parametrize("name", _public_functions())
def test_REQ_DOCS_SIGNATURES_function(name: str):
    fn = getattr(hurray, name)
    sig = inspect.signature(fn)  # ValueError when there is no __text_signature__
    if inspect.isfunction(fn):  # written in Python in __init__.py: typed inline
        assert name in INIT_FUNCS and name not in FUNCS, name
        node = INIT_FUNCS[name]
        assert _runtime_params(sig) == _stub_params(node, drop_first=False), name
        a = node.args
        params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
        unannotated = [p.arg for p in params if p.annotation is None]
        assert unannotated == [] and node.returns is not None, f"{name}: not fully annotated"
        assert (fn.__doc__ or "").strip(), name
        return
    assert name in FUNCS, f"{name} is exported but _hurray.pyi does not declare it"
    assert _runtime_params(sig) == _stub_params(FUNCS[name], drop_first=False), name
    # help() shows the signature, not the raw "--" marker
    text = pydoc.render_doc(fn, renderer=pydoc.plaintext)
    assert f"{name}{sig}" in text and "\n--\n" not in text


@pytest.mark.parametrize("name", _public_classes() + _returned_classes())
def test_REQ_DOCS_SIGNATURES_constructor_and_methods(name: str):
    cls = _class(name)
    stub = CLASSES[name]
    methods = _methods(stub)
    ctor = methods.get("__new__") or methods.get("__init__")
    if ctor is not None:
        sig = inspect.signature(cls)
        assert _runtime_params(sig) == _stub_params(ctor, drop_first=True), name
        assert (cls.__doc__ or "").strip(), name
    else:
        # not constructible from Python: the stub declares no constructor
        with pytest.raises(TypeError):
            cls()
    for m in _c_methods(cls):
        assert m in methods, f"{name}.{m} exists but _hurray.pyi does not declare it"
        unbound = inspect.signature(getattr(cls, m))
        is_classmethod = any(ast.unparse(d) == "classmethod"
                             for d in methods[m].decorator_list)
        expected = _stub_params(methods[m], drop_first=is_classmethod)
        if not is_classmethod:
            # an unbound method shows self, positional-only
            first = expected[0]
            assert first[0] == "self", f"{name}.{m}: the stub's first parameter"
            expected[0] = ("self", "POSITIONAL_ONLY", False)
        assert _runtime_params(unbound) == expected, f"{name}.{m}"


def test_REQ_DOCS_SIGNATURES_bound_methods_drop_self():
    t = hurray.zeros((2,))
    assert str(inspect.signature(t.buffer)) == "(index)"
    assert str(inspect.signature(t.__dlpack__)) == (
        "(*, stream=None, max_version=None, dl_device=None, copy=None)")
    assert str(inspect.signature(hurray.Dtype.from_name)) == "(name, /)"
    assert str(inspect.signature(hurray.Descriptor.decode)).startswith("(data, *, ")
    # to_scipy is reached through a descriptor (AttributeError for a dense tensor, so that
    # hasattr tells); the method it returns has the stub's signature
    coo = hurray.sparse_coo([[0], [1]], [1.0], (2, 2))
    assert _runtime_params(inspect.signature(coo.to_scipy)) == _stub_params(
        _methods(CLASSES["Tensor"])["to_scipy"], drop_first=True)


def test_REQ_DOCS_SIGNATURES_defaults_are_values():
    # Defaults a text signature can state are real values; the two it cannot (a Dtype, and
    # "not given" for a timeout) show as ... as in the stub.
    sig = inspect.signature(hurray.load)
    assert sig.parameters["mmap"].default is False
    assert inspect.signature(hurray.full).parameters["dtype"].default is None
    assert inspect.signature(hurray.PerChannelAffine).parameters["scale_dtype"].default is ...
    assert inspect.signature(hurray.StreamReader).parameters["timeout"].default is ...
    assert hurray.PerChannelAffine(axis=0).scale_dtype is hurray.float32


def test_REQ_DOCS_STUBS_dtype_stub_lists_the_runtime_table():
    runtime = [n for n in vars(hurray.dtype) if not n.startswith("_")]
    tree = _stub_tree(DTYPE_STUB)
    declared = [n.target.id for n in tree.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    stub_all = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets))
    assert declared == runtime
    assert stub_all == runtime
    assert hurray.dtype.__all__ == runtime
    for n in runtime:  # top level too, the same singletons
        assert getattr(hurray, n) is getattr(hurray.dtype, n)
        assert n in hurray.__all__


def test_REQ_DOCS_STUBS_installed_stubs_are_the_repository_s():
    for name in ("_hurray.pyi", "dtype.pyi", "py.typed", "__init__.py"):
        assert (PKG / name).read_bytes() == (SRC / name).read_bytes(), (
            f"{name}: the installed package is stale; run make python-install")


def test_REQ_DOCS_STUBS_every_export_is_declared():
    # Every public name hurray exports is declared in the stubs (or __init__.py itself).
    tree = _stub_tree(STUB)
    declared = set(FUNCS) | set(CLASSES) | set(INIT_FUNCS)
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        if isinstance(node, ast.ImportFrom):
            declared |= {a.asname or a.name for a in node.names}
    dtypes = set(hurray.dtype.__all__)
    missing = [n for n in hurray.__all__
               if n not in declared and n not in dtypes]
    assert missing == []
