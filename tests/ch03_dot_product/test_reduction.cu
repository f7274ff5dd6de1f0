// Tests of the reduction family: each kernel, against the CPU.
#include "../../ch03_dot_product/reduction.cu"
#include "dot_test_data.h"

class Reduction : public GpuTest {};

struct ReductionResult {
    double sum;
    long long unwritten;  // partial sums still poisoned (NaN)
};

// Runs kernel k on x[0 .. n-1] with the partial sums poisoned; the CPU adds them.
static ReductionResult run_reduction(int k, const std::vector<float>& x, long long n, int threads) {
    long long blocks = reduction_blocks(n, threads);
    DeviceArray<float> in(x.size()), work(blocks * threads), partial(blocks);
    in.upload(x);
    work.poison();
    partial.poison();
    reduce(k, in.ptr, work.ptr, partial.ptr, n, threads);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<float> p = partial.download();
    return ReductionResult{sum_on_cpu(p.data(), blocks), count_nan(p)};
}

static void expect_all_kernels(long long n, int threads, float lo = 0.0f, float hi = 1.0f) {
    std::vector<float> x(n);
    fill_random(x.data(), n, 11, lo, hi);
    Reference ref = sum_reference(x.data(), n);
    for (int k = 0; k < KERNEL_COUNT; k++) {
        ReductionResult r = run_reduction(k, x, n, threads);
        long long depth = reduction_rounding_depth(k, threads);
        EXPECT_EQ(r.unwritten, 0) << KERNEL_NAMES[k] << ", n = " << n << ", threads = " << threads;
        EXPECT_TRUE(within_bound(r.sum, ref, depth))
            << KERNEL_NAMES[k] << ", n = " << n << ", threads = " << threads << ": " << explain(r.sum, ref, depth);
    }
}

TEST_F(Reduction, KernelNames) {
    EXPECT_EQ(kernel_number("thread0"), 0);
    EXPECT_EQ(kernel_number("sequential"), 3);
    EXPECT_EQ(kernel_number("fastest"), -1);
}
TEST_F(Reduction, OneElement) {
    expect_all_kernels(1, 512);
    expect_all_kernels(1, 1);
}
TEST_F(Reduction, AroundOneBlock) {
    for (long long n : {255, 256, 257}) expect_all_kernels(n, 256);
}
TEST_F(Reduction, NotAMultipleOfTheBlock) { expect_all_kernels(100003, 512, -1.0f, 1.0f); }
TEST_F(Reduction, EveryPowerOfTwoBlock) {
    for (int threads = 1; threads <= 1024; threads *= 2) expect_all_kernels(5000, threads);
}
TEST_F(Reduction, Large) { expect_all_kernels((1 << 24) + 1, 512); }

// The checker must be able to fail: each kernel told n - 1 leaves out the
// last element (all values are in [0.5, 1): nothing can cancel it).
TEST_F(Reduction, CheckerCatchesAMissingElement) {
    const long long n = 4096;
    std::vector<float> x(n);
    fill_random(x.data(), n, 5, 0.5f, 1.0f);
    Reference ref = sum_reference(x.data(), n);
    for (int k = 0; k < KERNEL_COUNT; k++) {
        ReductionResult r = run_reduction(k, x, n - 1, 256);
        long long depth = reduction_rounding_depth(k, 256);
        EXPECT_FALSE(within_bound(r.sum, ref, depth)) << KERNEL_NAMES[k] << ": " << explain(r.sum, ref, depth);
    }
}
