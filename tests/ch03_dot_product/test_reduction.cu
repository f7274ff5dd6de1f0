// Tests of the reduction family: each kernel, against the CPU.
#include "../../ch03_dot_product/reduction.cu"
#include "dot_test_data.h"

class Reduction : public GpuTest {};

struct ReductionResult {
    double sum;
    long long unwritten;  // partial sums still poisoned (NaN)
    double sum_but_last;  // the CPU's sum without the last block's partial
};

// Runs kernel k on x[0 .. n-1] with the partial sums poisoned; the CPU adds them.
static ReductionResult run_reduction(int k, const std::vector<float>& x, long long n, int threads) {
    long long blocks = ceil_div(n, threads);
    DeviceArray<float> in(x.size()), work(blocks * threads), partial(blocks);
    in.upload(x);
    work.poison();
    partial.poison();
    launch_reduce(k, in.ptr, work.ptr, partial.ptr, n, threads);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<float> p = partial.download();
    return ReductionResult{sum_on_cpu(p.data(), blocks), count_nan(p),
                           sum_on_cpu(p.data(), blocks - 1)};
}

// The program's data (random +-1/8 .. +-7/8): every kernel's sum must be exact.
static void expect_all_kernels(long long n, int threads) {
    std::vector<float> x(n);
    fill_random(x.data(), n, 11);
    Reference ref = sum_reference(x.data(), n, true);
    for (int k = 0; k < KERNEL_COUNT; k++) {
        ReductionResult r = run_reduction(k, x, n, threads);
        EXPECT_EQ(r.unwritten, 0) << KERNEL_NAMES[k] << ", n = " << n << ", threads = " << threads;
        EXPECT_EQ(r.sum, ref.sum) << KERNEL_NAMES[k] << ", n = " << n << ", threads = " << threads;
    }
}

TEST_F(Reduction, OneElement) {
    expect_all_kernels(1, 512);
    expect_all_kernels(1, 1);
}
TEST_F(Reduction, AroundOneBlock) {
    for (long long n : {255, 256, 257}) expect_all_kernels(n, 256);
}
TEST_F(Reduction, NotAMultipleOfTheBlock) {
    expect_all_kernels(100003, 512);
}
TEST_F(Reduction, EveryPowerOfTwoBlock) {
    for (int threads = 1; threads <= 1024; threads *= 2) expect_all_kernels(5000, threads);
}
TEST_F(Reduction, Large) {
    expect_all_kernels((1 << 24) + 1, 512);
}

// The checker must be able to fail: each kernel told n - 1 leaves out the
// last element (never 0: the exact sum changes, whatever the signs) ...
TEST_F(Reduction, CheckerCatchesAMissingElement) {
    const long long n = 4096;
    std::vector<float> x(n);
    fill_random(x.data(), n, 5);
    Reference ref = sum_reference(x.data(), n, true);
    for (int k = 0; k < KERNEL_COUNT; k++) {
        ReductionResult r = run_reduction(k, x, n - 1, 256);
        EXPECT_FALSE(within_bound(r.sum, ref, 0))
            << KERNEL_NAMES[k] << ": " << explain(r.sum, ref, 0);
    }
}
// ... and the last block's partial sum left out, at a large size. The last
// block holds 489 values: an odd number of odd multiples of 1/8 can never add
// up to 0, so leaving it out is always wrong, whatever the random data (with
// an even number it could add up to 0, and the test would prove nothing).
TEST_F(Reduction, LargeCheckerCatchesADroppedLastBlock) {
    const long long n = (1 << 24) + 1001;
    std::vector<float> x(n);
    fill_random(x.data(), n, 5);
    Reference ref = sum_reference(x.data(), n, true);
    for (int k = 0; k < KERNEL_COUNT; k++) {
        ReductionResult r = run_reduction(k, x, n, 512);
        EXPECT_EQ(r.sum, ref.sum) << KERNEL_NAMES[k];
        EXPECT_FALSE(within_bound(r.sum_but_last, ref, 0))
            << KERNEL_NAMES[k] << ": " << explain(r.sum_but_last, ref, 0);
    }
}
