"""Cheats against the lint's reading of code and against the measurement (issue 33, items 2 and
3), in the format of cheats.py (which appends them to its CHEATS). Besides "zero" and "lose",
"at_most" gives the most points an attacked task may score ({task: points}): `lab.py selftest`
fails when it scores more.

  The lint must read code as the compiler does (gpu False: refused before anything is built):
    alternative tokens, digraphs, '$' in names, a raw string or a line splice that hides code,
    a constructor at file scope.
    a ch06 schedule that names none of the data but reaches it through a member's address and
    computes the answer on the CPU (a host region takes no address and casts to nothing but
    its "casts": the OS could not fence that data, see labs/grader/lint.py);
  What no lint can see (gpu True):
    a kernel that computes once, slowly, and returns at once when it finds its output already
    right: every timed launch gets freshly poisoned outputs;
    a kernel that is fast only at the shape the perf gate used to time (n = 2^24, 256 threads):
    the timed shape is drawn from the grade's seed;
    an out-of-bounds read at every shape but the sanitizer's old fixed ones: the sanitizer's
    shapes are drawn from the grade's seed.
"""
from cheats import NN, N1, GS, OPB, region

GRID_STRIDE = ["long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
               "for (; i < n; i += (long long)gridDim.x * blockDim.x) c[i] = a[i] + b[i];"]
COPY = "if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data(), sizeof(Sphere) * count));"

CHEATS = [
    # The lint reads code as the compiler does.
    {"name": "alternative-token-before-a-call", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "at_most": {"ch05.2": 0},
     "make": region("ray.cu", "ch05.constant-copy", "bool copied = 0 or system(\"cp /bin/true /tmp/x\");",
                    "if (not copied) " + COPY)},
    {"name": "alternative-tokens-only", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "at_most": {"ch02.1": 0},
     "make": region(N1, OPB, "long long i = blockIdx.x;",
                    "while (i < n and not (i < 0)) { c[i] = a[i] + b[i]; i += gridDim.x; }")},
    {"name": "digraph-directive", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "at_most": {"ch02.1": 0},
     "make": region(N1, OPB, "%:include \"/etc/hostname\"", "long long i = blockIdx.x;",
                    "while (i < n) { c[i] = a[i] + b[i]; i += gridDim.x; }")},
    {"name": "dollar-name-moves-a-literal", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "at_most": {"ch02.2": 0},
     "make": region(NN, GS, "long long u8$ = 0;", "long long q = u8$ + '}';", *GRID_STRIDE)},
    {"name": "raw-string-hides-code", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "at_most": {"ch02.2": 0},
     "make": region(NN, GS, "const char* note = R\"x(", "}", "static int forged = 18;",
                    "void again() {", ")x\";", *GRID_STRIDE)},
    {"name": "line-splice-in-a-string", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "at_most": {"ch02.2": 0},
     "make": region(NN, GS, "const char* note = \"a\\", "\"; c[0] = note[0];", *GRID_STRIDE)},
    {"name": "file-scope-constructor", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "at_most": {"ch05.2": 0},
     "make": region("ray.cu", "ch05.constant-copy", COPY, "}",
                    "struct Early { Early() { 0 or system(\"cp /bin/true /tmp/x\"); } } early;",
                    "void again() {")},
    {"name": "constructor-called-by-braces", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "at_most": {"ch05.2": 0},
     "make": region("ray.cu", "ch05.constant-copy",
                    "struct Early { Early() { HANDLE_ERROR(cudaMemcpyToSymbol(s, nullptr, 0)); } };",
                    "Early{};", COPY)},
    {"name": "user-defined-literal-call", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "at_most": {"ch05.2": 0},
     "make": region("ray.cu", "ch05.constant-copy", "auto forged = \"cp /bin/true /tmp/x\"_sh;", COPY)},
    {"name": "schedule-reads-host-data-through-a-member-address", "lab": "ch06", "zero": ["ch06.2"],
     "gpu": False, "at_most": {"ch06.2": 0},
     "make": region("streams.cu", "ch06.breadth-first",
                    # Pipeline: n, chunks, streams, max_blocks, steps, host_in, host_out: the two
                    # pointers are the ints after `steps`, read through its address.
                    "int* here = &p.steps;",
                    "unsigned long long at = (unsigned long long)here;",
                    "unsigned long long in_at = (unsigned)here[1] | (unsigned long long)(unsigned)here[2] << 32;",
                    "unsigned long long out_at = (unsigned)here[3] | (unsigned long long)(unsigned)here[4] << 32;",
                    "int* in = here + (long long)(in_at - at) / 4;",
                    "int* out = here + (long long)(out_at - at) / 4;",
                    "for (long long i = 0; i < p.n; i++) {",
                    "    unsigned x = (unsigned)in[i];",
                    "    for (int k = 0; k < p.steps; k++) x = 1664525u * x + 1013904223u;",
                    "    out[i] = (int)x;",
                    "}")},
    # What no lint can see: the measurement must not be recognisable.
    {"name": "computes-once-returns-early-when-output-right", "lab": "ch02", "lose": ["ch02.2"],
     "gpu": True, "at_most": {"ch02.2": 8},
     "make": region(NN, GS, "if (n > 0 && c[0] == a[0] + b[0] && c[n - 1] == a[n - 1] + b[n - 1])",
                    "    return;  // already right: a timed rerun",
                    "if (blockIdx.x != 0) return;  // one block does it all, slowly",
                    "for (long long k = threadIdx.x; k < n; k += blockDim.x) c[k] = a[k] + b[k];")},
    {"name": "fast-only-at-the-old-timed-shape", "lab": "ch02", "lose": ["ch02.2"], "gpu": True,
     "at_most": {"ch02.2": 8},
     "make": region(NN, GS, "if (n != (1LL << 24) || blockDim.x != 256) {",
                    "    if (blockIdx.x != 0) return;  // anywhere else: one block, slowly",
                    "    for (long long k = threadIdx.x; k < n; k += blockDim.x) c[k] = a[k] + b[k];",
                    "    return;",
                    "}", *GRID_STRIDE)},
    {"name": "out-of-bounds-except-at-the-old-sanitizer-shapes", "lab": "ch02", "lose": ["ch02.1"],
     "gpu": True, "at_most": {"ch02.1": 6},
     "make": region(N1, OPB, "long long i = blockIdx.x;",
                    "if (i == 0 && n != 37 && n != 1000 && a[n + 64] == 12345) c[0] = 0;  // reads past a",
                    "while (i < n) { c[i] = a[i] + b[i]; i += gridDim.x; }")},
]
