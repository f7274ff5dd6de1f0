// MM-CPU.cpp -- matrix multiplication on the CPU: the baseline (chapter 4, step 1).
// Source: "GPU Programming" (CSInParallel, 2012), chapter 4, MM-CPU.
//
// P = M x N for square Width x Width float matrices with the textbook triple
// loop (matmul_cpu in matrix.h, shared with the GPU programs' --cpu option),
// one core, no tricks, timed with a host clock. Every GPU program of the
// chapter is measured against this number, as in the original, which ran
// it five times at Width 1024 and took the average.
//
// There is no kernel in this file; nvcc compiles it as plain C++ all the same.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o MM-CPU MM-CPU.cpp
// Run:
//   ./MM-CPU                    the original's run: Width 1024 (seconds)
//   ./MM-CPU --repeats 5        five runs, as in the original: the median, min and max
//   ./MM-CPU --help             every option

#include <cstdio>
#include <vector>
#include "../common/args.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "matrix.h"

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-CPU [--width W] [--data document|random] [--seed S] [--repeats R] [--json]\n"
    "              [--long-run]\n"
    "  --width W      matrices are W x W floats, 1..32768 (default 1024; time grows as W^3)\n"
    "  --data KIND    'document': M[y*W+x] = x + y*W (default);\n"
    "                 'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "  --seed S       seed of the random data (default 1)\n"
    "  --repeats R    timed runs (default 1; the original used 5)\n"
    "  --long-run     start a run estimated at more than 5 minutes (refused without it)\n"
    "  --json         also print one JSON record\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "document", false);  // --width, --data, --seed
    bool long_run = args.flag("--long-run");
    Report report(args, 1);
    report.start_on_cpu("CPU (one core)", 0);  // read_matrix_run checked the host's memory
    report_matrix_run(report, run);
    int W = run.W;

    float* M = (float*)host_alloc(args, run.bytes);
    float* N = (float*)host_alloc(args, run.bytes);
    float* P = (float*)host_alloc(args, run.bytes);
    fill_inputs(M, N, run);
    // The time grows as W^3: W = 32768 takes days. Say so before starting, and start a run
    // of more than a few minutes only when asked to (--long-run), so a typo costs nothing.
    double estimate = report.repeats() * estimate_matmul_cpu_seconds(M, N, W);
    if (estimate > LONG_RUN_SECONDS && !long_run)
        args.fail(long_run_refusal(estimate, "--long-run"));
    announce_long_run(estimate, "estimated from 64 elements of P timed at this Width");

    // A wall clock around each run: there is no GPU here, and no events.
    std::vector<double> samples;
    for (int r = 0; r < report.repeats(); r++) {
        HostTimer timer;
        matmul_cpu(M, N, P, W);
        samples.push_back(timer.stop_ms());
    }
    TimingStats t = summarize(samples);
    report.record("triple-loop", "the triple loop, one core", t, NAN,
                  run.flops() / (t.median_ms * 1e6), NAN, nullptr);
    report.extra("cpu_ms", t.median_ms);

    // Even the CPU result is checked, against the same double-precision samples.
    CheckResult check = check_product(M, N, P, W);

    std::free(M);
    std::free(N);
    std::free(P);
    return report.verdict(check.passed(), "%s", describe(check).c_str());
}
#endif
