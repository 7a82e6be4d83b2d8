"""The speed guard: a short subset of the Python benchmarks against a committed baseline.

    python bench/compare.py compare     # make bench-compare: warn on > 10 % regressions
    python bench/compare.py baseline    # make bench-baseline: rewrite this machine kind's file

The subset is every benchmark in bench/python marked `guard` except the 64 MiB and 1 GiB
cases (bench/python/conftest.py registers the mark); it runs in well under 90 s. Results are
min times (seconds), the statistic least disturbed by a shared machine, stored per machine
kind in bench/baselines/<kind>.json (`python-native-<machine>`, e.g. python-native-x86_64:
the binding's C extension on that architecture), with the machine's description.

compare: runs the subset once. The anchors (NumPy, PyTorch, protobuf, the raw pipe: code
this repository never changes) measure the machine: the median of their min / baseline min is
the machine factor (a shared machine under load runs everything slower alike). A hurray
benchmark whose min exceeds baseline x factor by more than THRESHOLD (10 %) is run again,
alone, up to RETRIES times, and keeps its best min; only one still over the threshold after
that prints one line

    WARNING: <benchmark> regressed N% (min X vs baseline Y)

It never fails: machines are noisy, so the exit status is 0 whatever it finds, whether the
baseline is missing, or pytest itself fails (it says so). Benchmarks new since the baseline
are listed, not judged. baseline: runs the subset RUNS times (default 3) and stores each
benchmark's best min and its role.

Environment: HURRAY_BENCH_THRESHOLD (default 0.10), HURRAY_BENCH_RETRIES (default 2),
HURRAY_BENCH_RUNS (baseline runs, default 3), HURRAY_BENCH_KIND (override the machine kind).
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, "bench", "python")
BASELINES = os.path.join(ROOT, "bench", "baselines")
SUBSET = ["-m", "guard", "-k", "not 64MiB and not 1GiB"]
THRESHOLD = float(os.environ.get("HURRAY_BENCH_THRESHOLD", "0.10"))
RETRIES = int(os.environ.get("HURRAY_BENCH_RETRIES", "2"))
RUNS = int(os.environ.get("HURRAY_BENCH_RUNS", "3"))


def machine_kind():
    return os.environ.get("HURRAY_BENCH_KIND") or f"python-native-{platform.machine()}"


def machine_info():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), "")
    except OSError:
        pass
    info = {"kind": machine_kind(), "machine": platform.machine(), "system": platform.system(),
            "cpu": cpu or platform.processor(), "cpu_count": os.cpu_count(),
            "python": platform.python_version()}
    for mod in ("numpy", "torch", "jax", "google.protobuf"):
        try:
            info[mod] = __import__(mod, fromlist=["__version__"]).__version__
        except Exception:  # an absent partner only skips its anchor
            pass
    return info


def run_pytest(selection):
    """Runs pytest-benchmark on `selection` (pytest arguments); {fullname: min seconds}."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
               "addopts=", "--benchmark-only", "--benchmark-max-time=0.05",
               "--benchmark-min-rounds=5", f"--benchmark-json={out}",
               "--benchmark-disable-gc", *selection]
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if proc.returncode != 0:
            print(proc.stdout[-4000:])
            print(f"bench-compare: pytest exited {proc.returncode} (not a build failure)")
        try:
            with open(out) as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
    return {b["fullname"]: (b["stats"]["min"], b.get("extra_info", {}).get("role", "subject"))
            for b in data.get("benchmarks", [])}


def fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def baseline_path():
    return os.path.join(BASELINES, f"{machine_kind()}.json")


def cmd_baseline():
    best = {}
    for _ in range(RUNS):
        for name, (t, role) in run_pytest([BENCH_DIR, *SUBSET]).items():
            best[name] = [min(t, best.get(name, [t])[0]), role]
    if not best:
        print("bench-baseline: no results; baseline left as it was")
        return 1
    os.makedirs(BASELINES, exist_ok=True)
    doc = {"machine": machine_info(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "statistic": f"[min seconds, role], best of {RUNS} runs of the guard subset",
           "benchmarks": dict(sorted(best.items()))}
    with open(baseline_path(), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"bench-baseline: {len(best)} benchmarks written to "
          f"{os.path.relpath(baseline_path(), ROOT)}")
    return 0


def cmd_compare():
    path = baseline_path()
    if not os.path.exists(path):
        print(f"bench-compare: no baseline for machine kind {machine_kind()} "
              f"({os.path.relpath(path, ROOT)}); `make bench-baseline` writes one. Nothing compared.")
        return 0
    with open(path) as f:
        base = {n: v[0] for n, v in json.load(f)["benchmarks"].items()}
    start = time.monotonic()
    got = run_pytest([BENCH_DIR, *SUBSET])
    if not got:
        print("bench-compare: no results (see above); nothing compared")
        return 0
    now = {n: t for n, (t, _) in got.items()}
    subjects = {n for n, (_, role) in got.items() if role != "anchor"}
    # The anchors (NumPy, PyTorch, protobuf, the raw pipe) are the partners' code, which this
    # repository does not change: how much slower they run than at baseline time is how much
    # slower the machine is now. Subjects are judged against the baseline scaled by that.
    ratios = sorted(now[n] / base[n] for n in now if n in base and n not in subjects)
    machine = ratios[len(ratios) // 2] if ratios else 1.0
    print(f"bench-compare: machine factor {machine:.2f} (median anchor min / baseline, "
          f"{len(ratios)} anchors); subjects judged against baseline x factor")

    def over(name):
        return name in base and now[name] > base[name] * machine * (1 + THRESHOLD)

    for _ in range(RETRIES):
        flagged = [n for n in subjects if over(n)]
        if not flagged:
            break
        for name, (t, _) in run_pytest([os.path.join(ROOT, n) for n in flagged]).items():
            now[name] = min(t, now.get(name, t))
    warnings = 0
    for name in sorted(now):
        if name not in base:
            print(f"bench-compare: new benchmark (no baseline yet): {name}")
        elif name in subjects and over(name):
            warnings += 1
            pct = (now[name] / (base[name] * machine) - 1) * 100
            print(f"WARNING: {name} regressed {pct:.0f}% "
                  f"(min {fmt(now[name])} vs baseline {fmt(base[name])}"
                  f"{'' if abs(machine - 1) < 0.005 else f' x machine factor {machine:.2f}'})")
    missing = sorted(set(base) - set(now))
    for name in missing:
        print(f"bench-compare: in the baseline but not run: {name}")
    print(f"bench-compare: {len(subjects)} hurray benchmarks against "
          f"{os.path.relpath(path, ROOT)}, {warnings} regressed > {THRESHOLD:.0%} after {RETRIES} re-runs "
          f"({time.monotonic() - start:.0f} s)")
    return 0


def main(argv):
    if len(argv) != 2 or argv[1] not in ("compare", "baseline"):
        print(__doc__)
        return 2
    if argv[1] == "baseline":
        return cmd_baseline()
    try:
        return cmd_compare()
    except Exception as e:  # the guard never fails a build
        print(f"bench-compare: could not compare ({type(e).__name__}: {e}); not a failure")
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
