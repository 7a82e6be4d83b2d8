"""HR-STREAM-8 over a pipe: a StreamReader holds at most the item being read, so reading a
stream of several large tensors, each dropped before the next is read, peaks at the largest
frame plus a constant. Measured as peak resident memory (VmHWM) in a fresh subprocess that
reads the stream from its stdin (a pipe the test writes into from a thread), against

    peak growth <= largest frame + 1 MiB

(the constant: the reader's read-ahead block, descriptor scratch, the item records and the
Python objects of one item). The stream's bytes are built in this process, whose memory the
subprocess cannot reuse."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import hurray
from memprobe import PROBE_HEADER, linux_only

pytestmark = linux_only

PROBE = PROBE_HEADER + r"""
import numpy as np

count, nbytes = int(sys.argv[1]), int(sys.argv[2])
base = hwm()
seen = 0
with hurray.StreamReader(0) as reader:
    for t in reader:
        a = np.asarray(t)
        assert a.nbytes == nbytes and float(a[-1]) == float(seen)
        seen += 1
        del a, t
assert seen == count
print(hwm() - base)
"""

SLACK = 1 << 20


def feed(proc, data):
    view = memoryview(data)
    for i in range(0, len(view), 1 << 20):
        proc.stdin.write(view[i:i + (1 << 20)])
    proc.stdin.close()


@pytest.mark.parametrize("count,nbytes", [(4, 16 << 20), (2, 64 << 20)])
def test_HR_STREAM_8_reader_peak_rss_is_largest_frame_over_pipe(count, nbytes):
    w = hurray.StreamWriter()
    for i in range(count):
        w.write(hurray.from_numpy(np.full(nbytes // 4, i, np.float32), copy=True))
    data = w.getvalue()
    largest_frame = nbytes + 4096  # the data frame: its bytes, header and padding
    proc = subprocess.Popen([sys.executable, "-c", PROBE, str(count), str(nbytes)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=False)
    th = threading.Thread(target=feed, args=(proc, data))
    th.start()
    out = proc.stdout.read()  # not communicate(): it would close stdin under the feeder
    th.join()
    assert proc.wait(timeout=300) == 0
    growth = int(out.split()[-1])
    print(f"{count} x {nbytes} bytes: peak growth {growth} bytes, "
          f"budget {largest_frame + SLACK}")
    assert growth <= largest_frame + SLACK, (growth, largest_frame + SLACK)
