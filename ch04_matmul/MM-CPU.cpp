// MM-CPU.cpp -- matrix multiplication on the CPU: the baseline (chapter 4, step 1).
//
// P = M x N for square Width x Width float matrices with the textbook triple
// loop (matmul_cpu in matrix.h, shared with the GPU programs' --cpu option),
// one core, no tricks, timed with a host clock. Every GPU program of the
// chapter is measured against this number, as in the document, which ran it
// five times at Width 1024 and took the average.
//
// There is no kernel in this file; nvcc compiles it as plain C++ all the same.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o MM-CPU MM-CPU.cpp
// Run:
//   ./MM-CPU                    the document's run: Width 1024 (seconds)
//   ./MM-CPU --runs 5           five runs and their average, as in the document
//   ./MM-CPU --help             every option

#include <cmath>
#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "matrix.h"

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-CPU [--width W] [--runs R] [--init document|random] [--seed S] [--json]\n"
    "  --width W      matrices are W x W floats, 1..32768 (default 1024; time grows as W^3)\n"
    "  --runs R       timed runs, 1..100 (default 1; the document used 5)\n"
    "  --init KIND    'document': M[y*W+x] = x + y*W (default);\n"
    "                 'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "  --seed S       seed of the random data (default 1)\n"
    "  --json         also print one JSON record\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "MM-CPU", USAGE);
    int W = (int)args.integer("--width", 1024, 1, MAX_WIDTH);
    int runs = (int)args.integer("--runs", 1, 1, 100);
    std::string init = args.text("--init", "document");
    unsigned seed = (unsigned)args.integer("--seed", 1, 0, 4294967295LL);
    bool json = args.flag("--json");
    args.done();
    if (init != "document" && init != "random") args.fail("--init must be 'document' or 'random'");
    size_t bytes = checked_bytes(args, (long long)W * W, sizeof(float), 1);
    check_matrices_fit_on_host(args, 3, W);

    std::printf("MM-CPU: Width %d, %s data, %d run(s) of the triple loop on one core\n", W,
                init.c_str(), runs);
    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, bytes);
    if (init == "document") {
        fill_document(M, W);
        fill_document(N, W);
    } else {
        fill_random(M, W, seed);
        fill_random(N, W, seed + 1);
    }
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
    double gflops = matmul_gflops(W, t.median_ms);
    std::printf("  average %.2f ms, median %.2f ms (min %.2f, max %.2f): %.2f GFLOP/s\n", mean, t.median_ms,
                t.min_ms, t.max_ms, gflops);

    // Even the CPU result is checked, against the same double-precision samples.
    CheckResult check = check_product(M, N, P, W);
    const char* result = check.passed() ? "PASS" : "FAIL";

    // The same core fields as the GPU programs' records; no device here.
    JsonRecord time, size;
    time.add("median", t.median_ms).add("min", t.min_ms).add("max", t.max_ms).add("repeats", t.repeats);
    size.add("width", W).add("flops", 2.0 * W * (double)W * W);
    JsonRecord record;
    record.add("schema", 1).add("program", "MM-CPU").add("variant", "triple-loop").add("device", "CPU (one core)")
        .null("cc").add("time_ms", time).null("gbps").add("gflops", gflops).null("pct_peak").null("peak")
        .add("verdict", result).add("size", size).add("init", init).add("cpu_ms", t.median_ms)
        .add("mean_ms", mean);
    print_json(json, record);

    std::free(M);
    std::free(N);
    std::free(P);
    return verdict(check.passed(), describe(check));
}
#endif
