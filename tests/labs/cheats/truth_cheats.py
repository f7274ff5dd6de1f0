"""Cheats against the truth of a grade (issue 42, items 2 to 4), in the format of cheats.py (which
appends them to its CHEATS; "at_most" as in measure_cheats.py). Each is the solution with one
attack in it; "lint": False marks one that stands for an attacker who got past the lint. Two of
them were lint-clean until device regions were read on clang's tree (labs/grader/device_ast.py),
which refuses them now (the matmul's cast of its const input, the other's pointer difference b - a;
tests/labs/test_lint_device.py shows it): they keep the lint off here so that the selftest still
proves what stops them at run time.

  Device code writes where it should only read:
    a slow tiled matmul that keeps its product in the low-order bits of its input M and, in a
    later launch that finds them there, decodes it and skips the work (every launch is followed
    by a check of the inputs against the driver's copy: the tests are lost; and every timed
    launch has inputs of its own: it would be slow there too).
  Device state that outlives a launch (past the lint, which refuses a static local):
    a slow tiled matmul that keeps its product in a static device array, each block its tile
    with 64 samples of the inputs and the width, and that hands it back when a later launch
    brings the same samples. When every timed launch started from its inputs restored as
    uploaded, the warm-up did the slow work and every timed launch was a copy (12/12 on an H200
    under the grader of b5653fc). Now the launcher draws new inputs for every launch: no samples
    match, every launch is slow, and the perf points are lost (the tests keep theirs: the second
    of a test's two passes, on the same inputs, gets the kept answer, which is right).
    A slow vector add that learns, from a[0] and b[0], the start of the stream its inputs were
    drawn from, and in a later launch whose inputs are that stream gone on draws the answer
    itself, reading neither input. Where the launcher's stream went on from launch to launch, the
    warm-up learnt it and every timed launch was foretold (ch02.2 10/10 on an H200 under the
    grader of 9281c45); now each launch's start is its own (driver.h: launch_stream), no launch
    is foretold, and the perf points are lost (8/10: 22% of the reference's speed).
  Memory errors at every shape and every run:
    a kernel that reads past its input only at shapes outside the sanitizer's old range
    (n > 300000: the tests have such shapes, and the guard page past every buffer faults);
    one that reads past its input only when the next buffer lies close behind it, where the
    read lands in that buffer (cudaMalloc's neighbours; memcheck's red zones moved them apart):
    with guard pages no buffer lies there, and the read faults;
    a ray-tracing kernel that reads one byte past the end of its image, a buffer the course's
    program allocates; lint-clean (a device region may index the kernel's pointer parameters):
    cudaMalloc rounds every allocation up and packs them, so the read lands in mapped memory and
    changes nothing, and only memcheck (2 of ch05.1's 8 points) would see it; the grading driver
    gives the program's own cudaMalloc guarded memory too, and the read faults in the tests;
    one that finds out from its arguments or environment that it runs under compute-sanitizer
    and then writes an output file of its own and exits (the sanitizer's run is now the tests'
    command, and its output is compared with the reference's), while its kernel reads past the
    end everywhere else (a guard page: the tests are lost).
  Timings outside the student's process:
    a slow kernel whose program rewrites the timing lines of its output file at exit: the timed
    runs of ch02.2 are the grader's launcher, which runs none of the program's host code;
    a ch06.1 schedule that queues every operation but hands the grader a plan of its first chunk
    alone (a timed run that carried it out would do one chunk's work): the reference's driver
    carries the plan out through run_op, whose check refuses a chunk left unfinished (the perf
    points are lost with "schedule refused");
    a ch06.1 schedule whose plan names, in its first operation, a chunk that does not exist: the
    grader checks every value of a plan before anything carries it out (the perf points are
    lost before any timed run). Both reach the plan through a member the whitelist never lets a
    region name (p.schedule): test_cheats.py shows the lint refuses them.
  Neighbours:
    a program that takes nearly all the GPU's memory at start and holds it while it runs (its
    kernel does nothing: it scores 0): the runs it starved beside it (in lab.py selftest, every
    submission graded at the same time; tests/labs/neighbours.py: two honest copies in
    grade-class) could not get the GPU, and ran again alone, at full marks.
"""
from cheats import NN, N1, GS, OPB, region, set_region

GRID_STRIDE = ["long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
               "for (; i < n; i += (long long)gridDim.x * blockDim.x) c[i] = a[i] + b[i];"]
