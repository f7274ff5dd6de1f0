"""Cheating submissions: each one is the lab's solution folder with one attack in it, and the
outcome the grader must reach (docs/grader.md, "What the grader stops").

  zero   the attacked tasks: they score 0 (every other task keeps all its points)
  lose   (instead of zero) tasks that must lose some points but not all (the perf gate)
  gpu    False: the attack is stopped before anything is built or run (intake or lint), so
         tests/labs/test_cheats.py proves it on a machine without a GPU (ctest -L cpu);
         True: it needs the GPU (lab.py selftest, ctest -L lab)
Every cheat also runs in `lab.py selftest`, which checks that the submission folder is unchanged
afterwards and that the report is the grader's own.
"""
import os
from pathlib import Path


def set_region(folder, lab, file, region, lines):
    path = Path(folder) / lab["folder"] / file
    text = path.read_text().split("\n")
    start = next(i for i, l in enumerate(text) if l.strip() == f"// LAB {region} {{")
    end = next(i for i in range(start + 1, len(text)) if text[i].strip() == "// LAB }")
    text[start + 1:end] = ["    " + l for l in lines]
    path.write_text("\n".join(text))


def region(file, name, *lines):
    return lambda folder, lab: set_region(folder, lab, file, name, list(lines))


def replace_file(file, how):
    def make(folder, lab):
        path = Path(folder) / lab["folder"] / file
        path.unlink()
        how(path, folder, lab)
    return make


def symlink_to_solution(path, folder, lab):
    os.symlink(Path(__file__).resolve().parents[3] / lab["folder"] / path.name, path)


def ship_report(folder, lab):
    d = Path(folder) / "grade-report"
    d.mkdir()
    (d / "results.json").write_text('{"score": 18, "tests": []}\n')
    (Path(folder) / ".lab.json").write_text('{"chapter": "ch05"}\n')


def report_untouched(folder, report=None):
    text = (Path(folder) / "grade-report" / "results.json").read_text()
    return [] if text == '{"score": 18, "tests": []}\n' else ["the shipped report was changed"]


