#!/usr/bin/env python3
"""The binding's tests that run against an installed wheel, in one list for both callers:
ci/test_install.sh (make wheel-test: the wheel in a clean venv with no compiler on PATH) and
cibuildwheel's test-command (python/pyproject.toml). They need only the wheel, pytest, NumPy,
cbor2, ml_dtypes and hypothesis (cibuildwheel's test-requires): the tests of the partners
(PyTorch, JAX, SciPy, safetensors, gguf), of the native protocol's separately compiled
producer and consumer (which build C code), of the repository's packaging and of the guide run
in `make test`, against the venv's build.

    python ci/wheel_tests.py ROOT [PYTEST ARGS...]    (ROOT: the repository checkout)
"""
import os
import sys

TESTS = [
    "test_package.py", "test_dtype.py", "test_device.py", "test_layout.py", "test_quant.py",
    "test_descriptor.py", "test_tensor.py", "test_factory.py", "test_errors.py", "test_file.py",
    "test_stream.py", "test_kv.py", "test_composite.py", "test_numpy.py", "test_dlpack.py",
    "test_conformance.py", "test_conformance_containers.py", "test_typing.py",
]
# needs an interpreter that runs finalisers at exit as the main CI's does
DESELECT = "not test_REQ_DLPACK_DELETER_NOGIL_after_finalisation"


def main(argv):
    if not argv:
        sys.exit(__doc__)
    root, extra = argv[0], argv[1:]
    tests = os.path.join(root, "python", "tests")
    import pytest
    os.chdir(tests)  # conftest.py and the tests find the corpus relative to the checkout
    return pytest.main(["-q", "-p", "no:cacheprovider", "-x", "-k", DESELECT, *extra, *TESTS])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
