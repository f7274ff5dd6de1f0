// Tests of ch03_dot_product/dot_reference.h, on the CPU: the double reference,
// the rounding-error bound every chapter-3 check uses, and the pitfalls of the
// document's float checks.
#include <gtest/gtest.h>
#include <cmath>
#include <vector>
#include "../../ch03_dot_product/dot_reference.h"

TEST(DotReference, ExactForTheDocumentsDataWhileIntegersAreExact) {
    // Below 2^24 every i and 2i is exact in float, and every product and partial
    // sum (< 2^53) is exact in double: the reference equals the closed form.
    for (long long n : {1LL, 2LL, 1000LL, 33LL * 1024}) {
        std::vector<float> a(n), b(n);
        fill_document_data(a.data(), b.data(), n);
        EXPECT_EQ(dot_reference(a.data(), b.data(), n).sum, closed_form_exact(n)) << "n = " << n;
    }
}

TEST(DotReference, SumAbsIsTheScaleOfTheErrors) {
    std::vector<float> a = {1, -2, 3}, b = {1, 1, -1};
    Reference r = dot_reference(a.data(), b.data(), 3);
    EXPECT_EQ(r.sum, -4.0);
    EXPECT_EQ(r.sum_abs, 6.0);
    EXPECT_EQ(sum_reference(a.data(), 3).sum_abs, 6.0);
}

TEST(DotReference, BoundGrowsWithDepthAndRejectsNaN) {
    Reference r;
    r.n = 1000;
    r.sum = 1.0;
    r.sum_abs = 1000.0;
    EXPECT_LT(float_error_bound(10, r), float_error_bound(100, r));
    EXPECT_NEAR(float_error_bound(1, r), 1000.0 / 16777216.0, 1e-9);
    EXPECT_TRUE(std::isinf(float_error_bound(1LL << 24, r)));  // depth * u = 1: the bound says nothing
    EXPECT_FALSE(within_bound(NAN, r, 10));
    EXPECT_TRUE(within_bound(1.0, r, 10));
}

// A float emulation of the GPU's order: `grid` running sums fed by a
// grid-stride loop (fused multiply-adds), then a halving tree.
static float grid_dot_in_float(const std::vector<float>& a, const std::vector<float>& b, long long grid) {
    std::vector<float> sums(grid, 0.0f);
    for (size_t i = 0; i < a.size(); i++) sums[i % grid] = std::fma(a[i], b[i], sums[i % grid]);
    for (long long half = grid / 2; half > 0; half /= 2)
        for (long long t = 0; t < half; t++) sums[t] += sums[t + half];
    return sums[0];
}

TEST(DotReference, BoundHoldsForTheGpusSummationOrder) {
    const long long n = 1 << 22, grid = 32 * 256;  // Dot-SM's capped grid
    long long depth = 1 + ceil_div(n, grid) + tree_levels(grid);
    std::vector<float> a(n), b(n);
    fill_document_data(a.data(), b.data(), n);
    Reference doc = dot_reference(a.data(), b.data(), n);
    float doc_sum = grid_dot_in_float(a, b, grid);
    EXPECT_TRUE(within_bound(doc_sum, doc, depth));
    fill_random(a.data(), n, 1, -1, 1);
    fill_random(b.data(), n, 2, -1, 1);
    Reference rnd = dot_reference(a.data(), b.data(), n);
    EXPECT_TRUE(within_bound(grid_dot_in_float(a, b, grid), rnd, depth));
    // The real error is far inside the worst case (errors of both signs cancel).
    EXPECT_LT(std::fabs(doc_sum - doc.sum), 0.1 * float_error_bound(depth, doc));
}

TEST(DotReference, BoundCatchesAMissingTerm) {
    const long long n = 1000;
    std::vector<float> a(n), b(n);
    fill_document_data(a.data(), b.data(), n);
    Reference ref = dot_reference(a.data(), b.data(), n);
    double without_last = ref.sum - (double)a[n - 1] * b[n - 1];
    EXPECT_FALSE(within_bound(without_last, ref, 1 + n / 8 + 8));
}

// The pitfall of the document's CPU side: `float sum; sum += c[i]` stops
// growing once the sum is 2^24 times larger than what is added.
TEST(DotReference, AFloatRunningSumStagnates) {
    float sum = 0;
    for (long long i = 0; i < (1LL << 25); i++) sum += 1.0f;
    EXPECT_EQ(sum, 16777216.0f);  // 2^24, not 2^25
}

TEST(DotReference, DocumentsFloatClosedFormDrifts) {
    // Exact at the document's size? Off by whole units at 2^20 and beyond.
    double exact = closed_form_exact(1 << 20);
    EXPECT_NE((double)document_closed_form_float(1 << 20), exact);
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
    EXPECT_EQ(ceil_div(257, 256), 2);
    float x = hashed_uniform(1, 12345, -1, 1);
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
    EXPECT_EQ(x, hashed_uniform(1, 12345, -1, 1));  // reproducible
}
