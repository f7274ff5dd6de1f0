// Tests of Dot-SM-Warp: the program's own kernels and launch, and the CUB
// comparison, against the CPU.
#include "../../ch03_dot_product/Dot-SM-Warp.cu"
#include "dot_test_data.h"

class Dot_SM_Warp : public GpuTest {};

struct WarpResult {
    float sum;                    // the answer, read from the device
    long long unwritten;          // partial sums still poisoned (NaN)
    std::vector<float> partials;  // pass 1's partial sums
    float sum_but_last;           // pass 2 told one partial fewer: the last block dropped
};

// Runs both passes with the partials and the result poisoned; then pass 2
// again without the last partial.
static WarpResult run_warp(const DotInputs& in, long long n, int blocks, int threads) {
    DeviceArray<float> a(in.a.size()), b(in.b.size()), partial(blocks), result(1);
    a.upload(in.a);
    b.upload(in.b);
    partial.poison();
    result.poison();
    launch_dot_warp(a.ptr, b.ptr, partial.ptr, result.ptr, n, blocks, threads);
    HANDLE_ERROR(cudaDeviceSynchronize());
    WarpResult r;
    r.sum = result.download()[0];
    r.partials = partial.download();
    r.unwritten = count_nan(r.partials);
    result.poison();
    sum_partials<<<1, SECOND_PASS_THREADS>>>(partial.ptr, blocks - 1, result.ptr);
    CHECK_LAUNCH_SYNC();
    r.sum_but_last = result.download()[0];
    return r;
}

static void expect_warp(long long n, Data data, int blocks, int threads) {
    DotInputs in = make_dot_inputs(n, data);
    WarpResult r = run_warp(in, n, blocks, threads);
    long long depth = dot_warp_rounding_depth(n, blocks, threads);
    EXPECT_EQ(r.unwritten, 0) << "n = " << n << ", " << blocks << " x " << threads;
    EXPECT_TRUE(within_bound(r.sum, in.ref, depth))
        << "n = " << n << ", " << blocks << " x " << threads << ": "
        << explain(r.sum, in.ref, depth);
}

static void expect_warp_auto(long long n, Data data, int threads = 256) {
    expect_warp(n, data, dot_warp_blocks(n, threads), threads);
}

TEST_F(Dot_SM_Warp, GridIsSizedFromTheDevice) {
    DeviceInfo dev = query_device(0);
    EXPECT_EQ(dot_warp_blocks(1, 256), 1);
    EXPECT_GE(dot_warp_blocks(1LL << 28, 256), dev.sm_count);  // at least one block per SM
}
// Sizes around the float4 groups: the tail of n % 4 elements.
TEST_F(Dot_SM_Warp, TinySizes) {
    for (long long n = 1; n <= 9; n++) {
        expect_warp_auto(n, Data::Random);
        expect_warp(n, Data::Document, 3, 32);
    }
}
TEST_F(Dot_SM_Warp, AroundOneBlock) {
    for (long long n : {255, 256, 257, 1023, 1024, 1025}) {
        expect_warp_auto(n, Data::Random);
        expect_warp(n, Data::Document, 1, 256);
    }
}
TEST_F(Dot_SM_Warp, NotAMultipleOfTheGrid) {
    expect_warp_auto(100003, Data::Random);
    expect_warp(100003, Data::Document, 13, 64);
}
// Any whole number of warps works, powers of two or not.
TEST_F(Dot_SM_Warp, BlockSizesThatAreNotPowersOfTwo) {
    for (int threads : {32, 96, 160, 736, 1024}) expect_warp(54321, Data::Random, 17, threads);
}
// More partial sums than the second pass has threads.
TEST_F(Dot_SM_Warp, ManyBlocks) {
    expect_warp(3000001, Data::Random, 2500, 128);
}
TEST_F(Dot_SM_Warp, Large) {
    expect_warp_auto((1 << 24) + 3, Data::Random);
}
TEST_F(Dot_SM_Warp, DocumentDataLarge) {
    expect_warp_auto(1 << 24, Data::Document);
}