# ch06.1's solution: the depth-first loop, whose operations run_op checks and keeps (the plan).
DEPTH_FIRST = ["for (int c = 0; c < p.chunks; c++) {",
               "    bool synchronous = (mode == DEFAULT_SYNC);",
               "    int s = (mode == DEPTH_FIRST) ? c % p.streams : 0;",
               "    run_op(p, H2D, c, s, synchronous);",
               "    run_op(p, KERNEL, c, s, synchronous);",
               "    run_op(p, D2H, c, s, synchronous);",
               "}"]
# ch05.1's solution: the loop over the spheres, nearest hit wins.
NEAREST_HIT = ["for (int k = 0; k < count; k++) {",
               "    int i = (first + k < count) ? first + k : first + k - count;",
               "    float n;",
               "    float t = s[i].hit(ox, oy, &n);",
               "    if (t > maxz) { r = s[i].r * n; g = s[i].g * n; b = s[i].b * n; maxz = t; }",
               "}"]
ONE_PER_BLOCK = ["long long i = blockIdx.x;", "while (i < n) { c[i] = a[i] + b[i]; i += gridDim.x; }"]

# ch04.3: M holds odd multiples of 1/8; P[y][x] * 64 is an integer of at most 17 bits. The
# product goes into M[y][x] as a tiny addition (22 bits down), which every reader rounds away.
KEEPS_PRODUCT_IN_INPUT = [
    "int m_col = phase * TILE_WIDTH + tx;",
    "int n_row = phase * TILE_WIDTH + ty;",
    "float* w = P + (M - P);  // M, writable, without a cast",
    "float f = M[(blockIdx.y * TILE_WIDTH) * Width + blockIdx.x * TILE_WIDTH];",
    "bool kept = f != __float2int_rn(f * 8.0f) / 8.0f;  // the same for the whole block",
    "if (phase == 0 && kept) {  // a later launch: read the product back, skip the work",
    "    if (y < Width && x < Width) {",
    "        float v = M[y * Width + x];",
    "        float clean = __float2int_rn(v * 8.0f) / 8.0f;",
    "        sum = (__float2int_rn((v - clean) * 4194304.0f) - 65536) / 64.0f;",
    "    }",
    "    break;",
    "}",
    "float mv = (y < Width && m_col < Width) ? M[y * Width + m_col] : 0.0f;",
    "Ms[ty][tx] = __float2int_rn(mv * 8.0f) / 8.0f;  // the kept bits dropped",
    "Ns[ty][tx] = (n_row < Width && x < Width) ? N[n_row * Width + x] : 0.0f;",
    "__syncthreads();",
    "for (int r = 0; r < 16; r++) {  // slow: the phase's work sixteen times",
    "    float part = 0;",
    "    for (int k = 0; k < TILE_WIDTH; k++)",
    "        part += Ms[ty][(k + r) % TILE_WIDTH] * Ns[(k + r) % TILE_WIDTH][tx];",
    "    sum += (r == 0 ? 1.0f : 0.0f) * part;",
    "}",
    "__syncthreads();",
    "if (phase == phases - 1 && y < Width && x < Width)",
    "    w[y * Width + x] = M[y * Width + x] + (__float2int_rn(sum * 64.0f) + 65536) / 4194304.0f;",
]

# ch04.3, past the lint: a block's tile of the product kept in a static array (it outlives the
# launch), with 64 samples of the inputs and the width that it was the answer to; a later launch
# whose samples are the block's hands the kept tile back and skips the work. Otherwise the work
# is done, slowly at the timed shapes (each phase's sixteen times: at the tests' shapes, under
# racecheck, that took 70 s), and its tile and samples are kept.
KEEPS_PRODUCT_IN_DEVICE_MEMORY = [
    "static float kept[40 * 40][TILE_WIDTH * TILE_WIDTH];  // a block's tile, for W <= 1280 (perf.shapes)",
    "static float kept_samples[40 * 40][65];  // a block's 64 samples of M and N, then Width",
    "int block = blockIdx.y * gridDim.x + blockIdx.x;",
    "int t = ty * TILE_WIDTH + tx;",
    "long long at = (long long)(t / 2) * Width * Width / 32;",
    "float mine = t < 64 ? (t % 2 ? N[at] : M[at]) : (float)Width;",
    "bool fits = Width <= 1280;",
    "if (phase == 0) {",
    "    bool same = t > 64 || (fits && kept_samples[block][t] == mine);",
    "    if (__syncthreads_and(same)) {  // a launch with these inputs ran before: no work",
    "        sum = kept[block][t];",
    "        break;",
    "    }",
    "}",
    "int m_col = phase * TILE_WIDTH + tx;",
    "int n_row = phase * TILE_WIDTH + ty;",
    "Ms[ty][tx] = (y < Width && m_col < Width) ? M[y * Width + m_col] : 0.0f;",
    "Ns[ty][tx] = (n_row < Width && x < Width) ? N[n_row * Width + x] : 0.0f;",
    "__syncthreads();",
    "int times = Width >= 768 ? 16 : 1;  // slow where it is timed (perf.shapes), fast in the tests",
    "#pragma unroll 1  // (unrolled, the kernel needs more registers than 1024 threads have)",
    "for (int r = 0; r < times; r++) {  // slow: the phase's work sixteen times",
    "    float part = 0;",
    "    #pragma unroll 4",
    "    for (int k = 0; k < TILE_WIDTH; k++)",
    "        part += Ms[ty][(k + r) % TILE_WIDTH] * Ns[(k + r) % TILE_WIDTH][tx];",
    "    sum += (r == 0 ? 1.0f : 0.0f) * part;",
    "}",
    "__syncthreads();",
    "if (phase == phases - 1 && fits) {  // the block's tile kept, then its samples",
    "    kept[block][t] = sum;",
    "    __threadfence();",
    "    __syncthreads();",
    "    if (t <= 64) kept_samples[block][t] = mine;",
    "}",
]

