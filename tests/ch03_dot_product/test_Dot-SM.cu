// Tests of Dot-SM: the program's own kernel and launch, against the CPU.
#include "../../ch03_dot_product/Dot-SM.cu"
#include "dot_test_data.h"

class Dot_SM : public GpuTest {};

// Runs dot_sm with the partial sums poisoned; returns the partials.
static std::vector<float> run_dot_sm_partials(const DotInputs& in, long long n, long long blocks) {
    DeviceArray<float> a(in.a.size()), b(in.b.size()), partial(blocks);
    a.upload(in.a);
    b.upload(in.b);
    partial.poison();
    launch_dot(a.ptr, b.ptr, partial.ptr, n, (int)blocks);
    HANDLE_ERROR(cudaDeviceSynchronize());
    return partial.download();
}

// The same; returns the program's double sum of the partials and sets
// *unwritten to the number of partials no block wrote (still NaN).
static double run_dot_sm(const DotInputs& in, long long n, long long blocks, long long* unwritten) {
    std::vector<float> p = run_dot_sm_partials(in, n, blocks);
    *unwritten = count_nan(p);
    return sum_partials_on_cpu(p.data(), blocks);
}

static void expect_dot_sm(long long n, Data data, long long blocks) {
    DotInputs in = make_dot_inputs(n, data);
    long long unwritten = 0;
    double sum = run_dot_sm(in, n, blocks, &unwritten);
    long long depth = dot_rounding_depth(n, blocks);
    EXPECT_EQ(unwritten, 0) << "n = " << n << ", blocks = " << blocks;
    EXPECT_TRUE(within_bound(sum, in.ref, depth))
        << "n = " << n << ", blocks = " << blocks << ": " << explain(sum, in.ref, depth);
}

TEST_F(Dot_SM, OneElement) {
    expect_dot_sm(1, Data::Random, original_blocks(1));
    expect_dot_sm(1, Data::Document, 5);  // more blocks than elements: four add nothing
}
TEST_F(Dot_SM, AroundOneBlock) {
    for (long long n : {255, 256, 257}) {
        expect_dot_sm(n, Data::Random, original_blocks(n));
        expect_dot_sm(n, Data::Document, 1);
    }
}
TEST_F(Dot_SM, NotAMultipleOfTheGrid) {
    expect_dot_sm(100003, Data::Random, original_blocks(100003));
    expect_dot_sm(100003, Data::Document, 7);
}
TEST_F(Dot_SM, Uncapped) {
    expect_dot_sm(100003, Data::Random, ceil_div(100003, THREADS_PER_BLOCK));
}
TEST_F(Dot_SM, Large) {
    expect_dot_sm((1 << 24) + 3, Data::Random, original_blocks(1 << 24));
}
TEST_F(Dot_SM, DocumentDataLarge) {
    expect_dot_sm(1 << 24, Data::Document, original_blocks(1 << 24));
}
TEST_F(Dot_SM, LargeUncapped) {
    expect_dot_sm(1 << 24, Data::Random, ceil_div(1 << 24, THREADS_PER_BLOCK));
}
TEST_F(Dot_SM, LargeAutoGrid) {
    expect_dot_sm(1 << 24, Data::Document, blocks_to_fill_gpu(dot, THREADS_PER_BLOCK));
}

// Why the block size must be a power of two: the same tree with a block size
// chosen at run time. With 192 threads the halving goes 96, 48, 24, 12, 6, 3,
// 1: at the step of 3 the six values become three, then "1" adds only the
// second to the first -- the third value is lost.
__global__ void dot_tree_any_block(const float* a, const float* b, float* partial, long long n) {
    extern __shared__ float any_cache[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float temp = 0;
    for (; i < n; i += (long long)gridDim.x * blockDim.x) temp += a[i] * b[i];
    any_cache[threadIdx.x] = temp;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) any_cache[threadIdx.x] += any_cache[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = any_cache[0];
}

static double run_any_block(const DotInputs& in, int blocks, int threads) {
    long long n = (long long)in.a.size();
    DeviceArray<float> a(n), b(n), partial(blocks);
    a.upload(in.a);
    b.upload(in.b);
    partial.poison();
    dot_tree_any_block<<<blocks, threads, threads * sizeof(float)>>>(a.ptr, b.ptr, partial.ptr, n);
    CHECK_LAUNCH_SYNC();
    std::vector<float> p = partial.download();
    return sum_partials_on_cpu(p.data(), blocks);
}

TEST_F(Dot_SM, CheckerCatchesANonPowerOfTwoBlock) {
    for (Data data : {Data::Document, Data::Random}) {
        DotInputs in = make_dot_inputs(10000, data);
        long long depth_256 = 1 + ceil_div(10000, 4 * 256) + tree_levels(256);
        double right = run_any_block(in, 4, 256);
        EXPECT_TRUE(within_bound(right, in.ref, depth_256)) << explain(right, in.ref, depth_256);
        long long depth_192 = 1 + ceil_div(10000, 4 * 192) + tree_levels(192);
        double wrong = run_any_block(in, 4, 192);
        EXPECT_FALSE(within_bound(wrong, in.ref, depth_192)) << explain(wrong, in.ref, depth_192);
        if (data == Data::Document) {
            EXPECT_LT(wrong, in.ref.sum);  // values were dropped, all of them positive
        }
    }
}

// With data of both signs the check must still fail every wrong answer: 0, the
// sign flipped, and any one block's partial sum left out, on the original's
// 32 blocks and on a grid that fills the GPU. (Before the exact random data,
// the bound scaled by sum|a b| let every one of these pass at this size: at
// N = 2^24 it allowed 0.8 times the answer.)
TEST_F(Dot_SM, LargeSignedDataCheckerCatchesEachLostBlock) {
    const long long n = (1 << 24) + 3;
    DotInputs in = make_dot_inputs(n, Data::Random);
    for (long long blocks :
         {(long long)original_blocks(n), (long long)blocks_to_fill_gpu(dot, THREADS_PER_BLOCK)}) {
        std::vector<float> p = run_dot_sm_partials(in, n, blocks);
        double sum = sum_partials_on_cpu(p.data(), blocks);
        long long depth = dot_rounding_depth(n, blocks);
        ASSERT_TRUE(within_bound(sum, in.ref, depth))
            << blocks << " blocks: " << explain(sum, in.ref, depth);
        EXPECT_FALSE(within_bound(0.0, in.ref, depth));
        EXPECT_FALSE(within_bound(-sum, in.ref, depth));
        // (A block whose terms add up to exactly 0 can be left out without
        // changing the answer; see dot_reference.h for how rarely that happens.)
        long long nonzero = 0, caught = 0;
        for (long long b = 0; b < blocks; b++) {
            nonzero += p[b] != 0;
            caught += p[b] != 0 && !within_bound(sum - p[b], in.ref, depth);
        }
        EXPECT_EQ(caught, nonzero) << "of " << blocks << " blocks, each left out in turn";
    }
}
