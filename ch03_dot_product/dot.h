// dot.h -- the host side that Dot-GM, Dot-SM and Dot-SM-Warp share.
//
// The three programs differ in their lesson only: the kernel, its launch, and
// where the partial sums are added up. What they share is here, in plain
// functions: the --data option, the inputs and their double-precision
// reference (dot_reference.h), the check against it, and the report of the
// work that Dot-GM and Dot-SM leave to the CPU.
// Source: "GPU Programming" (CSInParallel, 2012), chapter 3, Dot-GM and Dot-SM.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include "../common/args.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "dot_reference.h"

// --data document|random: the original's a[i] = i, b[i] = 2i (all terms
// positive, checked with the rounding bound), or the random eighths of both
// signs (checked exactly). Returns true for random.
inline bool read_random_data(Args& args) {
    std::string data = args.text("--data", "document");
    if (data != "document" && data != "random") args.fail("--data must be 'document' or 'random'");
    return data == "random";
}

// The two input vectors on the host and their reference.
struct DotData {
    long long n = 0;
    bool random = false;
    float* a = nullptr;
    float* b = nullptr;
    Reference ref;      // random: exact, see dot_reference.h
    double cpu_ms = 0;  // the CPU's time for the reference
};

// Allocates and fills a and b, then computes the reference on the CPU, timed:
// the CPU's own dot product ("cpu_ms", the tour's baseline).
inline DotData make_dot_data(Args& args, Report& report, long long n, bool random) {
    DotData d;
    d.n = n;
    d.random = random;
    d.a = (float*)host_alloc(args, n * sizeof(float));
    d.b = (float*)host_alloc(args, n * sizeof(float));
    if (random) {
        fill_random(d.a, n, 1);
        fill_random(d.b, n, 2);
    } else {
        fill_document_data(d.a, d.b, n);
    }
    report.extra("data", random ? "random" : "document");
    HostTimer cpu;
    d.ref = dot_reference(d.a, d.b, n, random);
    d.cpu_ms = cpu.stop_ms();
    report.note("CPU reference in double", "cpu_ms", d.cpu_ms);
    return d;
}

inline void free_dot_data(DotData& d) {
    std::free(d.a);
    std::free(d.b);
}

// The check every Dot program ends with: the GPU's answer against the double
// reference, within `depth` float roundings for the original's data, exactly
// equal for the random data. A NaN (a poisoned value never overwritten) fails.
struct DotCheck {
    bool pass = false;
    double error = 0, bound = 0;
    char detail[160] = "";
};

inline DotCheck check_dot(Report& report, const DotData& d, double gpu_sum, long long depth) {
    DotCheck c;
    c.pass = within_bound(gpu_sum, d.ref, depth);
    c.error = std::fabs(gpu_sum - d.ref.sum);
    c.bound = allowed_error(depth, d.ref);
    std::printf("  GPU dot product %.9e, CPU reference in double %.9e\n", gpu_sum, d.ref.sum);
    if (!d.random)
        std::printf("  closed form 2*sum(i^2): exact %.9e, in float as the original %.9e\n",
                    closed_form_exact(d.n), (double)original_closed_form_float(d.n));
    if (d.ref.exact)
        std::printf(
            "  |GPU - reference| = %.3e, allowed 0 (the random data leaves nothing to "
            "round)\n",
            c.error);
    else
        std::printf(
            "  |GPU - reference| = %.3e, allowed %.3e (%lld roundings x 2^-24 x sum|a*b| "
            "= %.3e)\n",
            c.error, c.bound, depth, d.ref.sum_abs);
    report.extra("abs_error", c.error);
    report.extra("error_bound", c.bound);
    std::snprintf(c.detail, sizeof c.detail, "%s: |GPU - CPU double| = %.3e, allowed %.3e",
                  c.pass ? "the GPU dot product matches the CPU" : "the GPU dot product is wrong",
                  c.error, c.bound);
    return c;
}

// Dot-GM and Dot-SM leave the last step to the CPU: copy `count` values back
// (N products, or one partial sum per block) and add them up there. Both are
// part of the dot product's time, so both are timed once more here and added
// to the kernel's median: the whole dot product, in time and in input GB/s.
inline void report_cpu_finish(Report& report, const TimingStats& kernel, const float* dev_values,
                              float* values, long long count, const char* what,
                              double (*sum_on_cpu)(const float*, long long), long long n) {
    HostTimer copy;
    HANDLE_ERROR(cudaMemcpy(values, dev_values, count * sizeof(float), cudaMemcpyDeviceToHost));
    double copy_back_ms = copy.stop_ms();
    HostTimer sum;
    volatile double kept = sum_on_cpu(values, count);  // volatile: the sum is not optimised away
    (void)kept;
    double cpu_sum_ms = sum.stop_ms();
    double dot_ms = kernel.median_ms + copy_back_ms + cpu_sum_ms;
    double dot_gbs = 2.0 * n * sizeof(float) / (dot_ms * 1e6);  // a and b, read once
    std::printf(
        "  + copy %lld %s back %.3f ms + CPU sum %.3f ms = dot product %.3f ms "
        "(%.1f GB/s of input)\n",
        count, what, copy_back_ms, cpu_sum_ms, dot_ms, dot_gbs);
    report.extra("copy_back_ms", copy_back_ms);
    report.extra("cpu_sum_ms", cpu_sum_ms);
    report.extra("dot_ms", dot_ms);
    report.extra("dot_gbs", dot_gbs);
}
