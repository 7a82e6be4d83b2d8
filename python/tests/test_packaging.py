"""Packaging requirements that the repository itself can show (REQ_PKG_PIP_INSTALL,
REQ_PKG_WHEELS). The wheels themselves are built and tested by `make wheel-test` (a
manylinux wheel, installed with no compiler on PATH) and by CI (cibuildwheel, every
platform); `make sdist-test` builds the sdist with only a C compiler. These tests read the
repository (they run from a clone, not from an installed wheel alone)."""
import importlib.util
import pathlib
import re
import subprocess
import sys


ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "ci" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_REQ_PKG_PIP_INSTALL_instructions_never_reach_the_public_project():
    docs = _load("check_docs")
    mds = [p for p in ROOT.rglob("*.md") if ".venv" not in p.parts and "build" not in p.parts]
    others = [ROOT / ".github" / "workflows" / "wheels.yml", ROOT / "Makefile",
              ROOT / "ci" / "test_install.sh"]
    found = [(p.name, f) for p in mds for f in docs.pip_findings(p.read_text(encoding="utf-8"))]
    found += [(p.name, f) for p in others
              for f in docs.pip_findings(p.read_text(encoding="utf-8"), markdown=False)]
    assert found == []
    # The rule catches what it must: a bare install, an upgrade with an extra, an extra
    # index, in a code block or inline code; and lets our forms pass.
    assert docs.pip_findings("pip install hurray", markdown=False)
    assert docs.pip_findings('pip install -U "hurray[torch]"', markdown=False)
    assert docs.pip_findings("    pip install hurray==0.1.0")
    assert docs.pip_findings("then run `pip install hurray`.")
    assert docs.pip_findings("pip install --extra-index-url https://x.invalid/simple hurray",
                             markdown=False)
    assert not docs.pip_findings("pip install --no-index --find-links dist/ hurray",
                                 markdown=False)
    assert not docs.pip_findings("pip install --index-url https://x.invalid/simple hurray",
                                 markdown=False)
    assert not docs.pip_findings("pip install ./python", markdown=False)
    # The README says how, with the exact commands, and why.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install --no-index --find-links" in readme and "unrelated" in readme


def test_REQ_PKG_PIP_INSTALL_distribution_and_import_name():
    pyproject = (ROOT / "python" / "pyproject.toml").read_text()
    assert re.search(r'^name = "hurray"$', pyproject, re.M)
    assert (ROOT / "python" / "src" / "hurray" / "__init__.py").is_file()


def test_REQ_PKG_WHEELS_configuration_license_and_one_version():
    # ci/check_packaging.py asks cibuildwheel itself which wheels the configuration selects
    # (cp310-cp313 x linux x86_64/aarch64, macOS x86_64/arm64, Windows AMD64), checks the
    # workflow's runners, the LICENSE copy, the werror defaults and the single version.
    r = subprocess.run([sys.executable, str(ROOT / "ci" / "check_packaging.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check_packaging: 0 failing" in r.stdout
    assert len(re.findall(r"^ok +cibuildwheel ", r.stdout, re.M)) == 5


def test_REQ_PKG_WHEELS_version_is_written_once():
    import importlib.metadata

    import hurray

    header = (ROOT / "reference" / "include" / "hurray" / "version.h").read_text()
    v = re.search(r'#define HURRAY_VERSION_STRING "([^"]+)"', header).group(1)
    assert hurray.__version__ == v == importlib.metadata.version("hurray")
    pyproject = (ROOT / "python" / "pyproject.toml").read_text()
    assert not re.search(r'^version\s*=', pyproject, re.M)
