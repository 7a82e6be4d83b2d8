"""Exceptions: classes, attributes, and the one status -> class table.

Seed § Error Handling; docs/spec/errors-and-limits.md § Status codes ("the Python
binding maps them to exception classes from one table (per context: descriptor,
file, stream)")."""
import builtins

import pytest

import hurray
from wire import descriptor, float32_matrix

ALL_STATUS = [
    "TRUNCATED", "BAD_MAGIC", "VERSION", "RESERVED_NONZERO", "INVALID_TAG", "RESERVED_TAG",
    "LENGTH", "OVERFLOW", "LIMIT", "RANGE", "CONSTRAINT", "COMBINATION", "BUFFER_COUNT",
    "BUFFER_SIZE", "ALIGNMENT", "SECTION_ORDER", "INDEX", "DUPLICATE", "UNSUPPORTED",
    "ARGUMENT", "NOMEM", "IO", "INTERNAL", "OFFSET", "OVERLAP",
]
MALFORMED_OR_INVALID = [s for s in ALL_STATUS
                        if s not in ("VERSION", "UNSUPPORTED", "ARGUMENT", "NOMEM", "IO",
                                     "INTERNAL")]


def test_REQ_ERR_HIERARCHY_classes_and_bases():
    E = hurray
    assert issubclass(E.HurrayError, Exception)
    assert issubclass(E.InvalidDescriptorError, E.HurrayError)
    assert issubclass(E.InvalidDescriptorError, ValueError)
    assert issubclass(E.UnsupportedError, E.HurrayError)
    assert issubclass(E.BufferError, E.HurrayError)
    assert issubclass(E.BufferError, builtins.BufferError)
    assert E.BufferError is not builtins.BufferError
    assert issubclass(E.InternalError, E.HurrayError)
    assert issubclass(E.InternalError, RuntimeError)


def test_REQ_ERR_FILE_STREAM_OSERROR_subclasses():
    assert issubclass(hurray.FileError, hurray.HurrayError)
    assert issubclass(hurray.FileError, OSError)
    assert issubclass(hurray.StreamError, hurray.HurrayError)
    assert issubclass(hurray.StreamError, OSError)
    with pytest.raises(OSError):
        raise hurray.StreamError("framing")


def test_REQ_ERR_CODE_FIELD_raised_instances_carry_code_field_offset():
    data = bytearray(float32_matrix())
    data[23] = 1  # reserved byte 23
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.Descriptor.decode(bytes(data))
    e = info.value
    assert e.code == "RESERVED_NONZERO"
    assert isinstance(e.field, str) and e.field
    assert e.offset == 23
    assert e.field in str(e) or "23" in str(e)


def test_REQ_ERR_CODE_FIELD_defaults_on_hand_built_instances():
    e = hurray.HurrayError("x")
    assert e.code is None and e.field is None and e.offset is None


@pytest.mark.parametrize("status", MALFORMED_OR_INVALID)
def test_REQ_ERR_ONE_TABLE_descriptor_context_invalid(status):
    assert hurray._hurray._error_class(status) is hurray.InvalidDescriptorError
    assert hurray._hurray._error_class(status, "file") is hurray.FileError
    assert hurray._hurray._error_class(status, "stream") is hurray.StreamError


@pytest.mark.parametrize("status", ["VERSION", "UNSUPPORTED"])
@pytest.mark.parametrize("context", ["descriptor", "file", "stream"])
def test_REQ_ERR_ONE_TABLE_unsupported(status, context):
    assert hurray._hurray._error_class(status, context) is hurray.UnsupportedError


@pytest.mark.parametrize("context", ["descriptor", "file", "stream"])
def test_REQ_ERR_ONE_TABLE_api_resource_internal(context):
    cls = hurray._hurray._error_class
    # a stream's API errors (write after finish, getvalue with a destination) are
    # StreamError (requirements § Streaming)
    assert cls("ARGUMENT", context) is (hurray.StreamError if context == "stream" else ValueError)
    assert cls("NOMEM", context) is MemoryError
    assert cls("INTERNAL", context) is hurray.InternalError


def test_REQ_ERR_ONE_TABLE_io():
    cls = hurray._hurray._error_class
    assert cls("IO", "descriptor") is OSError
    assert cls("IO", "file") is hurray.FileError
    assert cls("IO", "stream") is hurray.StreamError


def test_REQ_ERR_ONE_TABLE_reserved_tag_is_invalid_descriptor():
    # A reserved element-type byte "MUST be refused" (requirements § Private device tags;
    # element-types.md HR-DTYPE-2): InvalidDescriptorError, code RESERVED_TAG.
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.Descriptor.decode(descriptor(dtype=0x10, shape=(1,), buffers=[(4, 6, 1)]))
    assert info.value.code == "RESERVED_TAG"
    assert info.value.field == "dtype"


def test_REQ_ERR_ONE_TABLE_version_is_unsupported():
    with pytest.raises(hurray.UnsupportedError) as info:
        hurray.Descriptor.decode(descriptor(version=(2, 0)))
    assert info.value.code == "VERSION"


def test_error_class_rejects_unknown_names():
    with pytest.raises(ValueError):
        hurray._hurray._error_class("NOPE")
    with pytest.raises(ValueError):
        hurray._hurray._error_class("LENGTH", "socket")
