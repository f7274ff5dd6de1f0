// ch04_matmul/matrix.h -- the host side that every chapter-4 program shares:
// filling the matrices, the original's CPU triple loop, the check, and the
// matrix run (options, data, the fields of every report) around each lesson.
// Source: "GPU Programming" (CSInParallel, 2012), chapter 4 (MM-CPU's loop, the data).
//
// All matrices are square, Width x Width floats, stored row by row
// ("row-major"): element (row y, column x) lives at M[y * Width + x].
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "../common/args.h"
#include "../common/report.h"
#include "../common/timer.h"

// The largest Width the programs accept: three 32768 x 32768 float matrices
// take 12.9 GB, and every index y * Width + x stays below 2^30, so the
// kernels can index with plain int. (The check below relies on it too.)
const long long MAX_WIDTH = 32768;

// The original's data: M[y*W + x] = x + y*W, i.e. 0, 1, 2, ... row after row.
// Faithful, but the values grow to W*W, and an element of the product sums W
// terms of size up to W^4: at W = 1024 the largest result (the last row times
// the last column) is 5.63e14. A float
// keeps 24 bits (about 7 decimal digits), so these results are exact to only
// 1 part in ~10^7 -- and from W = 4097 on, even the inputs (> 2^24) are no
// longer stored exactly. Good for timing; random data is better for checking.
inline void fill_document(float* M, int W) {
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++) M[(size_t)y * W + x] = (float)((double)x + (double)y * W);
}

// Random data made for checking: odd multiples of 1/8 in [-1, 1] (+-1/8,
// +-3/8, +-5/8, +-7/8), both signs, never zero; the same seed gives the same
// matrix. Why such coarse values: a product of two of them is a multiple of
// 1/64 no larger than 1 in size, so every partial sum of a dot product of
// W <= 32768 terms is a multiple of 1/64 below 2^15 -- at most 2^21 steps of
// 1/64, which a float (24 bits) holds exactly. Whatever order a kernel adds
// the terms in, with or without fused multiply-adds, its answer is exact, and
// the check can demand exactly that: any term left out (an odd multiple of
// 1/64, never zero) or added twice shows, at every Width.
inline void fill_random(float* M, int W, unsigned seed) {
    std::mt19937 rng(seed);
    for (size_t i = 0; i < (size_t)W * W; i++) {
        int three_bits = (int)(rng() >> 29);        // 0..7, each equally likely
        M[i] = (float)(2 * three_bits - 7) / 8.0f;  // -7/8, -5/8, ..., 7/8
    }
}

// Data for measuring rounding: uniform in [-1, 1], every bit of the float
// used. The 1/8 grid above is exact in TF32 and BF16 too (3 significant bits),
// so only data like this shows what a Tensor Core's rounded inputs cost
// (MM-GPU-TC, MM-cuBLAS --precision; --data uniform).
inline void fill_uniform(float* M, int W, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (size_t i = 0; i < (size_t)W * W; i++) M[i] = value(rng);
}

// Is every entry a multiple of 1/8 in [-1, 1]? Then (see fill_random) a
// correct float product is exact, and the check allows no error at all.
inline bool on_eighths_grid(const float* M, int W) {
    for (size_t i = 0; i < (size_t)W * W; i++) {
        float eighths = 8.0f * M[i];  // exact: a power-of-two scaling
        // (NaN fails the first test, so the cast to int below is always defined.)
        if (!(std::fabs(eighths) <= 8.0f) || eighths != (float)(int)eighths) return false;
    }
    return true;
}

// MM-CPU: the original's triple loop, in float, one output element at a time.
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

// How long matmul_cpu will take at this Width, in seconds, from a timed
// sample: the first 64 elements of row 0, computed with the very same loop
// (same strides, so the same cache misses), scaled to all W * W elements.
// At W = 32768 that is a day or more, which a program should say up front.
inline double estimate_matmul_cpu_seconds(const float* M, const float* N, int W) {
    int count = W < 64 ? W : 64;
    volatile float sink = 0;  // keeps the compiler from skipping the sample
    HostTimer timer;
    for (int x = 0; x < count; x++) {
        float sum = 0;
        for (int k = 0; k < W; k++) sum += M[k] * N[(size_t)k * W + x];
        sink = sink + sum;
    }
    double seconds = timer.stop_ms() / 1000.0;
    return seconds / count * (double)W * W;
}

