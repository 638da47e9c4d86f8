#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The event trace's time order, checked on the host without QEMU or Go.
make test runs this as the host test BUILD/host/test_trace2go.

DUMP is a stretch of a flight-recorder dump (two cores, two ping-pong
pairs) whose rate was refined while it printed: every line from the
refinement on came out 343 ns early, so core 0's GoPark at 206595216 ns
follows its GoUnpark at 206595239, and core 1's GoStart at 206595296 its
GoPark at 206595309. Go 1.19's parser refused the trace trace2go wrote
from it ("time stamps out of order"): a P's batches are one stream to it,
and the converter let the time go back where a new batch began.

  - trace2json.time_order names the first line whose time goes back, and
    trace2json.check (run on every traced boot) and trace2go.check (the
    flight recorder's dump) report it;
  - trace2go keeps each P's times from going back across batches, and
    go_order, Go's merge of the per-P streams by each goroutine's
    sequence (internal/trace/order.go), finds the written trace in order;
  - go_order names the two events Go's parser would refuse, with their
    goro lines, in a stream whose P goes back across batches, and in one
    where a goroutine's wake-up comes after its start on another P;
  - where `go` is installed, go tool trace reads the converted dump.

Prints PASS/FAIL lines. Python 3 standard library only.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from tools.trace import trace2go, trace2json  # noqa: E402
from checks import Checks  # noqa: E402  (this folder: sys.path[0])

DUMP = """\
TRACE 1 206592485 GoStart g=20 p=1
TRACE 0 206592615 GoStart g=17 p=0
TRACE 0 206593126 GoUnpark g=18 by=17
TRACE 1 206593286 GoUnpark g=19 by=20
TRACE 0 206593447 GoPark g=17 reason="chan send"
TRACE 0 206593727 GoStart g=18 p=0
TRACE 1 206593767 GoPark g=20 reason="chan send"
TRACE 0 206594077 GoUnpark g=17 by=18
TRACE 1 206594077 GoStart g=19 p=1
TRACE 0 206594638 GoPark g=18 reason="chan send"
TRACE 1 206594708 GoUnpark g=20 by=19
TRACE 0 206594809 GoStart g=17 p=0
TRACE 0 206595239 GoUnpark g=18 by=17
TRACE 1 206595309 GoPark g=19 reason="chan send"
TRACE 0 206595216 GoPark g=17 reason="chan send"
TRACE 1 206595296 GoStart g=20 p=1
TRACE 0 206595496 GoStart g=18 p=0
TRACE 0 206595897 GoUnpark g=17 by=18
TRACE 1 206595997 GoUnpark g=19 by=20
TRACE 0 206596338 GoPark g=18 reason="chan send"
""".splitlines()


def log(dump):
    return ([f"TRACE begin cores=2 tsc_hz=2596128229 events={len(dump)} dropped=1"] + dump +
            ["TRACE end"])


def main():
    check = Checks("test_trace2go")

    bad, good = log(DUMP), log(sorted(DUMP, key=lambda l: int(l.split()[2])))
    # The dump's line 15 (the log's 16th) is the first to go back.
    _, events = trace2json.parse(bad)
    order = trace2json.time_order(events)
    want = "trace: line 16 (core 0 GoPark) at 206595216 ns, 93 ns before line 15 (core 1 GoPark)"
    check("time_order_names_the_line", len(order) == 1 and order[0].startswith(want), order)
    check("time_order_passes_a_sorted_dump", trace2json.time_order(trace2json.parse(good)[1]) == [],
          trace2json.time_order(trace2json.parse(good)[1]))
    problems = trace2json.check(bad)
    check("trace2json_check_reports_it", any("the dump's times go back" in p for p in problems),
          problems)
    with tempfile.TemporaryDirectory(prefix="goro-test-trace2go-") as tmp:
        # go tool trace is not needed to see it: the order is checked first.
        path, os.environ["PATH"] = os.environ.get("PATH", ""), tmp
        try:
            problems = trace2go.check(bad, tmp)
        except FileNotFoundError as e:
            problems = [f"ran {e.filename}"]
        os.environ["PATH"] = path
        check("trace2go_check_reports_it",
              problems[:1] and problems[0].startswith("trace2go: trace: line 16 "), problems)

    header, events = trace2json.parse(bad)
    _, c = trace2go.convert(header, events)
    order = trace2go.go_order(c.w.events)
    check("each_p_keeps_its_time_order", order is None and c.w.count["clamped"] == 2,
          f"{order}; clamped {c.w.count['clamped']}")

    # As the converter wrote the dump before: P 0's second batch begins
    # 23 ns before its first ended.
    u, blk, st = trace2go.EV_GO_UNBLOCK, trace2go.EV_GO_BLOCK_SEND, trace2go.EV_GO_START
    cr = trace2go.EV_GO_CREATE
    stream = [(0, cr, 100, (17, 1, 1), 1), (0, cr, 100, (18, 1, 1), 1),
              (1, st, 130, (18, 1), 2), (1, blk, 140, (), 3), (0, st, 150, (17, 1), 4),
              (0, u, 239, (18, 2, 1), 6), (1, st, 300, (18, 3), 7), (0, blk, 216, (), 8)]
    order = trace2go.go_order(stream)
    check("go_order_names_a_p_going_back",
          order == "Go's parser merges GoBlockSend on P 0 at 216 ns (line 8) after GoUnblock "
                   "on P 0 at 239 ns (line 6), which is 23 ns later (Go: time stamps out of order)",
          order)
    # A wake-up stamped after the start it led to, on another P: the start
    # waits for it in Go's merge (the goroutine's sequence), and time goes back.
    stream = [(0, cr, 100, (17, 1, 1), 1), (0, st, 110, (17, 1), 2),
              (0, blk, 120, (), 3), (1, st, 150, (17, 3), 4), (0, u, 200, (17, 2, 1), 5)]
    order = trace2go.go_order(stream)
    check("go_order_names_a_late_wakeup",
          order == "Go's parser merges GoStart on P 1 at 150 ns (line 4) after GoUnblock "
                   "on P 0 at 200 ns (line 5), which is 50 ns later (Go: time stamps out of order)",
          order)
    check("go_order_passes_an_ordered_stream", trace2go.go_order(stream[:3]) is None, "")
    if shutil.which("go"):          # Go's own parser, where there is one, agrees
        with tempfile.TemporaryDirectory(prefix="goro-test-trace2go-") as tmp:
            out = os.path.join(tmp, "trace.out")
            with open(out, "wb") as f:
                f.write(trace2go.convert(*trace2json.parse(bad))[0])
            r = subprocess.run(["go", "tool", "trace", "-pprof=sched", out], capture_output=True)
            check("go_tool_trace_reads_the_dump", r.returncode == 0,
                  r.stderr.decode(errors="replace").strip()[-200:])
    return check.status()


if __name__ == "__main__":
    sys.exit(main())
