"""What the memory-follows-input tests share (test_memory.py, test_memory_readers.py): the
budget every reader is held to, the probe header a fresh subprocess runs (VmHWM from /proc),
the skip for systems without /proc, and the smallest tensor and composite the inputs are
made of.

Each test builds its input in the pytest process, then runs a probe (PROBE_HEADER followed by
its own cases) in a fresh subprocess that takes a baseline, reads the input, keeps everything
it read alive and prints the input's size and the peak growth; `check_growth` asserts

    peak - baseline <= BUDGET_FACTOR x input size + BUDGET_SLACK

(8 x the input + 1 MiB, under default limits)."""
import os

import pytest

import hurray

MEMBERS = 65536  # the default max_composite_members
BUDGET_FACTOR = 8
BUDGET_SLACK = 1 << 20

# VmHWM is read from /proc (Linux): the tests are skipped elsewhere
linux_only = pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="VmHWM is read from /proc (Linux)"
)

# The start of every probe: imports and hwm(), the process's peak resident bytes so far.
PROBE_HEADER = r"""
import os, re, sys
import hurray

def hwm():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) * 1024
"""


def budget(size):
    return BUDGET_FACTOR * size + BUDGET_SLACK


def check_growth(case, size, growth):
    """Prints the figures (pytest shows them with -s or on failure) and asserts the budget."""
    b = budget(size)
    print(f"{case}: input {size} bytes, peak growth {growth} bytes ({growth / size:.2f}x), "
          f"budget {b} ({b / size:.2f}x)")
    assert growth <= b, (case, size, growth, round(growth / size, 2))


def tiny():
    """The smallest tensor: uint8, shape (0,), one empty buffer (a 64-byte descriptor)."""
    return hurray.zeros((0,), dtype=hurray.uint8)


def group_of_tiny(n):
    t = tiny()
    return hurray.Composite("group", shape=[0], dtype=hurray.uint8, members=[t] * n)


def page_aligned_members(n):
    """A stream of one group of `n` uint8[1] members whose buffers each declare 4 KiB
    alignment: the writer's frames with each member's alignment_log2 byte (frame offset 56:
    8 header bytes, 40 of descriptor before the buffer table's size field, then the size)
    patched from 6 to 12. A member frame is 80 bytes (stream.md § Frame)."""
    t = hurray.zeros((1,), dtype=hurray.uint8)
    writer = hurray.StreamWriter()
    writer.write(hurray.Composite("group", shape=[0], dtype=hurray.uint8, members=[t] * n))
    data = bytearray(writer.getvalue())
    head = len(data) - 80 * n
    assert data[head + 56::80] == b"\x06" * n
    data[head + 56::80] = b"\x0c" * n
    return bytes(data)


def page_aligned_items(n):
    """A stream of `n` top-level uint8[1] tensors whose buffers each declare 4 KiB alignment:
    80-byte frames, each with its alignment_log2 byte (frame offset 56) patched from 6 to 12.
    Each item's slack is its own; a consumer that keeps them all keeps a page an item unless
    the reader's budget (errors-and-limits.md HR-LIMIT-2) counts the items kept."""
    writer = hurray.StreamWriter()
    writer.write(hurray.zeros((1,), dtype=hurray.uint8))
    frame = bytearray(writer.getvalue())
    assert len(frame) == 80 and frame[56] == 6
    frame[56] = 12
    return bytes(frame) * n