// The programs keep 3 (with --cpu, 4) W x W matrices in host memory. On Linux
// malloc hands out address space, not memory: a request the machine cannot
// hold "succeeds", and the program is killed later, while filling the
// matrices, without a word. So refuse it up front (exit 2), when it would take
// more than 3/4 of the RAM (the rest is left to the system and other programs).
inline void check_matrices_fit_on_host(const Args& args, int matrices, int W,
                                       unsigned long long host_bytes = host_physical_bytes()) {
    double needed = (double)matrices * W * (double)W * sizeof(float);
    if (host_bytes == 0 || needed <= 0.75 * (double)host_bytes) return;
    char message[240];
    std::snprintf(message, sizeof message,
                  "Width %d needs %.2f GB of host memory (%d matrices of %.2f GB), more than 3/4 "
                  "of the %.2f GB this machine has; choose a smaller --width",
                  W, needed / 1e9, matrices, needed / matrices / 1e9, host_bytes / 1e9);
    args.fail(message);
}

// ---------------------------------------------------------------------------
// The check.
//
// How big may the error of a correct float product be? That depends on the data:
//  * Data on the 1/8 grid (fill_random): none. Every correct answer is exact
//    (see fill_random), so the tolerance is 0 and one missing term of W =
//    32767 is as visible as a missing tile at W = 33.
//  * Any other data (the original's): each element is compared with its
//    double-precision value relative to sum_k |M[y][k] * N[k][x]|, the size of
//    the numbers the float sum went through. A float sum of W terms, added in
//    ANY order, is off by at most about W x 2^-24 of that (the textbook bound;
//    2^-24 is half a float ulp), and we allow 2 W x 2^-24, so a correct kernel
//    never fails. A rule like sqrt(W) x 2^-24 holds for random data but not
//    for the original's: its rounding errors are not random (adding its terms
//    largest first is off by 8.5 sqrt(W) x 2^-24 at W = 8192). The price: a
//    missing term shows only when it is larger than the tolerance. In the
//    original's data the last term of a dot product is about 2/W of the sum,
//    which beats 2 W x 2^-24 for every W below 4096 (the default 1024
//    included); a missing tile of 32 such terms, below about 23000. Larger
//    Widths are checked properly with --data random.
//  * Inputs rounded before they are multiplied (Tensor Cores, MM-GPU-TC: TF32
//    or BF16, with unit roundoff u = 2^-11 or 2^-8; input_unit below): each
//    rounded input is within u of its own size, so each product of two is
//    within (1 + u)^2 - 1 = (2 + u) u of the exact product, and the sum of
//    them within (2 + u) u of sum_k |M[y][k] * N[k][x]|: that is added to the
//    tolerance of the float sum. (On the 1/8 grid nothing is rounded: 3
//    significant bits fit in TF32's 11 and BF16's 8, so it stays exact.)
//    This bound holds for any data, but it is loose: errors of random sign
//    mostly cancel, and a correct BF16 result is some 20 times inside it at
//    W = 4096, room enough to hide a wrong precision. So rounded results also
//    face a second, statistical test, below (check_frobenius).
const double FLOAT_UNIT = 1.0 / 16777216.0;  // 2^-24

inline double check_tolerance(int W, bool exact, double input_unit = 0) {
    return exact ? 0.0 : 2.0 * W * FLOAT_UNIT + (2.0 + input_unit) * input_unit;
}

