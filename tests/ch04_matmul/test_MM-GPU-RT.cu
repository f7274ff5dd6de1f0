// Tests of MM-GPU-RT: the register-tiled kernel. Its block tiles (128 x 128,
// or 64 x 128 at the Widths where the large ones would leave multiprocessors
// idle), 8-wide k slices and float4 loads each have an edge case: Widths
// below, at and just past them, and Widths that are not multiples of 4.
#include "../../ch04_matmul/MM-GPU-RT.cu"
#include "matmul_check.h"

class MM_GPU_RT : public GpuTest {};

static void rt(const float* M, const float* N, float* P, int W) {
    launch_matmul_rt(M, N, P, W);
}

TEST_F(MM_GPU_RT, Width1) {
    EXPECT_PRODUCT_OK(1, rt);
}
TEST_F(MM_GPU_RT, Width2) {
    EXPECT_PRODUCT_OK(2, rt);
}
TEST_F(MM_GPU_RT, Width4) {
    EXPECT_PRODUCT_OK(4, rt);
}
TEST_F(MM_GPU_RT, Width7) {
    EXPECT_PRODUCT_OK(7, rt);
}
TEST_F(MM_GPU_RT, Width8) {
    EXPECT_PRODUCT_OK(8, rt);
}
TEST_F(MM_GPU_RT, Width31) {
    EXPECT_PRODUCT_OK(31, rt);
}
TEST_F(MM_GPU_RT, Width32) {
    EXPECT_PRODUCT_OK(32, rt);
}
TEST_F(MM_GPU_RT, Width33) {
    EXPECT_PRODUCT_OK(33, rt);
}
TEST_F(MM_GPU_RT, Width127) {
    EXPECT_PRODUCT_OK(127, rt);
}
TEST_F(MM_GPU_RT, Width128) {
    EXPECT_PRODUCT_OK(128, rt);
}
TEST_F(MM_GPU_RT, Width129) {
    EXPECT_PRODUCT_OK(129, rt);
}
TEST_F(MM_GPU_RT, Width130) {
    EXPECT_PRODUCT_OK(130, rt);
}
TEST_F(MM_GPU_RT, Width260) {
    EXPECT_PRODUCT_OK(260, rt);
}
TEST_F(MM_GPU_RT, LargeWidth1000) {
    EXPECT_PRODUCT_OK(1000, rt);
}
TEST_F(MM_GPU_RT, LargeWidth1024) {
    EXPECT_PRODUCT_OK(1024, rt);
}
TEST_F(MM_GPU_RT, LargeWidth1025) {
    EXPECT_PRODUCT_OK(1025, rt);
}
TEST_F(MM_GPU_RT, LargeWidth1026) {
    EXPECT_PRODUCT_OK(1026, rt);
}

// Exact, on data of both signs: any missing or extra term shows, at any Width.
// 8191 is not a multiple of 4 (no float4), 8193 leaves a slice of one term.
TEST_F(MM_GPU_RT, ExactWidth7) {
    EXPECT_PRODUCT_EXACT(7, rt);
}
TEST_F(MM_GPU_RT, ExactWidth130) {
    EXPECT_PRODUCT_EXACT(130, rt);
}
TEST_F(MM_GPU_RT, ExactWidth1023) {
    EXPECT_PRODUCT_EXACT(1023, rt);
}
TEST_F(MM_GPU_RT, LargeExactWidth8191) {
    EXPECT_PRODUCT_EXACT(8191, rt);
}
TEST_F(MM_GPU_RT, LargeExactWidth8192) {
    EXPECT_PRODUCT_EXACT(8192, rt);
}
TEST_F(MM_GPU_RT, LargeExactWidth8193) {
    EXPECT_PRODUCT_EXACT(8193, rt);
}

// The large tile (128 x 128) at every Width, whatever the launch would pick
// on this GPU (it picks the small one below about 2 x 128 x sqrt(SMs)).
static void rt_large(const float* M, const float* N, float* P, int W) {
    launch_matmul_rt_tile<128, 128>(M, N, P, W);
}
// The small tile, also past the Widths where the launch picks it.
static void rt_small(const float* M, const float* N, float* P, int W) {
    launch_matmul_rt_tile<RT_SMALL_BM, RT_SMALL_BN>(M, N, P, W);
}

TEST_F(MM_GPU_RT, Tile128Width1) {
    EXPECT_PRODUCT_OK(1, rt_large);
}
TEST_F(MM_GPU_RT, Tile128Width33) {
    EXPECT_PRODUCT_OK(33, rt_large);
}
TEST_F(MM_GPU_RT, Tile128Width129) {
    EXPECT_PRODUCT_OK(129, rt_large);
}
TEST_F(MM_GPU_RT, Tile128Width130) {
    EXPECT_PRODUCT_OK(130, rt_large);
}
TEST_F(MM_GPU_RT, Tile128Width260) {
    EXPECT_PRODUCT_OK(260, rt_large);
}
TEST_F(MM_GPU_RT, Tile128ExactWidth1023) {
    EXPECT_PRODUCT_EXACT(1023, rt_large);
}
TEST_F(MM_GPU_RT, Tile64Width7) {
    EXPECT_PRODUCT_OK(7, rt_small);
}
TEST_F(MM_GPU_RT, Tile64Width65) {
    EXPECT_PRODUCT_OK(65, rt_small);
}
TEST_F(MM_GPU_RT, Tile64Width260) {
    EXPECT_PRODUCT_OK(260, rt_small);
}
TEST_F(MM_GPU_RT, Tile64ExactWidth1023) {
    EXPECT_PRODUCT_EXACT(1023, rt_small);
}
TEST_F(MM_GPU_RT, LargeTile64ExactWidth4097) {
    EXPECT_PRODUCT_EXACT(4097, rt_small);
}

// The checker must be able to fail: a grid one block short in x leaves
// the last 128 columns of P unwritten.
TEST_F(MM_GPU_RT, CheckerCatchesAMissingColumnOfBlocks) {
    auto short_grid = [](const float* M, const float* N, float* P, int W) {
        matmul_rt<128, 128>
            <<<dim3(ceil_div(W, 128) - 1, ceil_div(W, 128)), threads_rt(128, 128)>>>(M, N, P, W);
        CHECK_LAUNCH();
    };
    double error = matmul_error(256, short_grid);
    EXPECT_FALSE(error <= tolerance(256)) << "error " << error;
}
