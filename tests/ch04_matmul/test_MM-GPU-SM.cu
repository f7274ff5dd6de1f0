// Tests of MM-GPU-SM: the tiled kernel at Widths around the tile size.
#include "../../ch04_matmul/MM-GPU-SM.cu"
#include "matmul_check.h"

class MM_GPU_SM : public GpuTest {};

static void sm(const float* M, const float* N, float* P, int W) { matmul_sm_launch(M, N, P, W); }

TEST_F(MM_GPU_SM, Width1) { EXPECT_PRODUCT_OK(1, sm); }
TEST_F(MM_GPU_SM, Width31) { EXPECT_PRODUCT_OK(31, sm); }
TEST_F(MM_GPU_SM, Width32) { EXPECT_PRODUCT_OK(32, sm); }
TEST_F(MM_GPU_SM, Width33) { EXPECT_PRODUCT_OK(33, sm); }
TEST_F(MM_GPU_SM, Width64) { EXPECT_PRODUCT_OK(64, sm); }
TEST_F(MM_GPU_SM, Width95) { EXPECT_PRODUCT_OK(95, sm); }
TEST_F(MM_GPU_SM, LargeWidth1000) { EXPECT_PRODUCT_OK(1000, sm); }
TEST_F(MM_GPU_SM, LargeWidth1024) { EXPECT_PRODUCT_OK(1024, sm); }
TEST_F(MM_GPU_SM, LargeWidth1025) { EXPECT_PRODUCT_OK(1025, sm); }

// Exact, on data of both signs: any missing or extra term shows, at any Width.
// 8193 = 256 x 32 + 1: the document's Width / TILE phases would drop one term.
TEST_F(MM_GPU_SM, ExactWidth33) { EXPECT_PRODUCT_EXACT(33, sm); }
TEST_F(MM_GPU_SM, ExactWidth1000) { EXPECT_PRODUCT_EXACT(1000, sm); }
TEST_F(MM_GPU_SM, LargeExactWidth8192) { EXPECT_PRODUCT_EXACT(8192, sm); }
TEST_F(MM_GPU_SM, LargeExactWidth8193) { EXPECT_PRODUCT_EXACT(8193, sm); }

// The document's kernel: Width/TILE phases, a Width/TILE grid, no checks.
__global__ void document_matmul_sm(const float* M, const float* N, float* P, int Width) {
    __shared__ float Ms[TILE][TILE];
    __shared__ float Ns[TILE][TILE];
    int x = threadIdx.x + blockIdx.x * TILE;
    int y = threadIdx.y + blockIdx.y * TILE;
    float sum = 0;
    for (int m = 0; m < Width / TILE; m++) {
        Ms[threadIdx.y][threadIdx.x] = M[y * Width + (m * TILE + threadIdx.x)];
        Ns[threadIdx.y][threadIdx.x] = N[(m * TILE + threadIdx.y) * Width + x];
        __syncthreads();
        for (int k = 0; k < TILE; k++) sum += Ms[threadIdx.y][k] * Ns[k][threadIdx.x];
        __syncthreads();
    }
    P[y * Width + x] = sum;
}

// The checker must be able to fail: at Width 1000 the document's kernel
// leaves the edge unwritten (its grid is 31 x 31 tiles of 32), and reads
// nothing outside the matrices while doing so; at 1024 it is right.
TEST_F(MM_GPU_SM, CheckerCatchesTheDocumentsKernelAtWidth1000) {
    auto document = [](const float* M, const float* N, float* P, int W) {
        document_matmul_sm<<<dim3(W / TILE, W / TILE), dim3(TILE, TILE)>>>(M, N, P, W);
        CHECK_LAUNCH();
    };
    double error = matmul_error(1000, document);
    EXPECT_FALSE(error <= tolerance(1000)) << "error " << error;
    EXPECT_TRUE(matmul_error(1024, document) <= tolerance(1024));
}

// ... and the exact check sees it at a large Width: at 8193 the document's
// kernel leaves the last row and column unwritten and drops one term of
// every other element.
TEST_F(MM_GPU_SM, LargeCheckerCatchesTheDocumentsKernelAtWidth8193) {
    auto document = [](const float* M, const float* N, float* P, int W) {
        document_matmul_sm<<<dim3(W / TILE, W / TILE), dim3(TILE, TILE)>>>(M, N, P, W);
        CHECK_LAUNCH();
    };
    CheckResult check = exact_check(8193, document);
    EXPECT_FALSE(check.passed());
    EXPECT_EQ(check.rows_wrong, 8193) << describe(check);
    EXPECT_EQ(check.wrong, check.checked) << describe(check);
}