// The statistical test of a result computed from rounded inputs: its error
// over all the checked elements together, in the relative Frobenius norm
// ||P - exact|| / ||exact|| (the root of the summed squares). Rounding an input
// x to unit roundoff u moves it by at most u |x|, on average by about u |x| / 2,
// in either direction. An element of P = sum_k m_k n_k then moves by
// sum_k (dm_k n_k + m_k dn_k): 2W small errors of random sign, which add up
// like a random walk, to about sqrt(2/3) u ~ 0.8 u of the element's typical
// size on zero-mean data, at ANY Width (W terms grow the sum and its error
// alike); near 0.6 u on uniform data, measured on the CPU (tests/ch04_matmul/
// test_matrix.cpp, with the roundings emulated). That is the error of inputs
// rounded to NEAREST: on data uniform in [-1, 1] the rounding error of an input
// is uniform in +-u over a mantissa m in [1, 2), relative rms u / sqrt(6), and
// a product's sqrt(2) times that, u / sqrt(3) = 0.58 u (measured on an H200 at
// W = 4096: 0.53 u, TF32 and BF16, MM-GPU-TC and cuBLAS). Inputs TRUNCATED
// instead lose up to 2u, always towards zero: a bias of -ln(2) u per input
// that does not cancel, 1.4 u in all (1.4 u measured). We allow 1 u once 1024
// elements or more are checked (8 W >= 1024: W >= 128), where the estimate
// is steady: a correct result passes by 1.9 times, truncated inputs fail by
// 1.4 times, and TF32 rounded to BF16 (8 times) or an element wrong by its own
// size fail too. Fewer elements give a noisy estimate: there we allow 2 u. (A
// wrong element elsewhere is for the exact check to find, on the 1/8 grid:
// Freivalds' test with no tolerance.) It assumes what random or measured data gives: errors
// that do not line up. Data built so that its terms cancel (sum_k |m_k n_k|
// far above |P|) could fail it, which is why the element test keeps the
// worst-case bound; with input_unit = 0 (FP32 inputs) it is not applied.
inline double frobenius_units(long long checked) {
    return checked >= 1024 ? 1.0 : 2.0;
}
inline double frobenius_tolerance(double input_unit, long long checked) {
    return input_unit > 0 ? frobenius_units(checked) * input_unit : INFINITY;
}

// Which elements are looked at:
//  * whole rows and whole columns -- the first and the last (where partial
//    tiles live) and two random ones of each -- recomputed in double, every
//    element of them, which says where a wrong element is and by how much;
//  * and every element at once, by Freivalds' test (1977): for a random
//    vector v, P v must equal M (N v). That costs 3 W^2 multiply-adds instead
//    of W^3, and sees a wrong element anywhere -- a race inside one tile of a
//    million -- because it changes P v. The entries of v are random whole
//    numbers 1..4096 of either sign, never 0: one wrong element in a row
//    always shows; several cancel out with a chance of at most 1 in 8192. On grid
//    data all three products are exact in double (multiples of 1/64 below
//    2^42, for W <= 2^15), so they must agree exactly; on other data row y
//    may differ by the tolerance times sum_x |v[x]| sum_k |M[y][k] N[k][x]|
//    (the double rounding in these sums is some 10^8 times smaller than that).
struct CheckResult {
    bool exact = false;     // the data is on the 1/8 grid: every element must be exact
    double tolerance = 0;   // check_tolerance(W, exact)
    long long checked = 0;  // elements recomputed in double (whole rows and columns)
    long long wrong = 0;    // of those, beyond the tolerance (NaN counts as wrong)
    double worst = 0;       // the largest relative error among them
    int worst_y = 0, worst_x = 0;
    int rows = 0;              // rows in Freivalds' test: all W
    long long rows_wrong = 0;  // rows where P v and M (N v) disagree
    int first_wrong_row = -1;
    bool wrote_past_end = false;  // the guard float after P changed (check_guard)
    // The relative Frobenius error over the checked elements (see frobenius_tolerance).
    double input_unit = 0;  // unit roundoff of the inputs; 0: FP32, no rounding
    double error_squared = 0, exact_squared = 0;  // sum of (got - exact)^2, of exact^2
    double relative_error() const {
        return std::sqrt(error_squared) / (exact_squared > 0 ? std::sqrt(exact_squared) : 1.0);
    }
    bool frobenius_passed() const {
        return relative_error() <= frobenius_tolerance(input_unit, checked);  // NaN fails
    }
    bool passed() const {
        return wrong == 0 && rows_wrong == 0 && !wrote_past_end && frobenius_passed();
    }
};

// One element: got (the float result) against sum (its value in double) and
// magnitude (sum of |terms|).
inline void check_element(double got, double sum, double magnitude, int y, int x, CheckResult* r) {
    double error = std::fabs(got - sum) / (magnitude > 0 ? magnitude : 1.0);
    r->checked++;
    r->error_squared += (got - sum) * (got - sum);
    r->exact_squared += sum * sum;
    if (!(error <= r->tolerance)) r->wrong++;  // written so that NaN is wrong
    if (!(error <= r->worst)) {
        r->worst = std::isnan(error) ? INFINITY : error;
        r->worst_y = y;
        r->worst_x = x;
    }
}

