"""Type stubs for hurray.dtype: every element type as a hurray.Dtype singleton.

At run time hurray.dtype is a module the extension builds from libhurray's element-type
table (canonical names and aliases); hurray re-exports each name at top level
(hurray.float32 is hurray.dtype.float32). python/tests/test_typing.py checks that this
list is exactly the run-time one."""
from typing import Final

from ._hurray import Dtype

__all__ = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int1",
    "uint1",
    "int2",
    "uint2",
    "int4",
    "uint4",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
    "float8_e4m3",
    "float8_e8m0",
    "float6_e2m3",
    "float6_e3m2",
    "float4_e2m1",
]

bool: Final[Dtype]
int8: Final[Dtype]
uint8: Final[Dtype]
int16: Final[Dtype]
uint16: Final[Dtype]
int32: Final[Dtype]
uint32: Final[Dtype]
int64: Final[Dtype]
uint64: Final[Dtype]
float16: Final[Dtype]
bfloat16: Final[Dtype]
float32: Final[Dtype]
float64: Final[Dtype]
complex64: Final[Dtype]
complex128: Final[Dtype]
int1: Final[Dtype]
uint1: Final[Dtype]
int2: Final[Dtype]
uint2: Final[Dtype]
int4: Final[Dtype]
uint4: Final[Dtype]
float8_e4m3fn: Final[Dtype]
float8_e4m3fnuz: Final[Dtype]
float8_e5m2: Final[Dtype]
float8_e5m2fnuz: Final[Dtype]
float8_e8m0fnu: Final[Dtype]
float6_e2m3fn: Final[Dtype]
float6_e3m2fn: Final[Dtype]
float4_e2m1fn: Final[Dtype]
float8_e4m3: Final[Dtype]
float8_e8m0: Final[Dtype]
float6_e2m3: Final[Dtype]
float6_e3m2: Final[Dtype]
float4_e2m1: Final[Dtype]
