// Tests of Dot-SM-Warp: the program's own kernels and launch, and the CUB
// comparison, against the CPU.
#include "../../ch03_dot_product/Dot-SM-Warp.cu"
#include "dot_test_data.h"

class Dot_SM_Warp : public GpuTest {};

struct WarpResult {
    float sum;              // the answer, read from the device
    long long unwritten;    // partial sums still poisoned (NaN)
};

// Runs both passes with the partials and the result poisoned.
static WarpResult run_warp(const DotInputs& in, long long n, int blocks, int threads) {
    DeviceArray<float> a(in.a.size()), b(in.b.size()), partial(blocks), result(1);
    a.upload(in.a);
    b.upload(in.b);
    partial.poison();
    result.poison();
    dot_sm_warp(a.ptr, b.ptr, partial.ptr, result.ptr, n, blocks, threads);
    HANDLE_ERROR(cudaDeviceSynchronize());
    return WarpResult{result.download()[0], count_nan(partial.download())};
}

static void expect_warp(long long n, Data data, int blocks, int threads) {
    DotInputs in = make_dot_inputs(n, data);
    WarpResult r = run_warp(in, n, blocks, threads);
    long long depth = dot_warp_rounding_depth(n, blocks, threads);
    EXPECT_EQ(r.unwritten, 0) << "n = " << n << ", " << blocks << " x " << threads;
    EXPECT_TRUE(within_bound(r.sum, in.ref, depth))
        << "n = " << n << ", " << blocks << " x " << threads << ": " << explain(r.sum, in.ref, depth);
}

static void expect_warp_auto(long long n, Data data, int threads = 256) {
    DeviceInfo dev = query_device(0);
    expect_warp(n, data, dot_warp_blocks(n, threads, dev), threads);
}

TEST_F(Dot_SM_Warp, GridIsSizedFromTheDevice) {
    DeviceInfo dev = query_device(0);
    EXPECT_EQ(dot_warp_blocks(1, 256, dev), 1);
    EXPECT_GE(dot_warp_blocks(1LL << 28, 256, dev), dev.sm_count);  // at least one block per SM
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
TEST_F(Dot_SM_Warp, ManyBlocks) { expect_warp(3000001, Data::Random, 2500, 128); }
TEST_F(Dot_SM_Warp, Large) { expect_warp_auto((1 << 24) + 3, Data::Random); }
TEST_F(Dot_SM_Warp, DocumentDataLarge) { expect_warp_auto(1 << 24, Data::Document); }

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
// of the document's all-positive data is left out), or n - 4 (a whole float4).
TEST_F(Dot_SM_Warp, CheckerCatchesMissingProducts) {
    DotInputs in = make_dot_inputs(4099, Data::Document);
    for (long long n : {4098LL, 4095LL}) {
        WarpResult r = run_warp(in, n, 4, 128);
        long long depth = dot_warp_rounding_depth(4099, 4, 128);
        EXPECT_FALSE(within_bound(r.sum, in.ref, depth)) << explain(r.sum, in.ref, depth);
    }
}