// sum_k a[k] b[k] and sum_k |a[k] b[k]|, in double. Four running sums, not one:
// with one, every add waits for the one before it (some 4 cycles). Three checks
// at W = 32767 (test_matrix.cpp) took 107 s on one core of the 2-core CI
// machine that way, and take about 60 s with four.
// The order of the adds changes, not what the check can see: on the 1/8 grid
// every partial sum is exact in double, and on other data double's rounding is
// some 10^8 times below the tolerance (see check_tolerance).
struct DotSums {
    double dot = 0, magnitude = 0;
};
inline DotSums dot_in_double(const float* a, const double* b, int n) {
    double dot[4] = {0, 0, 0, 0}, magnitude[4] = {0, 0, 0, 0};
    int k = 0;
    for (; k + 4 <= n; k += 4)
        for (int lane = 0; lane < 4; lane++) {
            double term = a[k + lane] * b[k + lane];
            dot[lane] += term;
            magnitude[lane] += std::fabs(term);
        }
    for (; k < n; k++) {
        double term = a[k] * b[k];
        dot[0] += term;
        magnitude[0] += std::fabs(term);
    }
    return {(dot[0] + dot[1]) + (dot[2] + dot[3]),
            (magnitude[0] + magnitude[1]) + (magnitude[2] + magnitude[3])};
}

// Whole rows of the product in double, computed row-wise (k outer, x inner)
// so that N is read along its rows -- and only once for all the rows.
inline void check_rows(const float* M, const float* N, const float* P, int W,
                       const std::vector<int>& rows, CheckResult* r) {
    size_t count = rows.size();
    std::vector<double> sum(count * W, 0.0), magnitude(count * W, 0.0);  // [row i][x]
    for (int k = 0; k < W; k++) {
        const float* N_row = N + (size_t)k * W;
        for (size_t i = 0; i < count; i++) {
            double m = M[(size_t)rows[i] * W + k];
            double* row_sum = &sum[i * W];
            double* row_magnitude = &magnitude[i * W];
            for (int x = 0; x < W; x++) {
                double term = m * N_row[x];
                row_sum[x] += term;
                row_magnitude[x] += std::fabs(term);
            }
        }
    }
    for (size_t i = 0; i < count; i++)
        for (int x = 0; x < W; x++)
            check_element(P[(size_t)rows[i] * W + x], sum[i * W + x], magnitude[i * W + x], rows[i],
                          x, r);
}

// Whole columns: the columns of N copied out once, then for each row of M
// (read along the row, once) one dot product per column.
inline void check_columns(const float* M, const float* N, const float* P, int W,
                          const std::vector<int>& columns, CheckResult* r) {
    size_t count = columns.size();
    std::vector<double> column(count * W);  // [column i][k]
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < W; k++) column[i * W + k] = N[(size_t)k * W + columns[i]];
    for (int y = 0; y < W; y++) {
        const float* M_row = M + (size_t)y * W;
        for (size_t i = 0; i < count; i++) {
            DotSums sums = dot_in_double(M_row, &column[i * W], W);
            check_element(P[(size_t)y * W + columns[i]], sums.dot, sums.magnitude, y, columns[i],
                          r);
        }
    }
}

// Freivalds' test of every row: P v against M (N v), and the bound
// |M| (|N| |v|) that scales the tolerance.
inline void check_freivalds(const float* M, const float* N, const float* P, int W,
                            std::mt19937& rng, CheckResult* r) {
    std::uniform_int_distribution<int> size(1, 4096), sign(0, 1);
    std::vector<double> v(W), Nv(W), Nv_bound(W);
    for (int x = 0; x < W; x++) v[x] = sign(rng) ? size(rng) : -size(rng);
    for (int k = 0; k < W; k++) {
        DotSums sums = dot_in_double(N + (size_t)k * W, v.data(), W);
        Nv[k] = sums.dot;
        Nv_bound[k] = sums.magnitude;
    }
    r->rows = W;
    for (int y = 0; y < W; y++) {
        const float* M_row = M + (size_t)y * W;
        double MNv = dot_in_double(M_row, Nv.data(), W).dot;
        // |M[y][k]| Nv_bound[k] = |M[y][k] Nv_bound[k]|: Nv_bound is never negative.
        double bound = dot_in_double(M_row, Nv_bound.data(), W).magnitude;
        double Pv = dot_in_double(P + (size_t)y * W, v.data(), W).dot;
        if (!(std::fabs(Pv - MNv) <= r->tolerance * bound)) {  // NaN is wrong here too
            if (r->rows_wrong == 0) r->first_wrong_row = y;
            r->rows_wrong++;
        }
    }
}