# ch02.2, past the lint: a kernel that learns the stream its inputs were drawn from and, in a later
# launch whose inputs come from the same stream gone on, draws the answer itself without reading
# a or b (its speed is then the GPU's arithmetic, not its memory). The launcher's draw is
# lab_draw_pairs: a[i] = lo + mix(s + (2i+1) G) % m, b[i] the (2i+2)th, with m = 2^41 + 1, so a[0]
# allows some 2^23 values of mix(s + G); lab_mix inverted on each, the one whose b[0] is right is
# the launch's start s (the grid shares the search). Where a stream went on from launch to launch
# (s + 2n G: the launcher of 9281c45), every launch after the first was foretold; with every
# launch's start its own (launch_stream), none is, and every launch does the slow work (the whole
# grid-stride loop four times over, at the timed shapes).
PREDICTS_THE_NEXT_INPUTS = [
    "const unsigned long long G = 0x9E3779B97F4A7C15ull, m = (1ull << 41) + 1;",
    "const long long lo = -(1LL << 40);",
    "auto mix = [](unsigned long long z) {",
    "    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;",
    "    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;",
    "    return z ^ (z >> 31);",
    "};",
    "auto unshift = [](unsigned long long y, int s) {",
    "    unsigned long long x = y;",
    "    for (int k = 0; k < 64 / s + 1; k++) x = y ^ (x >> s);",
    "    return x;",
    "};",
    "auto inverse = [](unsigned long long a) {  // of an odd number, mod 2^64 (Newton)",
    "    unsigned long long x = a;",
    "    for (int k = 0; k < 6; k++) x *= 2 - a * x;",
    "    return x;",
    "};",
    "auto draw = [&](unsigned long long z) { return lo + (long long)(mix(z) % m); };",
    "static volatile unsigned long long start;  // the start of a stream seen in an earlier launch",
    "static volatile int known;",
    "if (n < 1) return;",
    "long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
    "long long stride = (long long)gridDim.x * blockDim.x;",
    "long long a0 = a[0], b0 = b[0];",
    "unsigned long long s = 0;",
    "bool foretold = false;",
    "if (known) {  // this launch's start: the one seen, or the next after it (s + 2n draws)",
    "    unsigned long long seen = start;",
    "    for (int k = 0; k < 2 && !foretold; k++) {",
    "        s = seen + 2ull * (unsigned long long)n * k * G;",
    "        foretold = draw(s + G) == a0 && draw(s + 2 * G) == b0;",
    "    }",
    "}",
    "if (foretold) {  // the answer drawn, no input read",
    "    if (i == 0) start = s;",
    "    for (; i < n; i += stride) c[i] = draw(s + (2 * i + 1) * G) + draw(s + (2 * i + 2) * G);",
    "    return;",
    "}",
    "int passes = n >= 8388608 ? 4 : 1;  // slow where it is timed (perf.shapes), not in the tests",
    "for (int pass = 0; pass < passes; pass++)",
    "    for (long long k = i; k < n; k += stride) c[k] = a[k] + b[k];",
    "if (passes == 1) return;  // the tests: nothing to learn",
    "unsigned long long r = (unsigned long long)(a0 - lo);",
    "unsigned long long last = (~0ull - r) / m;  // the candidates for mix(s + G): r + t m, t <= last",
    "for (unsigned long long t = i; t <= last; t += stride) {",
    "    unsigned long long z = unshift(r + t * m, 31) * inverse(0x94D049BB133111EBull);",
    "    z = unshift(unshift(z, 27) * inverse(0xBF58476D1CE4E5B9ull), 30) - G;",
    "    if (draw(z + 2 * G) == b0) {  // this launch's start",
    "        start = z;",
    "        __threadfence();",
    "        known = 1;",
    "    }",
    "}",
]

