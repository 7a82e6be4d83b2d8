"""Ratio lines for the Python benchmarks: each case of a group against that group's anchors.

Every benchmark names its role in extra_info: "subject" (the hurray path) or "anchor" (the
NumPy path it is compared with, measured in the same run). After pytest-benchmark's own table,
one line per (subject, anchor) pair gives min and mean ratios: subject / anchor, so 3.0 means
the hurray path takes three times as long.
"""


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
