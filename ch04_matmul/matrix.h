// ch04_matmul/matrix.h -- the host side that every chapter-4 program shares:
// filling the matrices, the document's CPU triple loop, and the check.
//
// All matrices are square, Width x Width floats, stored row by row
// ("row-major"): element (row y, column x) lives at M[y * Width + x].
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>
#include "../common/args.h"
#include "../common/timer.h"

// The largest Width the programs accept: three 32768 x 32768 float matrices
// take 12.9 GB, and every index y * Width + x stays below 2^30, so the
// kernels can index with plain int.
const long long MAX_WIDTH = 32768;

// The document's data: M[y*W + x] = x + y*W, i.e. 0, 1, 2, ... row after row.
// Faithful, but the values grow to W*W, and a product of two rows sums W
// terms of size up to W^4: at W = 1024 the results reach about 3e17. A float
// keeps 24 bits (about 7 decimal digits), so these results are exact to only
// 1 part in ~10^7 -- and from W = 4097 on, even the inputs (> 2^24) are no
// longer stored exactly. Good for timing; random data is better for checking.
inline void fill_document(float* M, int W) {
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++)
            M[(size_t)y * W + x] = (float)((double)x + (double)y * W);
}

// Random values in [-1, 1]; the same seed gives the same matrix.
inline void fill_random(float* M, int W, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (size_t i = 0; i < (size_t)W * W; i++) M[i] = value(rng);
}

// MM-CPU: the document's triple loop, in float, one output element at a time.
// The inner loop walks down a column of N, jumping W floats each step, which
// is why it is so slow: almost every N[k*W + x] is a cache miss at W = 1024.
inline void matmul_cpu(const float* M, const float* N, float* P, int W) {
    for (int y = 0; y < W; y++) {
        for (int x = 0; x < W; x++) {
            float sum = 0;
            for (int k = 0; k < W; k++) sum += M[(size_t)y * W + k] * N[(size_t)k * W + x];
            P[(size_t)y * W + x] = sum;
        }
    }
}

// The check. Element (y, x) of the product is recomputed in double, and the
// float result is compared with it relative to sum_k |M[y][k] * N[k][x]|:
// that is the size of the numbers the float sum actually went through, so
// rounding errors scale with it even when positive and negative terms cancel
// and the result itself is near zero. A float sum of W terms, added in ANY
// order, is off by at most about W x 2^-24 of that (the textbook bound for
// floating-point summation; 2^-24 is half a float ulp). We allow twice that,
// so a correct kernel can never fail the check; typical errors are far
// smaller (about sqrt(W) x 2^-24 on random data). Real bugs -- a missing
// tile, a wrong index, an unwritten element (the output is poisoned with NaN)
// -- are off by whole percent or more.
inline double check_tolerance(int W) { return 2.0 * W * std::ldexp(1.0, -24); }

struct CheckResult {
    long long checked = 0;  // elements compared
    long long wrong = 0;    // elements beyond the tolerance (NaN counts as wrong)
    double worst = 0;       // the largest relative error seen
    double tolerance = 0;   // check_tolerance(W)
    int worst_y = 0, worst_x = 0;
};

inline void check_element(const float* M, const float* N, const float* P, int W, int y, int x,
                          CheckResult* r) {
    double sum = 0, magnitude = 0;
    for (int k = 0; k < W; k++) {
        double term = (double)M[(size_t)y * W + k] * (double)N[(size_t)k * W + x];
        sum += term;
        magnitude += std::fabs(term);
    }
    double got = P[(size_t)y * W + x];
    double error = std::fabs(got - sum) / (magnitude > 0 ? magnitude : 1.0);
    r->checked++;
    if (!(error <= check_tolerance(W))) r->wrong++;  // written so that NaN is wrong
    if (!(error <= r->worst)) {
        r->worst = std::isnan(error) ? INFINITY : error;
        r->worst_y = y;
        r->worst_x = x;
    }
}

// Checks every element when W*W <= samples; otherwise the whole last row and
// last column (where partial tiles live) plus `samples` random elements.
// Each element costs W multiply-adds in double, so this stays fast at any W.
inline CheckResult check_product(const float* M, const float* N, const float* P, int W,
                                 long long samples = 4096, unsigned seed = 7) {
    CheckResult r;
    r.tolerance = check_tolerance(W);
    if ((long long)W * W <= samples) {
        for (int y = 0; y < W; y++)
            for (int x = 0; x < W; x++) check_element(M, N, P, W, y, x, &r);
        return r;
    }
    for (int i = 0; i < W; i++) {
        check_element(M, N, P, W, W - 1, i, &r);  // last row
        check_element(M, N, P, W, i, W - 1, &r);  // last column
    }
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> index(0, W - 1);
    for (long long s = 0; s < samples; s++) check_element(M, N, P, W, index(rng), index(rng), &r);
    return r;
}

inline std::string describe(const CheckResult& r) {
    char text[200];
    if (r.wrong)
        std::snprintf(text, sizeof text,
                      "%lld of %lld checked elements wrong; worst relative error %.2e at (%d, %d), tolerance %.1e",
                      r.wrong, r.checked, r.worst, r.worst_y, r.worst_x, r.tolerance);
    else
        std::snprintf(text, sizeof text, "%lld elements checked against double, worst relative error %.2e <= %.1e",
                      r.checked, r.worst, r.tolerance);
    return text;
}

// 2 W^3 floating-point operations (W^3 multiplies and W^3 adds) per product.
inline double matmul_gflops(int W, double ms) { return 2.0 * W * (double)W * W / (ms * 1e6); }

// One readable line per kernel measurement: median (min, max), GFLOP/s, % of FP32 peak.
inline void print_matmul_timing(const char* label, const TimingStats& t, int W, double peak_gflops) {
    double gflops = matmul_gflops(W, t.median_ms);
    std::printf("  %-28s median %9.3f ms (min %.3f, max %.3f)  %8.1f GFLOP/s = %4.1f%% of FP32 peak\n",
                label, t.median_ms, t.min_ms, t.max_ms, gflops, 100 * gflops / peak_gflops);
}

// "--cpu": the document's baseline (MM-CPU's triple loop) on the same data.
// Prints how much faster the GPU was and returns the CPU's time in ms.
inline double time_cpu_baseline(const Args& args, const float* M, const float* N, int W,
                                double end_to_end_ms, double kernel_ms) {
    float* P_cpu = (float*)host_alloc(args, (size_t)W * W * sizeof(float));
    HostTimer cpu;
    matmul_cpu(M, N, P_cpu, W);
    double cpu_ms = cpu.stop_ms();
    std::free(P_cpu);
    std::printf("  %-28s %10.3f ms  -> GPU end to end is %.0fx faster, kernel only %.0fx\n",
                "CPU triple loop (MM-CPU)", cpu_ms, cpu_ms / end_to_end_ms, cpu_ms / kernel_ms);
    return cpu_ms;
}
