// Tests of ch03_dot_product/dot_reference.h, on the CPU: the double reference,
// the two checks every chapter-3 program uses (the rounding-error bound for the
// original's data, exact equality for the random data), and the pitfalls of
// the original's float checks.
#include <gtest/gtest.h>
#include <cmath>
#include <cstdint>
#include <vector>
#include "../../ch03_dot_product/dot_reference.h"

TEST(DotReference, ExactForTheOriginalsDataWhileIntegersAreExact) {
    // Below 2^24 every i and 2i is exact in float, and every product and partial
    // sum (< 2^53) is exact in double: the reference equals the closed form.
    for (long long n : {1LL, 2LL, 1000LL, 33LL * 1024}) {
        std::vector<float> a(n), b(n);
        fill_document_data(a.data(), b.data(), n);
        EXPECT_EQ(dot_reference(a.data(), b.data(), n, false).sum, closed_form_exact(n))
            << "n = " << n;
    }
}

TEST(DotReference, SumAbsIsTheScaleOfTheErrors) {
    std::vector<float> a = {1, -2, 3}, b = {1, 1, -1};
    Reference r = dot_reference(a.data(), b.data(), 3, false);
    EXPECT_EQ(r.sum, -4.0);
    EXPECT_EQ(r.sum_abs, 6.0);
    EXPECT_EQ(sum_reference(a.data(), 3, false).sum_abs, 6.0);
}

TEST(DotReference, BoundGrowsWithDepthAndRejectsNaN) {
    Reference r;
    r.n = 1000;
    r.sum = 1.0;
    r.sum_abs = 1000.0;
    EXPECT_LT(float_error_bound(10, r), float_error_bound(100, r));
    EXPECT_NEAR(float_error_bound(1, r), 1000.0 / 16777216.0, 1e-9);
    EXPECT_TRUE(
        std::isinf(float_error_bound(1LL << 24, r)));  // depth * u = 1: the bound says nothing
    EXPECT_FALSE(within_bound(NAN, r, 10));
    EXPECT_TRUE(within_bound(1.0, r, 10));
    r.exact = true;  // the random data: nothing is allowed, whatever the depth
    EXPECT_EQ(allowed_error(1000, r), 0.0);
    EXPECT_TRUE(within_bound(1.0, r, 1000));
    EXPECT_FALSE(within_bound(1.0 + 1.0 / 64, r, 1000));
    EXPECT_FALSE(within_bound(NAN, r, 10));
}

// Real-valued data of both signs, uniform in [lo, hi): not what the programs
// use (see dot_reference.h), but the bound must hold for it too.
static void fill_uniform(std::vector<float>& x, uint64_t seed, float lo, float hi) {
    SplitMix64 rng(seed);
    for (size_t i = 0; i < x.size(); i++) {
        float unit = (float)(rng.next() >> 40) / 16777216.0f;  // 24 bits: [0, 1)
        x[i] = lo + (hi - lo) * unit;
    }
}

// A float emulation of the GPU's order: `grid` running sums fed by a
// grid-stride loop (fused multiply-adds), then a halving tree.
static float grid_dot_in_float(const std::vector<float>& a, const std::vector<float>& b,
                               long long grid) {
    std::vector<float> sums(grid, 0.0f);
    for (size_t i = 0; i < a.size(); i++) sums[i % grid] = std::fma(a[i], b[i], sums[i % grid]);
    for (long long half = grid / 2; half > 0; half /= 2)
        for (long long t = 0; t < half; t++) sums[t] += sums[t + half];
    return sums[0];
}

TEST(DotReference, BoundHoldsForTheGpusSummationOrder) {
    const long long n = 1 << 22, grid = 32 * 256;  // Dot-SM's capped grid
    long long depth = 1 + (n + grid - 1) / grid + tree_levels(grid);
    std::vector<float> a(n), b(n);
    fill_document_data(a.data(), b.data(), n);
    Reference doc = dot_reference(a.data(), b.data(), n, false);
    float doc_sum = grid_dot_in_float(a, b, grid);
    EXPECT_TRUE(within_bound(doc_sum, doc, depth));
    fill_uniform(a, 1, -1, 1);
    fill_uniform(b, 2, -1, 1);
    Reference real = dot_reference(a.data(), b.data(), n, false);
    EXPECT_TRUE(within_bound(grid_dot_in_float(a, b, grid), real, depth));
    // The real error is far inside the worst case (errors of both signs cancel).
    EXPECT_LT(std::fabs(doc_sum - doc.sum), 0.1 * float_error_bound(depth, doc));
}

