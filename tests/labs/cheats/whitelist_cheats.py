"""Cheats of issue 42's first class, in the format of cheats.py (which appends them to its CHEATS):
ch06 schedules that reach the driver's buffers without naming them, taking an address or casting,
so that the token rules of labs/grader/lint.py accept every one of them (test_lint_whitelist.py
checks that), and compute the answer on the CPU. The whitelist on clang's tree refuses each
before anything is built (gpu False: lab.py selftest and test_cheats.py both grade them).

  structured-binding      a declaration that binds the schedule's Pipeline's members, the buffer
                          pointers among them, under names of its own;
  union-pointer-integer   a local union that turns a pointer (a local array, decayed) into an
                          integer and back: stepping from a local's address through the stack to
                          the caller's Pipeline;
  local-array-scan        a local array's first element as the start of a scan for the guard
                          word the driver writes past each buffer;
"""
from cheats import region

BF = "ch06.breadth-first"
LCG = ["    unsigned x = v;", "    for (int k = 0; k < p.steps; k++) x = 1664525u * x + 1013904223u;"]

CHEATS = [
    {"name": "schedule-binds-the-buffers-by-structured-binding", "lab": "ch06", "zero": ["ch06.2"],
     "gpu": False, "at_most": {"ch06.2": 0},
     "make": region("streams.cu", BF,
                    "auto& [n, chunks, streams, blocks, steps, in, out, st, din, dout, guard, record, ev] = p;",
                    "for (long long i = 0; i < n; i++) {",
                    "    unsigned v = in[i];", *LCG, "    out[i] = x;",
                    "}")},
    {"name": "schedule-turns-a-pointer-into-an-integer-and-back", "lab": "ch06", "zero": ["ch06.2"],
     "gpu": False, "at_most": {"ch06.2": 0},
     "make": region("streams.cu", BF,
                    "int probe[2] = {0, 0};",
                    "union Word { int* at; unsigned long long bits; } w;",
                    "w.at = probe;",
                    "unsigned long long frame = w.bits;",
                    "for (int k = 1; k < 64; k++) {",
                    "    w.bits = frame + 8 * k;",
                    "    if (w.at[0] == p.chunks && w.at[1] == p.streams) {",
                    "        for (int c = 0; c < p.chunks; c++) run_op(p, KERNEL, c, 0, false);",
                    "        break;",
                    "    }",
                    "}",
                    "for (int c = 0; c < p.chunks; c++) run_op(p, D2H, c, 0, false);")},
    {"name": "schedule-scans-from-a-local-array", "lab": "ch06", "zero": ["ch06.2"],
     "gpu": False, "at_most": {"ch06.2": 0},
     "make": region("streams.cu", BF,
                    "long long probe[1] = {0};",
                    "long long k = 0;",
                    "while (k < 4096 && probe[k] != p.n) k++;",  # the Pipeline's first member
                    "long long in_bits = probe[k + 3], out_bits = probe[k + 4];",
                    "for (int c = 0; c < p.chunks; c++) run_op(p, (in_bits != out_bits) ? H2D : D2H, c, 0, false);")},
]
