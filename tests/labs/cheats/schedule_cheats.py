"""Cheats against the trusted side of a schedule (issue 42, item 2: "the student's code decides
only the order of operations that trusted code carries out"), in the format of cheats.py (which
appends them to its CHEATS). Each is the solution's schedule with one more run_op call whose
integers the region whitelist accepts (the task's call, integer arguments, p.chunks, p.streams)
but whose values do not exist: without a check in run_op they index the driver's host and device
buffers, its streams and its event table out of bounds (a chunk past the last writes past
host_out). ch06_streams/schedule.h checks every call before run_op uses it: the program stops
with "schedule refused: ..." (exit 1), the tests are lost, with that reason, and so the task.
Lint-clean: test_cheats.py shows the whole lint accepts each.

  chunk-and-stream-out-of-range   ch06.1: after the depth-first loop, a copy out of chunk
                                  p.chunks + 100000 in stream p.streams + 7;
  op-outside-the-enum             ch06.2: the breadth-first rounds with (Op)o, the one cast the task
                                  allows, o = op + 3 for the last operation: an Op no enum names.
"""
from cheats import region

DF = "ch06.depth-first"
BF = "ch06.breadth-first"

CHEATS = [
    {"name": "schedule-chunk-and-stream-out-of-range", "lab": "ch06", "zero": ["ch06.1"], "gpu": True,
     "at_most": {"ch06.1": 0},
     "make": region("streams.cu", DF,
                    "for (int c = 0; c < p.chunks; c++) {",
                    "    bool synchronous = (mode == DEFAULT_SYNC);",
                    "    int s = (mode == DEPTH_FIRST) ? c % p.streams : 0;",
                    "    run_op(p, H2D, c, s, synchronous);",
                    "    run_op(p, KERNEL, c, s, synchronous);",
                    "    run_op(p, D2H, c, s, synchronous);",
                    "}",
                    "run_op(p, D2H, p.chunks + 100000, p.streams + 7, false);  // no such chunk, no such stream")},
    {"name": "schedule-op-outside-the-enum", "lab": "ch06", "zero": ["ch06.2"], "gpu": True,
     "at_most": {"ch06.2": 0},
     "make": region("streams.cu", BF,
                    "for (int first = 0; first < p.chunks; first += p.streams) {",
                    "    int last = std::min(first + p.streams, p.chunks);",
                    "    for (int op = H2D; op <= D2H; op++)",
                    "        for (int c = first; c < last; c++) {",
                    "            int o = op == D2H ? op + 3 : op;  // 5: no Op has it",
                    "            run_op(p, (Op)o, c, c % p.streams, false);",
                    "        }",
                    "}")},
]