TEST(DotReference, BoundCatchesAMissingTerm) {
    const long long n = 1000;
    std::vector<float> a(n), b(n);
    fill_document_data(a.data(), b.data(), n);
    Reference ref = dot_reference(a.data(), b.data(), n, false);
    double without_last = ref.sum - (double)a[n - 1] * b[n - 1];
    EXPECT_FALSE(within_bound(without_last, ref, 1 + n / 8 + 8));
}

// ---------------------------------------------------------------------------
// The random data: exact arithmetic, so the check demands equality.

TEST(ExactData, ValuesAreTheEightOddEighths) {
    const long long n = 80000;
    std::vector<float> x(n);
    fill_random(x.data(), n, 3);
    long long count[8] = {0};
    for (float v : x) {
        double k = (8.0 * v + 7) / 2;  // -7/8 .. 7/8 -> 0 .. 7
        ASSERT_EQ(k, std::floor(k)) << v;
        ASSERT_TRUE(k >= 0 && k <= 7) << v;
        count[(int)k]++;
    }
    for (int k = 0; k < 8; k++)
        EXPECT_NEAR(count[k], n / 8, n / 80) << "value " << (2 * k - 7) << "/8";
    std::vector<float> again(n);
    fill_random(again.data(), n, 3);
    EXPECT_EQ(x, again);  // reproducible
}

// Every order of summation a GPU may use gives the exact answer: the grid-stride
// + tree order of Dot-SM, a single running sum (the longest chain there is),
// and pairwise halving.
TEST(ExactData, EveryOrderOfSummationIsExact) {
    const long long n = (1 << 22) + 3;
    std::vector<float> a(n), b(n);
    fill_random(a.data(), n, 1);
    fill_random(b.data(), n, 2);
    Reference ref = dot_reference(a.data(), b.data(), n, true);
    EXPECT_EQ(grid_dot_in_float(a, b, 32 * 256), ref.sum);
    EXPECT_EQ(grid_dot_in_float(a, b, 1024 * 256), ref.sum);
    float chain = 0;
    for (long long i = 0; i < n; i++) chain += a[i] * b[i];
    EXPECT_EQ(chain, ref.sum);
    std::vector<float> t(n);
    for (long long i = 0; i < n; i++) t[i] = a[i] * b[i];
    for (long long len = n; len > 1; len = (len + 1) / 2) {
        for (long long k = 0; k < len / 2; k++) t[k] = t[2 * k] + t[2 * k + 1];
        if (len % 2) t[len / 2] = t[len - 1];
    }
    EXPECT_EQ(t[0], ref.sum);
}

// Which block of a launch adds element i: Dot-SM, Dot-GM and the reductions
// walk the elements with a grid-stride loop (block (i / T) mod B); Dot-SM-Warp
// walks groups of four (block (i / 4 / T) mod B) and gives the n mod 4 last
// elements to block 0. Kept as running counters: no division per element.
struct GridEmulation {
    const char* what;
    long long blocks, threads;
    bool float4;
    long long old_depth;             // the program's rounding depth: what the old check allowed
    std::vector<long long> partial;  // each block's sum, in units of 1/64
    long long block = 0, position = 0;
    void start() { partial.assign(blocks, 0); }
    void add(long long i, long long n, long long term) {
        if (float4 && i >= n / 4 * 4) {  // the tail
            partial[0] += term;
            return;
        }
        partial[block] += term;
        if (++position == (float4 ? 4 : 1) * threads) {
            position = 0;
            if (++block == blocks) block = 0;
        }
    }
};

