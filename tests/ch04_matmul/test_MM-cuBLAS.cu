// Tests of MM-cuBLAS: the row-major/column-major swap gives P = M x N (a
// wrong order of the operands would give N x M, and the tests would see it).
#include "../../ch04_matmul/MM-cuBLAS.cu"
#include "matmul_check.h"

class MM_cuBLAS : public GpuTest {};

static void with_cublas(const float* M, const float* N, float* P, int W) {
    cublasHandle_t handle = make_strict_fp32_handle();
    launch_matmul_cublas(handle, M, N, P, W);
    HANDLE_ERROR(cudaDeviceSynchronize());
    HANDLE_CUBLAS(cublasDestroy(handle));
}

TEST_F(MM_cuBLAS, Width1) {
    EXPECT_PRODUCT_OK(1, with_cublas);
}
TEST_F(MM_cuBLAS, Width31) {
    EXPECT_PRODUCT_OK(31, with_cublas);
}
TEST_F(MM_cuBLAS, Width32) {
    EXPECT_PRODUCT_OK(32, with_cublas);
}
TEST_F(MM_cuBLAS, Width33) {
    EXPECT_PRODUCT_OK(33, with_cublas);
}
TEST_F(MM_cuBLAS, LargeWidth1000) {
    EXPECT_PRODUCT_OK(1000, with_cublas);
}
TEST_F(MM_cuBLAS, LargeWidth1024) {
    EXPECT_PRODUCT_OK(1024, with_cublas);
}
TEST_F(MM_cuBLAS, LargeWidth1025) {
    EXPECT_PRODUCT_OK(1025, with_cublas);
}
TEST_F(MM_cuBLAS, LargeExactWidth8193) {
    EXPECT_PRODUCT_EXACT(8193, with_cublas);
}

// The checker must be able to fail: the operands in the naive order
// (M first, as a row-major programmer would write it) compute N x M.
TEST_F(MM_cuBLAS, CheckerCatchesTheOperandsInTheWrongOrder) {
    auto swapped = [](const float* M, const float* N, float* P, int W) { with_cublas(N, M, P, W); };
    double error = matmul_error(64, swapped);
    EXPECT_FALSE(error <= tolerance(64)) << "error " << error;
}