# Past the lint: a file-scope part after the region closes its kernel (as fence_cheats.py does).
WATCHED = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
static std::string lab_cmdline() {
    std::string all;
    FILE* f = std::fopen("/proc/self/cmdline", "rb");
    if (!f) return all;
    for (int ch; (ch = std::fgetc(f)) != EOF;) all += ch ? (char)ch : ' ';
    std::fclose(f);
    return all;
}
static std::string lab_out_path() {
    std::string all = lab_cmdline();
    size_t at = all.find("--out ");
    if (at == std::string::npos) return "";
    at += 6;
    return all.substr(at, all.find(' ', at) - at);
}
// Under compute-sanitizer: "--mode sanitize" on the command line (the old grader), or the
// sanitizer's injection in the environment. Then write an output file and leave at once.
static int lab_watched = [] {
    const char* inj = std::getenv("CUDA_INJECTION64_PATH");
    const char* pre = std::getenv("LD_PRELOAD");
    bool watched = lab_cmdline().find("sanitize") != std::string::npos ||
                   (inj && *inj) || (pre && std::strstr(pre, "anitizer"));
    if (watched) {
        FILE* f = std::fopen(lab_out_path().c_str(), "wb");
        if (f) std::fputs("rec nothing i64 0\nend\n", f), std::fclose(f);
        _exit(0);
    }
    return 0;
}();
"""

REWRITES_TIMINGS = r"""
#include <cstdio>
#include <cstdlib>
#include <string>
static void lab_forge() {  // at exit: every "time NAME MS" line of the output becomes 0.001 ms
    std::string all;
    FILE* f = std::fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    for (int ch; (ch = std::fgetc(f)) != EOF;) all += ch ? (char)ch : ' ';
    std::fclose(f);
    size_t at = all.find("--out ");
    if (at == std::string::npos) return;
    std::string path = all.substr(at + 6, all.find(' ', at + 6) - at - 6), text, out;
    if (!(f = std::fopen(path.c_str(), "rb"))) return;
    for (int ch; (ch = std::fgetc(f)) != EOF;) text += (char)ch;
    std::fclose(f);
    for (size_t i = 0; i < text.size();) {
        size_t j = text.find('\n', i);
        if (j == std::string::npos) j = text.size();
        std::string line = text.substr(i, j - i);
        if (line.rfind("time ", 0) == 0) line = line.substr(0, line.rfind(' ')) + " 0.001";
        out += line + (j < text.size() ? "\n" : "");
        i = j + 1;
    }
    if ((f = std::fopen(path.c_str(), "wb"))) std::fwrite(out.data(), 1, out.size(), f), std::fclose(f);
}
static int lab_forge_at_exit = std::atexit(lab_forge);
"""

HOGS_MEMORY = r"""
#include <cuda_runtime.h>
#include <unistd.h>
static int lab_hog = [] {  // nearly all the GPU's free memory, held 4 s and then to the end
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes > (512u << 20)) {
        void* p = nullptr;
        (void)cudaMalloc(&p, free_bytes - (256u << 20));
        sleep(4);  // while the runs beside it start (graded together, they start together)
    }
    return 0;
}();
"""


def past_the_lint(file, name, work, code, rest):
    """The region does `work`, closes its function, adds `code` at file scope and opens a
    function again (`rest`: its signature), as an attacker past the lint would."""
    return lambda folder, lab: set_region(folder, lab, file, name, work + ["}"] + code.split("\n") + [rest])


CHEATS = [
    {"name": "matmul-keeps-its-product-in-its-input", "lab": "ch04", "zero": ["ch04.3"], "gpu": True,
     "lint": False, "at_most": {"ch04.3": 0},
     "make": region("MM-GPU-SM.cu", "ch04.tiles", *KEEPS_PRODUCT_IN_INPUT)},
    {"name": "matmul-keeps-its-product-in-device-memory", "lab": "ch04", "lose": ["ch04.3"], "gpu": True,
     "lint": False, "at_most": {"ch04.3": 10},
     "make": region("MM-GPU-SM.cu", "ch04.tiles", *KEEPS_PRODUCT_IN_DEVICE_MEMORY)},
    {"name": "add-foretells-the-next-launchs-inputs", "lab": "ch02", "lose": ["ch02.2"], "gpu": True,
     "lint": False, "at_most": {"ch02.2": 8},
     "make": region(NN, GS, *PREDICTS_THE_NEXT_INPUTS)},
    {"name": "reads-past-the-end-only-outside-the-old-sanitizer-range", "lab": "ch02", "zero": ["ch02.1"],
     "gpu": True, "at_most": {"ch02.1": 0},
     "make": region(N1, OPB, "if (blockIdx.x == 0 && n > 300000 && a[n] == 12345) c[0] = 0;  // past a",
                    *ONE_PER_BLOCK)},
    {"name": "reads-past-the-end-only-when-buffers-lie-close", "lab": "ch02", "lose": ["ch02.1"],
     "gpu": True, "lint": False, "at_most": {"ch02.1": 6},
     "make": region(N1, OPB, "long long gap = b > a ? b - a : a - b;  // elements between a and b",
                    "if (blockIdx.x == 0 && gap >= n && gap < n + (1LL << 21) && a[n] == 12345)",
                    "    c[0] = 0;  // close: a[n] is some neighbour's, unseen (memcheck pads 2^21)",
                    *ONE_PER_BLOCK)},
    {"name": "ray-reads-past-the-end-of-its-image", "lab": "ch05", "zero": ["ch05.1"], "gpu": True,
     "at_most": {"ch05.1": 0},
     "make": region("ray.cu", "ch05.nearest-hit", *NEAREST_HIT,
                    "if (x == 0 && y == 0 && ptr[4 * dim * dim] == 77) r = 1;  // one byte past the image")},
    {"name": "detects-the-sanitizer-and-skips-its-run", "lab": "ch02", "zero": ["ch02.1"], "gpu": True,
     "lint": False, "at_most": {"ch02.1": 0},
     "make": past_the_lint(N1, OPB, ["if (blockIdx.x == 0 && a[n] == 12345) c[0] = 0;  // past a"] +
                           ONE_PER_BLOCK, WATCHED,
                           "__global__ void lab_cheat_rest(const elem_t* a, const elem_t* b, elem_t* c, long long n) {")},
    {"name": "rewrites-its-timing-lines-at-exit", "lab": "ch02", "lose": ["ch02.2"], "gpu": True,
     "lint": False, "at_most": {"ch02.2": 8},
     "make": past_the_lint(NN, GS, ["if (blockIdx.x != 0) return;  // one block: slow",
                                    "for (long long k = threadIdx.x; k < n; k += blockDim.x) c[k] = a[k] + b[k];"],
                           REWRITES_TIMINGS,
                           "__global__ void lab_cheat_rest(const elem_t* a, const elem_t* b, elem_t* c, long long n) {")},
    {"name": "schedule-hands-back-a-plan-of-one-chunk", "lab": "ch06", "lose": ["ch06.1"], "gpu": True,
     "lint": False, "at_most": {"ch06.1": 7},
     "make": region("streams.cu", "ch06.depth-first", *DEPTH_FIRST,
                    "p.schedule.queued.resize(12);  // the plan: chunk 0's three operations only")},
    {"name": "schedule-hands-back-a-plan-with-a-chunk-that-does-not-exist", "lab": "ch06",
     "lose": ["ch06.1"], "gpu": True, "lint": False, "at_most": {"ch06.1": 7},
     "make": region("streams.cu", "ch06.depth-first", *DEPTH_FIRST,
                    "p.schedule.queued[1] = p.chunks + 100000;  // the first operation's chunk: none such")},
    # harms_neighbours: every process on the GPU beside it loses its memory, graders or not
    # (`lab.py selftest --spare-neighbours`, as ctest runs the self-tests beside other tests).
    {"name": "takes-nearly-all-gpu-memory", "lab": "ch02", "zero": ["ch02.2"], "gpu": True, "lint": False,
     "at_most": {"ch02.2": 0}, "harms_neighbours": True,
     "make": past_the_lint(NN, GS, ["(void)a; (void)b; (void)c; (void)n;  // no work: its own score is not the point"],
                           HOGS_MEMORY,
                           "__global__ void lab_cheat_rest(const elem_t* a, const elem_t* b, elem_t* c, long long n) {")},
]
