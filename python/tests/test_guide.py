"""The user guide (docs/guide/*.md) runs: every ```python block of a page is executed, in
order, in one fresh namespace per page, inside a temporary directory, so a broken example
fails the test suite (REQ_DOCS_GUIDE_RUNS). The same blocks, extracted to one .py file per
page, are type-checked against the package's stubs by ci/typecheck.py (`make typecheck`).

The extraction lives in ci/guide_blocks.py, shared by both checks."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"

_spec = importlib.util.spec_from_file_location("guide_blocks", ROOT / "ci" / "guide_blocks.py")
assert _spec is not None and _spec.loader is not None
guide_blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guide_blocks)

PAGES = sorted(GUIDE.glob("*.md"))


def test_REQ_DOCS_GUIDE_RUNS_the_guide_has_the_promised_pages():
    names = {p.name for p in PAGES}
    for page in ("README.md", "install.md", "tensors.md", "save-load.md", "streams.md",
                 "interop.md", "sparse.md", "quantized.md", "composite.md", "frameworks.md",
                 "cli.md"):
        assert page in names, page
    # every page but the index is linked from the index
    index = (GUIDE / "README.md").read_text(encoding="utf-8")
    for p in PAGES:
        if p.name != "README.md":
            assert f"]({p.name})" in index, p.name


def test_REQ_DOCS_GUIDE_RUNS_extraction_finds_only_python_blocks():
    text = (
        "intro\n```python\nx = 1\n```\n```sh\npip install x\n```\n"
        "    ```python\n    y = 2\n    ```\n```py\nz = 3\n```\n```\nplain\n```\n"
    )
    blocks = guide_blocks.python_blocks(text)
    assert [b.code for b in blocks] == ["x = 1\n", "y = 2\n"]
    assert [b.line for b in blocks] == [3, 9]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_REQ_DOCS_GUIDE_RUNS_page_examples_run(page: Path, tmp_path: Path, monkeypatch):
    blocks = guide_blocks.python_blocks(page.read_text(encoding="utf-8"))
    assert blocks, f"{page.name} has no python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"guide_{page.stem.replace('-', '_')}"}
    for block in blocks:
        # compiled with the page's name and the block's first line, so a failure's
        # traceback points at the Markdown line
        code = compile("\n" * (block.line - 1) + block.code, str(page), "exec")
        try:
            exec(code, namespace)  # noqa: S102 - the guide's own examples
        except BaseException as e:
            raise AssertionError(
                f"{page.relative_to(ROOT)}: the example at line {block.line} failed: "
                f"{type(e).__name__}: {e}"
            ) from e


def test_REQ_DOCS_GUIDE_RUNS_a_failing_example_fails(tmp_path: Path):
    # The runner is not vacuous: a page whose example asserts something false fails.
    page = tmp_path / "bad.md"
    page.write_text("```python\nimport hurray\nassert hurray.float32.bit_width == 16\n```\n")
    blocks = guide_blocks.python_blocks(page.read_text())
    namespace: dict[str, object] = {}
    with pytest.raises(AssertionError):
        for block in blocks:
            exec(compile(block.code, str(page), "exec"), namespace)  # noqa: S102


def test_REQ_DOCS_GUIDE_RUNS_pages_are_python_files(tmp_path: Path):
    # what ci/typecheck.py checks: one file per page, blocks in order, line numbers kept
    out = guide_blocks.write_pages(PAGES, tmp_path)
    assert [p.stem for p in out] == [p.stem.replace("-", "_") for p in PAGES]
    for page, py in zip(PAGES, out):
        text = py.read_text(encoding="utf-8")
        compile(text, str(py), "exec")
        first = guide_blocks.python_blocks(page.read_text(encoding="utf-8"))[0]
        assert text.splitlines()[first.line - 1] == first.code.splitlines()[0]