NN, N1 = "VA-GPU-NN.cu", "VA-GPU-N1.cu"
GS, OPB = "ch02.grid-stride", "ch02.one-per-block"
CHEATS = [
    # Forged evidence: code that leaves its function, prints a verdict, or redefines the checks.
    {"name": "static-initializer-prints-gtest-summary", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "}", "static int forged = printf(\"[  PASSED  ] 9 tests.\\n\");",
                    "__global__ void add2(const elem_t* a, const elem_t* b, elem_t* c, long long n) {")},
    {"name": "own-main", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "}", "int main() { return 0; }", "void unused() {")},
    {"name": "kernel-printf-json-line", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "if (threadIdx.x == 0) printf(\"{\\\"variant\\\": \\\"kernel\\\", \\\"gbps\\\": 1e9}\\n\");")},
    {"name": "redefine-expect-macro", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": region(N1, OPB, "#define EXPECT_EQ(a, b) (void)0")},
    {"name": "include-any-file", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": region(N1, OPB, "#include \"/etc/passwd\"")},
    {"name": "include-a-fifo", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "#include \"/tmp/lab-cheat.fifo\"")},
    {"name": "digraph-closes-function", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "%>", "int forged_total = 18;", "void again() <%")},
    {"name": "trigraph-closes-function", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "??>", "void again() ??<")},
    {"name": "comment-line-splice", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "// harmless comment \\", "} static int x = 1; void f() {")},
    {"name": "unterminated-block-comment", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": region(N1, OPB, "/* the rest of the file is a comment")},
    {"name": "inline-asm-exit", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "asm(\"exit;\");")},
    {"name": "attribute-constructor", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "}", "__attribute__((constructor)) void early() {")},
    {"name": "pragma-operator", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": region(N1, OPB, "_Pragma(\"GCC diagnostic ignored \\\"-Wall\\\"\")")},
    {"name": "extern-declaration", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": region(N1, OPB, "extern int forged_score;")},
    {"name": "device-clock-read", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": region(NN, GS, "long long t0 = clock64();", "if (t0 < 0) c[0] = 0;")},
    # Host regions: leaving the allow-list to print "no CUDA device", spawn, or write files.
    {"name": "prints-no-cuda-device", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "make": region("ray.cu", "ch05.constant-copy",
                    "fprintf(stderr, \"no usable CUDA device (forged)\\n\");", "exit(77);")},
    {"name": "setsid-background-process", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "make": region("ray.cu", "ch05.constant-copy", "if (fork() == 0) { setsid(); sleep(60); }",
                    "if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data(), sizeof(Sphere) * count));")},
    {"name": "writes-results-json", "lab": "ch05", "zero": ["ch05.2"], "gpu": False,
     "make": region("ray.cu", "ch05.constant-copy", "std::ofstream f(\"grade-report/results.json\");",
                    "if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data(), sizeof(Sphere) * count));")},
    {"name": "call-through-expression", "lab": "ch06", "zero": ["ch06.1"], "gpu": False,
     "make": region("streams.cu", "ch06.depth-first", "(system)(\"cp /bin/true build-lab/cache\");")},
    {"name": "replaces-cached-reference", "lab": "ch06", "zero": ["ch06.2"], "gpu": False,
     "make": region("streams.cu", "ch06.breadth-first", "rename(\"/tmp/mine\", \"build-lab/cache/x/driver\");")},
    {"name": "computes-on-the-cpu", "lab": "ch06", "zero": ["ch06.2"], "gpu": False,
     "make": region("streams.cu", "ch06.breadth-first",
                    "for (long long i = 0; i < p.n; i++) {",
                    "    word_t x = p.host_in[i];",
                    "    for (int k = 0; k < p.steps; k++) x = LCG_A * x + LCG_C;",
                    "    p.host_out[i] = x;",
                    "}")},
    # The submitted files themselves.
    {"name": "file-is-symlink-to-solution", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": replace_file(NN, symlink_to_solution)},
    {"name": "file-is-a-fifo", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": replace_file(NN, lambda p, f, l: os.mkfifo(p))},
    {"name": "file-is-a-directory", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": replace_file(N1, lambda p, f, l: p.mkdir())},
    {"name": "file-too-large", "lab": "ch02", "zero": ["ch02.1"], "gpu": False,
     "make": replace_file(N1, lambda p, f, l: p.write_text("// padding\n" * 7000))},
    {"name": "file-not-text", "lab": "ch02", "zero": ["ch02.2"], "gpu": False,
     "make": replace_file(NN, lambda p, f, l: p.write_bytes(b"\x7fELF\x00\x00" * 100))},
    # At run time (a GPU): what the grader's own driver and fresh inputs catch.
    {"name": "ships-its-own-report-and-lab", "lab": "ch02", "zero": [], "gpu": True,
     "make": ship_report, "after": report_untouched},
    {"name": "recognises-fixed-inputs", "lab": "ch02", "zero": ["ch02.2"], "gpu": True,
     "make": region(NN, GS, "long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
                    "for (; i < n; i += (long long)gridDim.x * blockDim.x) c[i] = i * i - i;")},
    {"name": "skips-large-inputs", "lab": "ch02", "zero": ["ch02.2"], "gpu": True,
     "make": region(NN, GS, "if (n > 200000) return;",
                    "long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
                    "for (; i < n; i += (long long)gridDim.x * blockDim.x) c[i] = a[i] + b[i];")},
    {"name": "one-thread-does-all", "lab": "ch02", "lose": ["ch02.2"], "gpu": True,
     "make": region(NN, GS, "if (blockIdx.x == 0 && threadIdx.x == 0)",
                    "    for (long long i = 0; i < n; i++) c[i] = a[i] + b[i];")},
]
from fence_cheats import CHEATS as FENCE_CHEATS  # noqa: E402  (the fence's attackers, past the lint)
CHEATS += FENCE_CHEATS
CHEATS += __import__("measure_cheats").CHEATS  # the lint and measurement cheats (measure_cheats.py)
CHEATS += __import__("truth_cheats").CHEATS  # the truth of a grade (truth_cheats.py)
CHEATS += __import__("whitelist_cheats").CHEATS  # host regions past the tokens (whitelist_cheats.py)
CHEATS += __import__("schedule_cheats").CHEATS  # run_op's arguments out of range (schedule_cheats.py)
