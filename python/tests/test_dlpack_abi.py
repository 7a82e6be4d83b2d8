"""The DLPack structures of the binding (python/src/hurray/_hurray/dlpack_abi.h, written from
the published ABI) against the dlpack.h that ships in the PyTorch wheel
(torch/include/ATen/dlpack.h in torch 2.13.0, DLPack 1.3; a C header with C++ guards): one
C program includes both and prints the offset and size of every field, the flag bits, and
the enum values the binding relies on (device types from reference/include/hurray/device.h,
the one mapping table; type codes from the element-type table). Needs a C compiler
(build-essential, as the package build does).

Seed § DLPack Interoperability ("conforming to the DLPack specification").
"""
import os
import subprocess
import textwrap

import pytest

import hurray

import dlpack_util as dl

import torch  # noqa: E402  (a pinned dev dependency: missing torch must fail, not skip)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OURS = os.path.join(ROOT, "python", "src", "hurray", "_hurray")
HURRAY_INCLUDE = os.path.join(ROOT, "reference", "include")

STRUCT_FIELDS = {
    # (ours, theirs): fields
    ("hrdl_version", "DLPackVersion"): ["major", "minor"],
    ("hrdl_device", "DLDevice"): ["device_type", "device_id"],
    ("hrdl_dtype", "DLDataType"): ["code", "bits", "lanes"],
    ("hrdl_tensor", "DLTensor"): ["data", "device", "ndim", "dtype", "shape", "strides",
                                  "byte_offset"],
    ("hrdl_managed", "DLManagedTensor"): ["dl_tensor", "manager_ctx", "deleter"],
    ("hrdl_managed_versioned", "struct DLManagedTensorVersioned"): [
        "version", "manager_ctx", "deleter", "flags", "dl_tensor"],
}
CONSTANTS = [
    ("HRDL_FLAG_READ_ONLY", "DLPACK_FLAG_BITMASK_READ_ONLY"),
    ("HRDL_FLAG_IS_COPIED", "DLPACK_FLAG_BITMASK_IS_COPIED"),
    ("HRDL_FLAG_SUBBYTE_PADDED", "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED"),
    ("HRDL_MAJOR", "DLPACK_MAJOR_VERSION"),
] + [(f"HURRAY_DL_{ours}", f"kDL{theirs}") for ours, theirs in [
    ("CPU", "CPU"), ("CUDA", "CUDA"), ("CUDA_HOST", "CUDAHost"), ("OPENCL", "OpenCL"),
    ("VULKAN", "Vulkan"), ("METAL", "Metal"), ("VPI", "VPI"), ("ROCM", "ROCM"),
    ("ROCM_HOST", "ROCMHost"), ("EXT_DEV", "ExtDev"), ("CUDA_MANAGED", "CUDAManaged"),
    ("ONEAPI", "OneAPI"), ("WEBGPU", "WebGPU"), ("HEXAGON", "Hexagon"), ("MAIA", "MAIA")]]
TYPE_CODES = {
    "kDLInt": 0, "kDLUInt": 1, "kDLFloat": 2, "kDLBfloat": 4, "kDLComplex": 5, "kDLBool": 6,
    "kDLFloat8_e4m3fn": dl.LOWP_DL["float8_e4m3fn"][0],
    "kDLFloat8_e4m3fnuz": dl.LOWP_DL["float8_e4m3fnuz"][0],
    "kDLFloat8_e5m2": dl.LOWP_DL["float8_e5m2"][0],
    "kDLFloat8_e5m2fnuz": dl.LOWP_DL["float8_e5m2fnuz"][0],
    "kDLFloat8_e8m0fnu": dl.LOWP_DL["float8_e8m0fnu"][0],
    "kDLFloat6_e2m3fn": dl.LOWP_DL["float6_e2m3fn"][0],
    "kDLFloat6_e3m2fn": dl.LOWP_DL["float6_e3m2fn"][0],
    "kDLFloat4_e2m1fn": dl.LOWP_DL["float4_e2m1fn"][0],
}


def torch_header() -> str:
    base = os.path.join(os.path.dirname(torch.__file__), "include")
    for rel in (("ATen", "dlpack.h"), ("dlpack", "dlpack.h")):
        path = os.path.join(base, *rel)
        if os.path.exists(path):
            return path
    pytest.fail(f"no dlpack.h under {base}")


def compile_and_run(tmp_path, source: str, include_dirs) -> str:
    src = tmp_path / "abi.c"
    src.write_text(source)
    exe = tmp_path / "abi"
    cmd = ["cc", "-std=c11", "-Wall", "-Werror", *[f"-I{d}" for d in include_dirs],
           str(src), "-o", str(exe)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        pytest.fail("no C compiler (ci/bootstrap installs build-essential)")
    assert r.returncode == 0, r.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def test_REQ_DLPACK_ABI_layout_matches_torch_dlpack_h(tmp_path):
    header = torch_header()
    lines = []
    for (ours, theirs), fields in STRUCT_FIELDS.items():
        lines.append(f'    printf("%s %zu %zu\\n", "sizeof {ours}", sizeof({ours}), '
                     f'sizeof({theirs}));')
        for f in fields:
            lines.append(
                f'    printf("%s %zu %zu %zu %zu\\n", "{ours}.{f}", offsetof({ours}, {f}), '
                f'sizeof((({ours} *)0)->{f}), offsetof({theirs}, {f}), '
                f'sizeof((({theirs} *)0)->{f}));')
    for ours, theirs in CONSTANTS:
        lines.append(f'    printf("%s %llu %llu\\n", "{ours}", (unsigned long long)({ours}), '
                     f'(unsigned long long)({theirs}));')
    for name, value in TYPE_CODES.items():
        lines.append(f'    printf("%s %d %d\\n", "{name}", (int){name}, {value});')
    source = textwrap.dedent("""
        #include <stddef.h>
        #include <stdio.h>
        #include "dlpack.h"          /* PyTorch's, DLPack 1.x */
        #include "dlpack_abi.h"      /* the binding's */
        #include "hurray/device.h"   /* HURRAY_DL_*: the mapping table's DLPack values */
        int main(void) {
        @BODY@
            printf("version %d.%d\\n", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
            return 0;
        }
    """).replace("@BODY@", "\n".join(lines))
    out = compile_and_run(tmp_path, source, [os.path.dirname(header), OURS, HURRAY_INCLUDE])
    checked = 0
    for line in out.splitlines():
        name, *vals = line.split()
        if name == "version":
            major, minor = map(int, vals[0].split("."))
            assert major == 1 and minor >= 1, f"torch ships DLPack {vals[0]}"
            continue
        if name == "sizeof":
            name = " ".join([name, vals.pop(0)])
        half = len(vals) // 2
        assert vals[:half] == vals[half:], f"{name}: ours {vals[:half]} != torch's {vals[half:]}"
        checked += 1
    assert checked == sum(len(f) + 1 for f in STRUCT_FIELDS.values()) + len(CONSTANTS) + len(
        TYPE_CODES)
    print(f"dlpack_abi.h == {header}: {checked} offsets, sizes and values")


def test_REQ_DLPACK_ABI_element_table_codes_are_dlpacks():
    # the binding exports the C table's codes: check them against the ABI's names above
    for name, (code, bits) in {**dl.TIER1_DL, **dl.LOWP_DL}.items():
        t = dl.tensor_of(name, (2,))
        assert dl.inspect(t.__dlpack__(max_version=(1, 1)))["dtype"] == (code, bits, 1), name
    assert hurray.float4_e2m1fn.bit_width == 4