// The first and last index and two random ones, in order; every index when
// W <= 64 (W^3 <= 262144 multiply-adds: nothing).
inline std::vector<int> lines_to_check(int W, std::mt19937& rng) {
    std::uniform_int_distribution<int> index(0, W - 1);
    if (W <= 64) {
        std::vector<int> all(W);
        for (int i = 0; i < W; i++) all[i] = i;
        return all;
    }
    std::vector<int> lines = {0, W - 1, index(rng), index(rng)};
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    return lines;
}

// input_unit: the unit roundoff of the inputs the product was computed from
// (TF32 2^-11, BF16 2^-8; 0 for FP32). M and N are always the unrounded inputs:
// the check measures the error of the whole computation, rounding included.
inline CheckResult check_product(const float* M, const float* N, const float* P, int W,
                                 unsigned seed = 7, double input_unit = 0) {
    CheckResult r;
    r.exact = on_eighths_grid(M, W) && on_eighths_grid(N, W);
    r.tolerance = check_tolerance(W, r.exact, input_unit);
    r.input_unit = input_unit;
    std::mt19937 rng(seed);
    check_rows(M, N, P, W, lines_to_check(W, rng), &r);
    check_columns(M, N, P, W, lines_to_check(W, rng), &r);
    check_freivalds(M, N, P, W, rng, &r);
    return r;
}

// The GPU programs allocate P with one float more, P[W * W], poisoned with
// the rest (all bits 1: a NaN). If it is anything else afterwards, the kernel
// wrote past the end of P -- an off-by-one bound -- even if every element of
// the product came out right.
inline void check_guard(const float* P, int W, CheckResult* r) {
    unsigned bits;
    std::memcpy(&bits, &P[(size_t)W * W], sizeof bits);
    r->wrote_past_end = bits != 0xFFFFFFFFu;
}

inline std::string describe(const CheckResult& r) {
    char text[400];
    if (r.wrong || r.rows_wrong)
        std::snprintf(text, sizeof text,
                      "%lld of %lld elements of whole rows and columns wrong, worst relative error "
                      "%.2e at (%d, %d), tolerance %.1e; Freivalds' test of all rows: %lld of %d "
                      "wrong, the first is row %d",
                      r.wrong, r.checked, r.worst, r.worst_y, r.worst_x, r.tolerance, r.rows_wrong,
                      r.rows, r.first_wrong_row);
    else if (r.exact)
        std::snprintf(text, sizeof text,
                      "exact, as a correct product of data on the 1/8 grid must be: %lld "
                      "elements of whole rows and columns against double, and all %d rows by "
                      "Freivalds' test",
                      r.checked, r.rows);
    else
        std::snprintf(text, sizeof text,
                      "%lld elements of whole rows and columns against double, worst relative "
                      "error %.2e <= %.1e, and all %d rows by Freivalds' test",
                      r.checked, r.worst, r.tolerance, r.rows);
    std::string result = text;
    if (r.input_unit > 0) {
        std::snprintf(text, sizeof text,
                      "; relative Frobenius error of the checked elements %.2e, %s %.1e (%.0f u)",
                      r.relative_error(), r.frobenius_passed() ? "<=" : "ABOVE",
                      frobenius_tolerance(r.input_unit, r.checked), frobenius_units(r.checked));
        result += text;
    }
    if (r.wrote_past_end) result += "; but the kernel wrote past the end of P (its guard changed)";
    return result;
}

// The error of the result, measured: printed, and added to the record as
// relative_error (the handout's table of TF32 and BF16 errors comes from it).
inline void report_relative_error(Report& report, const CheckResult& check) {
    std::printf("  %-34s %9.2e (relative Frobenius norm, %lld elements against double)\n",
                "error of P", check.relative_error(), check.checked);
    report.extra("relative_error", check.relative_error());
}

// The chapter's lessons: each step's kernel against the one it improves on,
// timed in the same run on the same matrices (the step before is compiled in
// from its own file, its main() left out). `kernel` is this run's own timing;
// `before` launches the other; this step must be `at_least` times faster.
// Below Width 1024 (where the thresholds were measured) it is not checked.
template <typename Launch>
void check_step_lesson(Report& report, int W, const TimingStats& kernel, const std::string& what,
                       Launch before, double at_least) {
    if (W < 1024) return report.lesson_not_checked("use --width 1024 or more");
    TimingStats t = time_gpu(before, report.repeats());
    report.lesson(what, t.median_ms / kernel.median_ms, at_least);
}

