"""Ratio lines for the Python benchmarks: each case of a group against that group's anchors.

Every benchmark names its role in extra_info: "subject" (the hurray path) or "anchor" (the
NumPy path it is compared with, measured in the same run). After pytest-benchmark's own table,
one line per (subject, anchor) pair gives min and mean ratios: subject / anchor, so 3.0 means
the hurray path takes three times as long.

Benchmarks marked `guard` form the short subset `make bench-compare` runs against the committed
baseline (bench/compare.py, bench/baselines/).
"""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "guard: in the short subset make bench-compare checks against bench/baselines/")


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    benches = [b for b in getattr(session, "benchmarks", []) if b]
    if not benches:
        return
    groups = {}
    for b in benches:
        groups.setdefault(b.group, []).append(b)
    tr = terminalreporter
    tr.section("hurray vs anchors (ratio = hurray / anchor; min, mean)")
    for group in sorted(groups, key=str):
        subjects = [b for b in groups[group] if b.extra_info.get("role") == "subject"]
        anchors = [b for b in groups[group] if b.extra_info.get("role") == "anchor"]
        for s in subjects:
            for a in anchors:
                low, mean = s.stats.min / a.stats.min, s.stats.mean / a.stats.mean
                tr.write_line(
                    f"{group}: {s.name} / {a.name}: min {low:6.2f}x  mean {mean:6.2f}x"
                    f"   ({s.stats.min * 1e9:,.0f} ns vs {a.stats.min * 1e9:,.0f} ns min)"
                )
    # Benchmarks that move data (extra_info throughput=True, nbytes): GiB/s at the min time.
    moving = [b for b in benches if b.extra_info.get("throughput") and b.extra_info.get("nbytes")]
    if moving:
        tr.section("throughput (GiB/s = nbytes / min time)")
        for b in sorted(moving, key=lambda b: (str(b.group), b.extra_info.get("role") != "subject")):
            gibs = b.extra_info["nbytes"] / b.stats.min / (1 << 30)
            tr.write_line(f"{b.group}: {b.name}: {gibs:8.2f} GiB/s"
                          f"   ({b.extra_info['role']}, {b.stats.min * 1e3:,.3f} ms min)")
