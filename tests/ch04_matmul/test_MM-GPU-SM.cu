// Tests of MM-GPU-SM: the tiled kernel at Widths around the tile size.
#include "../../ch04_matmul/MM-GPU-SM.cu"
#include "matmul_check.h"

class MM_GPU_SM : public GpuTest {};

static void sm(const float* M, const float* N, float* P, int W) {
    launch_matmul_sm(M, N, P, W);
}

TEST_F(MM_GPU_SM, Width1) {
    EXPECT_PRODUCT_OK(1, sm);
}
TEST_F(MM_GPU_SM, Width31) {
    EXPECT_PRODUCT_OK(31, sm);
}
TEST_F(MM_GPU_SM, Width32) {
    EXPECT_PRODUCT_OK(32, sm);
}
TEST_F(MM_GPU_SM, Width33) {
    EXPECT_PRODUCT_OK(33, sm);
}
TEST_F(MM_GPU_SM, Width64) {
    EXPECT_PRODUCT_OK(64, sm);
}
TEST_F(MM_GPU_SM, Width95) {
    EXPECT_PRODUCT_OK(95, sm);
}
TEST_F(MM_GPU_SM, LargeWidth1000) {
    EXPECT_PRODUCT_OK(1000, sm);
}
TEST_F(MM_GPU_SM, LargeWidth1024) {
    EXPECT_PRODUCT_OK(1024, sm);
}
TEST_F(MM_GPU_SM, LargeWidth1025) {
    EXPECT_PRODUCT_OK(1025, sm);
}

// Exact, on data of both signs: any missing or extra term shows, at any Width.
// 8193 = 256 x 32 + 1: the original's Width / TILE_WIDTH phases would drop one term.
TEST_F(MM_GPU_SM, ExactWidth33) {
    EXPECT_PRODUCT_EXACT(33, sm);
}
TEST_F(MM_GPU_SM, ExactWidth1000) {
    EXPECT_PRODUCT_EXACT(1000, sm);
}
TEST_F(MM_GPU_SM, LargeExactWidth8192) {
    EXPECT_PRODUCT_EXACT(8192, sm);
}
TEST_F(MM_GPU_SM, LargeExactWidth8193) {
    EXPECT_PRODUCT_EXACT(8193, sm);
}

// The original's kernel: Width/TILE_WIDTH phases, a Width/TILE_WIDTH grid, no checks.
__global__ void original_matmul_sm(const float* M, const float* N, float* P, int Width) {
    __shared__ float Ms[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Ns[TILE_WIDTH][TILE_WIDTH];
    int x = threadIdx.x + blockIdx.x * TILE_WIDTH;
    int y = threadIdx.y + blockIdx.y * TILE_WIDTH;
    float sum = 0;
    for (int m = 0; m < Width / TILE_WIDTH; m++) {
        Ms[threadIdx.y][threadIdx.x] = M[y * Width + (m * TILE_WIDTH + threadIdx.x)];
        Ns[threadIdx.y][threadIdx.x] = N[(m * TILE_WIDTH + threadIdx.y) * Width + x];
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; k++) sum += Ms[threadIdx.y][k] * Ns[k][threadIdx.x];
        __syncthreads();
    }
    P[y * Width + x] = sum;
}

// The checker must be able to fail: at Width 1000 the original's kernel
// leaves the edge unwritten (its grid is 31 x 31 tiles of 32), and reads
// nothing outside the matrices while doing so; at 1024 it is right.
TEST_F(MM_GPU_SM, CheckerCatchesTheOriginalsKernelAtWidth1000) {
    auto original = [](const float* M, const float* N, float* P, int W) {
        original_matmul_sm<<<dim3(W / TILE_WIDTH, W / TILE_WIDTH), dim3(TILE_WIDTH, TILE_WIDTH)>>>(
            M, N, P, W);
        CHECK_LAUNCH();
    };
    double error = matmul_error(1000, original);
    EXPECT_FALSE(error <= tolerance(1000)) << "error " << error;
    EXPECT_TRUE(matmul_error(1024, original) <= tolerance(1024));
}

// ... and the exact check sees it at a large Width: at 8193 the original's
// kernel leaves the last row and column unwritten and drops one term of
// every other element.
TEST_F(MM_GPU_SM, LargeCheckerCatchesTheOriginalsKernelAtWidth8193) {
    auto original = [](const float* M, const float* N, float* P, int W) {
        original_matmul_sm<<<dim3(W / TILE_WIDTH, W / TILE_WIDTH), dim3(TILE_WIDTH, TILE_WIDTH)>>>(
            M, N, P, W);
        CHECK_LAUNCH();
    };
    CheckResult check = exact_check(8193, original);
    EXPECT_FALSE(check.passed());
    EXPECT_EQ(check.rows_wrong, 8193) << describe(check);
    EXPECT_EQ(check.wrong, check.checked) << describe(check);
}
