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
//   ./MM-CPU --runs 5           five runs and their average, as in the original
//   ./MM-CPU --help             every option

#include <cstdio>
#include <vector>
#include "../common/args.h"
#include "../common/timer.h"
#include "matrix.h"

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-CPU [--width W] [--runs R] [--data document|random] [--seed S] [--json]\n"
    "  --width W      matrices are W x W floats, 1..32768 (default 1024; time grows as W^3)\n"
    "  --runs R       timed runs, 1..100 (default 1; the original used 5)\n"
    "  --data KIND    'document': M[y*W+x] = x + y*W (default);\n"
    "                 'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "  --seed S       seed of the random data (default 1)\n"
    "  --json         also print one JSON record\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "document", false);  // --width, --data, --seed
    int runs = (int)args.integer("--runs", 1, 1, 100);
    bool json = args.flag("--json");
    args.done();
    int W = run.W;
    std::printf("%s: Width %d, %s data, %d run(s) of the triple loop on one core\n", args.program(),
                W, run.data.c_str(), runs);

    float* M = (float*)host_alloc(args, run.bytes);
    float* N = (float*)host_alloc(args, run.bytes);
    float* P = (float*)host_alloc(args, run.bytes);
    fill_inputs(M, N, run);
    // The time grows as W^3: W = 32768 takes a day or more. Say so before starting.
    announce_long_run(runs * estimate_matmul_cpu_seconds(M, N, W),
                      "estimated from 64 elements of P timed at this Width");

    std::vector<double> samples;
    for (int r = 0; r < runs; r++) {
        HostTimer timer;
        matmul_cpu(M, N, P, W);
        samples.push_back(timer.stop_ms());
        std::printf("  run %d: %.2f ms\n", r + 1, samples.back());
    }
    TimingStats t = summarize(samples);
    double mean = 0;
    for (double s : samples) mean += s / runs;
    std::printf("  average %.2f ms, median %.2f ms (min %.2f, max %.2f): %.2f GFLOP/s\n", mean,
                t.median_ms, t.min_ms, t.max_ms, run.flops() / (t.median_ms * 1e6));

    // Even the CPU result is checked, against the same double-precision samples.
    CheckResult check = check_product(M, N, P, W);

    std::free(M);
    std::free(N);
    std::free(P);
    return cpu_verdict(json, run, t, mean, check);  // the JSON record, then the verdict line
}
#endif
