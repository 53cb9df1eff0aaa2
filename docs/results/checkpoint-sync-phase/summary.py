#!/usr/bin/env python3
"""Summarizes ab.sh output: per jar tag and backend, the per-run p50 checkpoint duration, p50 and
max synchronous phase and load time, with medians over the runs and [min - max].
Usage: summary.py <out-dir>"""
import glob, os, re, statistics, sys
from collections import defaultdict

LINE = re.compile(r"^round \d+ (\S+) \d+ MiB: load (\d+) ms, first (\d+) ms, p50 (\d+) ms, "
                  r"max (\d+) ms, sync p50 (\d+) ms, sync max (\d+) ms")
runs = defaultdict(list)
for log in sorted(glob.glob(os.path.join(sys.argv[1], "*.log"))):
    tag = os.path.basename(log).rsplit("-", 1)[0]
    for line in open(log):
        m = LINE.match(line)
        if m:
            b = m.group(1)
            runs[(tag, b)].append([int(x) for x in m.groups()[1:]])

def cell(values):
    return "%d [%d - %d]" % (statistics.median(values), min(values), max(values))

print("| jar | backend | runs | checkpoint p50 (ms) | sync phase p50 (ms) | sync phase max (ms) | load (ms) |")
print("|---|---|---|---|---|---|---|")
for (tag, b), rs in sorted(runs.items()):
    col = lambda i: [r[i] for r in rs]
    print("| %s | %s | %d | %s | %s | %s | %s |" % (tag, b, len(rs), cell(col(2)), cell(col(4)),
                                                    cell(col(5)), cell(col(0))))
