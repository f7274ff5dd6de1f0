// Tests of dot_multi.cu: the split dot product equals the double reference on 1 to 4 GPUs at
// sizes no split divides (the partial sums start as NaN: a GPU that never writes its sum fails),
// and the check can fail.
#include "../../ch07_multi_gpu/dot_multi.cu"
#include "multi_gpu_test.h"

// The slices cover 0 .. n-1 once, in order, and differ in size by at most one.
TEST(Slices, CoverEveryElementOnce) {
    for (int k : {1, 2, 3, 4, 7})
        for (long long n : {1LL, 2LL, 5LL, 100003LL}) {
            long long next = 0;
            for (int g = 0; g < k; ++g) {
                Slice s = slice_of(n, k, g);
                EXPECT_EQ(s.begin, next);
                EXPECT_LE(s.count, n / k + 1);
                EXPECT_GE(s.count, n / k);
                next = s.begin + s.count;
            }
            EXPECT_EQ(next, n);
        }
}

class DotMultiTest : public GpuTest,
                     public ::testing::WithParamInterface<std::tuple<int, long long>> {};

TEST_P(DotMultiTest, EqualsTheReference) {
    int k = std::get<0>(GetParam());
    long long n = std::get<1>(GetParam());
    REQUIRE_GPUS(k);
    std::vector<float> a(n), b(n);
    fill_eighths_host(a.data(), n, 1);
    fill_eighths_host(b.data(), n, 2);
    std::vector<GpuPart> parts;
    double sum = dot_multi(a.data(), b.data(), n, k, 1, parts);
    EXPECT_EQ(sum, dot_reference(a.data(), b.data(), n)) << k << " GPUs, n = " << n;
    ASSERT_EQ((int)parts.size(), k);
    for (int g = 0; g < k; ++g) EXPECT_FALSE(std::isnan(parts[g].partial)) << "GPU " << g;
}

INSTANTIATE_TEST_SUITE_P(Sizes, DotMultiTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(1LL, 7LL, 100003LL,
                                                              (1LL << 22) + 1)));

class DotMultiCheck : public GpuTest {};

// Leaving out one GPU's partial sum is seen: no slice of odd length sums to 0.
TEST_F(DotMultiCheck, OnePartialLeftOutIsSeen) {
    int k = visible_gpus();
    long long n = 2 * 100003 + 1;
    std::vector<float> a(n), b(n);
    fill_eighths_host(a.data(), n, 1);
    fill_eighths_host(b.data(), n, 2);
    std::vector<GpuPart> parts;
    double sum = dot_multi(a.data(), b.data(), n, k, 1, parts);
    double reference = dot_reference(a.data(), b.data(), n);
    EXPECT_EQ(sum, reference);
    EXPECT_NE(sum - parts[k - 1].partial, reference);
}

// The issue's size class: 2^28 + 1 over every visible GPU.
TEST_F(DotMultiCheck, LargeOnEveryGpu) {
    int k = visible_gpus();
    long long n = (1LL << 28) + 1;
    std::vector<float> a(n), b(n);
    fill_eighths_host(a.data(), n, 1);
    fill_eighths_host(b.data(), n, 2);
    std::vector<GpuPart> parts;
    EXPECT_EQ(dot_multi(a.data(), b.data(), n, k, 1, parts), dot_reference(a.data(), b.data(), n));
}