// CUB's answer from the same inputs. CUB's summation order is its own, so
// the bound allows every term n roundings: loose, but enough to show the call
// is wired right (a wrong pointer or size gives garbage or NaN).
TEST_F(Dot_SM_Warp, VendorDotAgrees) {
    for (long long n : {1LL, 257LL, 100003LL}) {
        DotInputs in = make_dot_inputs(n, Data::Document);
        DeviceArray<float> a(n), b(n), result(1);
        a.upload(in.a);
        b.upload(in.b);
        result.poison();
        size_t temp_bytes = cub_dot_temp_bytes(n);
        DeviceArray<unsigned char> temp(temp_bytes);
        cub_dot(a.ptr, b.ptr, result.ptr, n, temp.ptr, temp_bytes);
        HANDLE_ERROR(cudaDeviceSynchronize());
        float sum = result.download()[0];
        EXPECT_TRUE(within_bound(sum, in.ref, n + 1)) << explain(sum, in.ref, n + 1);
    }
}

// The checker must be able to fail: tell the kernels n - 1 (the last product
// is left out), or n - 4 (a whole float4), with the original's all-positive
// data and with the random data of both signs (every product non-zero).
TEST_F(Dot_SM_Warp, CheckerCatchesMissingProducts) {
    for (Data data : {Data::Document, Data::Random}) {
        DotInputs in = make_dot_inputs(4099, data);
        for (long long n : {4098LL, 4095LL}) {
            WarpResult r = run_warp(in, n, 4, 128);
            long long depth = dot_warp_rounding_depth(4099, 4, 128);
            EXPECT_FALSE(within_bound(r.sum, in.ref, depth)) << explain(r.sum, in.ref, depth);
        }
    }
}

// With data of both signs, on the grid sized from the device: 0, the sign
// flipped, the last block dropped by pass 2, and any one block's partial sum
// left out must all fail. (Before the exact random data, the bound scaled by
// sum|a b| let an H200's 1056-block grid pass with 15 partials missing.)
TEST_F(Dot_SM_Warp, LargeSignedDataCheckerCatchesEachLostBlock) {
    const long long n = (1 << 24) + 3;
    int blocks = dot_warp_blocks(n, 256);
    DotInputs in = make_dot_inputs(n, Data::Random);
    WarpResult r = run_warp(in, n, blocks, 256);
    long long depth = dot_warp_rounding_depth(n, blocks, 256);
    ASSERT_TRUE(within_bound(r.sum, in.ref, depth)) << explain(r.sum, in.ref, depth);
    EXPECT_FALSE(within_bound(0.0, in.ref, depth));
    EXPECT_FALSE(within_bound(-r.sum, in.ref, depth));
    if (r.partials[blocks - 1] != 0) {
        EXPECT_FALSE(within_bound(r.sum_but_last, in.ref, depth))
            << explain(r.sum_but_last, in.ref, depth);
    }
    // (A block whose terms add up to exactly 0 can be left out without
    // changing the answer; see dot_reference.h for how rarely that happens.)
    long long nonzero = 0, caught = 0;
    for (int b = 0; b < blocks; b++) {
        nonzero += r.partials[b] != 0;
        caught += r.partials[b] != 0 && !within_bound((double)r.sum - r.partials[b], in.ref, depth);
    }
    EXPECT_EQ(caught, nonzero) << "of " << blocks << " blocks, each left out in turn";
}

// Pass 2 with as many partials as --blocks allows, 2^31 - 1: its loop index
// must not overflow on the way past the last one (it was an int, and
// `Dot-SM-Warp --n 5000 --blocks 2147483647 --threads 32` exited 1). Three
// partials are non-zero: the first, one in the loop's last round, the last.
TEST_F(Dot_SM_Warp, LargeSecondPassAddsTwoToThe31MinusOnePartials) {
    const int count = 2147483647;
    size_t free_bytes = 0, total_bytes = 0;
    HANDLE_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (free_bytes < (size_t)count * sizeof(float) + (256u << 20))
        GTEST_SKIP() << "needs 8.6 GB of free device memory, " << free_bytes / 1e9 << " GB free";
    DeviceArray<float> partial(count), result(1);
    HANDLE_ERROR(cudaMemset(partial.ptr, 0, partial.bytes()));
    const float one = 1, two = 2, four = 4;
    HANDLE_ERROR(cudaMemcpy(partial.ptr, &one, sizeof(float), cudaMemcpyHostToDevice));
    HANDLE_ERROR(
        cudaMemcpy(partial.ptr + (count - 1500), &two, sizeof(float), cudaMemcpyHostToDevice));
    HANDLE_ERROR(
        cudaMemcpy(partial.ptr + (count - 1), &four, sizeof(float), cudaMemcpyHostToDevice));
    result.poison();
    sum_partials<<<1, SECOND_PASS_THREADS>>>(partial.ptr, count, result.ptr);
    CHECK_LAUNCH_SYNC();
    EXPECT_EQ(result.download()[0], 7.0f);
}
