// Tests of MM-GPU-GM: both kernels (sum in a register, sum in global memory)
// at Widths that are and are not multiples of the block, against double.
#include "../../ch04_matmul/MM-GPU-GM.cu"
#include "matmul_check.h"

class MM_GPU_GM : public GpuTest {};

static auto gm(int block, bool global_sum = false) {
    return [block, global_sum](const float* M, const float* N, float* P, int W) {
        launch_matmul_gm(M, N, P, W, block, global_sum);
    };
}

TEST_F(MM_GPU_GM, Width1) {
    EXPECT_PRODUCT_OK(1, gm(32));
}
TEST_F(MM_GPU_GM, Width31) {
    EXPECT_PRODUCT_OK(31, gm(32));
}
TEST_F(MM_GPU_GM, Width32) {
    EXPECT_PRODUCT_OK(32, gm(32));
}
TEST_F(MM_GPU_GM, Width33) {
    EXPECT_PRODUCT_OK(33, gm(32));
}
TEST_F(MM_GPU_GM, Width100Block7) {
    EXPECT_PRODUCT_OK(100, gm(7));
}
TEST_F(MM_GPU_GM, Width33Block1) {
    EXPECT_PRODUCT_OK(33, gm(1));
}
TEST_F(MM_GPU_GM, LargeWidth1000) {
    EXPECT_PRODUCT_OK(1000, gm(32));
}
TEST_F(MM_GPU_GM, LargeWidth1024) {
    EXPECT_PRODUCT_OK(1024, gm(32));
}
TEST_F(MM_GPU_GM, LargeWidth1025) {
    EXPECT_PRODUCT_OK(1025, gm(32));
}

TEST_F(MM_GPU_GM, GlobalSumWidth1) {
    EXPECT_PRODUCT_OK(1, gm(32, true));
}
TEST_F(MM_GPU_GM, GlobalSumWidth33) {
    EXPECT_PRODUCT_OK(33, gm(32, true));
}
TEST_F(MM_GPU_GM, GlobalSumLargeWidth1000) {
    EXPECT_PRODUCT_OK(1000, gm(32, true));
}

// Exact, on data of both signs: any missing or extra term shows, at any Width.
// 8193 = 256 x 32 + 1: the original's grid and loop would drop one term.
TEST_F(MM_GPU_GM, ExactWidth33) {
    EXPECT_PRODUCT_EXACT(33, gm(32));
}
TEST_F(MM_GPU_GM, ExactWidth1000) {
    EXPECT_PRODUCT_EXACT(1000, gm(32));
}
TEST_F(MM_GPU_GM, LargeExactWidth8192) {
    EXPECT_PRODUCT_EXACT(8192, gm(32));
}
TEST_F(MM_GPU_GM, LargeExactWidth8193) {
    EXPECT_PRODUCT_EXACT(8193, gm(32));
}
TEST_F(MM_GPU_GM, GlobalSumExactWidth33) {
    EXPECT_PRODUCT_EXACT(33, gm(32, true));
}
TEST_F(MM_GPU_GM, GlobalSumLargeExactWidth8192) {
    EXPECT_PRODUCT_EXACT(8192, gm(32, true));
}
TEST_F(MM_GPU_GM, GlobalSumLargeExactWidth8193) {
    EXPECT_PRODUCT_EXACT(8193, gm(32, true));
}

// The checker must be able to fail: the original's launch, a grid of
// Width/32 blocks with no bound checks, leaves the last 1000 - 31*32 = 8 rows
// and columns unwritten (still NaN) at Width 1000. It reads nothing outside
// the matrices, so it is safe under the sanitizers too.
TEST_F(MM_GPU_GM, CheckerCatchesTheOriginalsGridAtWidth1000) {
    auto original = [](const float* M, const float* N, float* P, int W) {
        matmul_gm<<<dim3(W / 32, W / 32), dim3(32, 32)>>>(M, N, P, W);
        CHECK_LAUNCH();
    };
    double error = matmul_error(1000, original);
    EXPECT_FALSE(error <= tolerance(1000)) << "error " << error;
    EXPECT_TRUE(matmul_error(1024, original) <= tolerance(1024));  // ...while 1024 hides the bug
}