// ---------------------------------------------------------------------------
// The matrix run: what every program of the chapter does around its lesson,
// so that the programs differ only in their kernel and its launch.

// The options every program reads: --width, --data, --seed and, in the GPU
// programs, --cpu. Read them before the program's Report, which reads
// --repeats and --json and then refuses any option nobody read.
struct MatrixRun {
    int W = 0;          // the matrices are W x W floats
    std::string data;   // "random" (checked exactly), "document" (the original's) or "uniform"
    unsigned seed = 1;  // of the random data
    bool cpu = false;   // --cpu: also time MM-CPU's triple loop at this Width
    size_t bytes = 0;   // one matrix
    // P gets one float more than the matrix: a guard past its end, poisoned
    // like the rest. A kernel that writes past the end of P changes it.
    size_t guarded_bytes() const { return bytes + sizeof(float); }
    // 2 W^3 floating-point operations (W^3 multiplies and W^3 adds) per product.
    double flops() const { return 2.0 * W * (double)W * W; }
};

// Reads the options and refuses, with exit 2 and before any GPU is looked
// for, a Width whose matrices the host cannot hold (check_matrices_fit_on_host).
// The GPU programs default to random data: on it the check is exact, so any
// wrong index shows. The original's data is checked only to within float
// rounding of its large positive sums, which hides a wrong column a few
// places off. MM-CPU keeps the original's data by default.
// uniform_allowed: the program also takes --data uniform (fill_uniform).
inline MatrixRun read_matrix_run(Args& args, const char* default_data, bool gpu_program,
                                 bool uniform_allowed = false) {
    MatrixRun run;
    run.W = (int)args.integer("--width", 1024, 1, MAX_WIDTH);
    run.data = args.text("--data", default_data);
    run.seed = (unsigned)args.integer("--seed", 1, 0, 4294967295LL);
    run.cpu = gpu_program && args.flag("--cpu");
    if (uniform_allowed && run.data != "document" && run.data != "random" && run.data != "uniform")
        args.fail("--data must be 'document', 'random' or 'uniform'");
    if (!uniform_allowed && run.data != "document" && run.data != "random")
        args.fail("--data must be 'document' or 'random'");
    run.bytes = checked_bytes(args, (long long)run.W * run.W, sizeof(float), 1);
    check_matrices_fit_on_host(args, run.cpu ? 4 : 3, run.W);
    return run;
}

// M and N as --data asks: the original's 0, 1, 2, ... or random eighths.
inline void fill_inputs(float* M, float* N, const MatrixRun& run) {
    if (run.data == "document") {
        fill_document(M, run.W);
        fill_document(N, run.W);
    } else if (run.data == "uniform") {
        fill_uniform(M, run.W, run.seed);
        fill_uniform(N, run.W, run.seed + 1);
    } else {
        fill_random(M, run.W, run.seed);
        fill_random(N, run.W, run.seed + 1);
    }
}

// What this run is, in every JSON record: the Width, the work, the data.
inline Report& report_matrix_run(Report& report, const MatrixRun& run) {
    return report.size("width", run.W).size("data", run.data).size("flops", (long long)run.flops());
}

// "--cpu": the original's baseline (MM-CPU's triple loop) on the same data.
// Prints how much faster the GPU was, and adds cpu_ms to the record (null
// without --cpu).
inline void report_cpu_baseline(Report& report, const Args& args, const MatrixRun& run,
                                const float* M, const float* N, double end_to_end_ms,
                                const TimingStats& kernel) {
    if (!run.cpu) {
        report.extra("cpu_ms", NAN);
        return;
    }
    announce_long_run(estimate_matmul_cpu_seconds(M, N, run.W),
                      "--cpu: estimated from 64 elements of P timed at this Width");
    float* P_cpu = (float*)host_alloc(args, run.bytes);
    HostTimer cpu;
    matmul_cpu(M, N, P_cpu, run.W);
    double cpu_ms = cpu.stop_ms();
    std::free(P_cpu);
    std::printf("  %-34s %9.3f ms  -> GPU end to end is %.0fx faster, kernel only %.0fx\n",
                "CPU triple loop (MM-CPU)", cpu_ms, cpu_ms / end_to_end_ms,
                cpu_ms / kernel.median_ms);
    report.extra("cpu_ms", cpu_ms);
}