// The proof the issue asked for, at the programs' default N = 2^28 with the
// programs' own data and the grids the H200 uses: the exact check rejects a
// result of 0, the sign flipped, one term off, and every single block's
// partial sum left out -- all of which the old bound (depth x 2^-24 x
// sum|a b|) accepted. No GPU needed: the "GPU results" are made up from the
// exact partial sums of each block, computed here in integers.
TEST(ExactData, CheckRejectsWrongAnswersAtTwoToThe28) {
    const long long n = 1LL << 28;
    // Depths as the programs compute them (Dot-SM: 1 + N / (B T) + 8;
    // Dot-SM-Warp: 1 + 3 + N / (4 B T) + 1 + 10 + B / 1024 + 10; Dot-GM: 1).
    std::vector<GridEmulation> grids = {
        {"Dot-SM, the original's 32 x 256", 32, 256, false, 1 + 32768 + 8, {}},
        {"Dot-SM --blocks auto on an H200, 1056 x 256", 1056, 256, false, 1 + 993 + 8, {}},
        {"Dot-GM, 128 x 128", 128, 128, false, 1, {}},
        {"Dot-SM-Warp on an H200, 792 x 256", 792, 256, true, 4 + 331 + 1 + 10 + 1 + 10, {}},
        {"Dot-SM-Warp, 1056 x 256", 1056, 256, true, 4 + 249 + 1 + 10 + 2 + 10, {}},
        {"Dot-SM-Warp --threads 128 on an H200, 1584 x 128",
         1584,
         128,
         true,
         4 + 331 + 1 + 10 + 2 + 10,
         {}},
        {"Dot-SM-Warp --threads 1024 on an H200, 132 x 1024",
         132,
         1024,
         true,
         4 + 497 + 1 + 10 + 1 + 10,
         {}},
    };
    for (GridEmulation& g : grids) g.start();
    long long sum = 0, sum_abs = 0, largest_prefix = 0;
    SplitMix64 a(1), b(2);  // the programs' a and b: fill_random with seeds 1 and 2
    for (long long i = 0; i < n; i++) {
        // a[i] and b[i] in units of 1/8; the term in units of 1/64.
        long long term = (long long)(8 * random_eighth(a)) * (long long)(8 * random_eighth(b));
        sum += term;
        sum_abs += term < 0 ? -term : term;
        largest_prefix = std::max(largest_prefix, sum < 0 ? -sum : sum);
        for (GridEmulation& g : grids) g.add(i, n, term);
    }
    Reference ref;
    ref.n = n;
    ref.sum = sum / 64.0;
    ref.sum_abs = sum_abs / 64.0;
    ref.exact = true;
    // The margin of dot_reference.h, seen on the data: even the longest chain
    // (one running sum over all 2^28 terms) stays far below 2^18.
    EXPECT_LT(largest_prefix, (1LL << 18) * 64 / 8);
    const long long depth = 1 + n / (32 * 256) + 8;  // Dot-SM's default grid: 32 777
    Reference old = ref;
    old.exact = false;  // the check before: the bound scaled by sum|a b|

    EXPECT_TRUE(within_bound(ref.sum, ref, depth));
    for (double wrong : {0.0, -ref.sum, ref.sum + 1.0 / 64, ref.sum - 1.0 / 64, ref.sum / 2}) {
        EXPECT_FALSE(within_bound(wrong, ref, depth)) << wrong << " instead of " << ref.sum;
        EXPECT_TRUE(within_bound(wrong, old, depth)) << "the old bound rejected " << wrong;
    }
    for (const GridEmulation& g : grids) {
        long long accepted_before = 0, half = 0;
        for (long long b = 0; b < g.blocks; b++) {
            double dropped = (sum - g.partial[b]) / 64.0;  // block b's partial sum left out
            EXPECT_NE(g.partial[b], 0) << g.what << ": block " << b << " adds up to 0";
            EXPECT_FALSE(within_bound(dropped, ref, g.old_depth))
                << g.what << ": without block " << b;
            accepted_before += within_bound(dropped, old, g.old_depth);
            if (b < g.blocks / 2) half += g.partial[b];
        }
        EXPECT_FALSE(within_bound(half / 64.0, ref, g.old_depth))
            << g.what << ": half of the blocks";
        // Dot-GM's check (depth 1) already saw a lost block; the reductions' did not.
        if (g.old_depth > 1) {
            EXPECT_EQ(accepted_before, g.blocks)
                << g.what << ": the old bound caught some dropped blocks";
        }
        long long total = 0;
        for (long long p : g.partial) total += p;
        EXPECT_EQ(total, sum) << g.what << ": the emulation lost terms";
    }
}

// ---------------------------------------------------------------------------
// The original's float pitfalls.

// The pitfall of the original's CPU side: `float sum; sum += c[i]` stops
// growing once the sum is 2^24 times larger than what is added.
TEST(DotReference, AFloatRunningSumStagnates) {
    float sum = 0;
    for (long long i = 0; i < (1LL << 25); i++) sum += 1.0f;
    EXPECT_EQ(sum, 16777216.0f);  // 2^24, not 2^25
}

TEST(DotReference, OriginalsFloatClosedFormDrifts) {
    // Exact at the original's size? Off by whole units at 2^20 and beyond.
    double exact = closed_form_exact(1 << 20);
    EXPECT_NE((double)original_closed_form_float(1 << 20), exact);
    EXPECT_EQ(closed_form_exact(4), 28.0);  // 2 * (0 + 1 + 4 + 9)
}

TEST(DotReference, Helpers) {
    EXPECT_TRUE(is_power_of_two(1));
    EXPECT_TRUE(is_power_of_two(1024));
    EXPECT_FALSE(is_power_of_two(0));
    EXPECT_FALSE(is_power_of_two(192));
    EXPECT_EQ(tree_levels(1), 0);
    EXPECT_EQ(tree_levels(256), 8);
    EXPECT_EQ(tree_levels(257), 9);
}
