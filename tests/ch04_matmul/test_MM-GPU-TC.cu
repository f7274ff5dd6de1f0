// Tests of MM-GPU-TC: the Tensor Core kernel, in TF32 and in BF16, run as the
// program runs it (M and N converted once, then multiplied). Its tiles are
// 128 x 128 with slices of 32; 16 x 16 fragments; 16-byte copies only when
// W is a multiple of 4 (TF32) or 8 (BF16). Widths below, at and past each,
// both precisions, poisoned outputs (matmul_check.h). Skipped on GPUs before
// compute capability 8.0, which have no TF32 or BF16 Tensor Cores.
#include "../../ch04_matmul/MM-GPU-TC.cu"
#include "matmul_check.h"

class MM_GPU_TC : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        int device, major;
        HANDLE_ERROR(cudaGetDevice(&device));
        HANDLE_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        if (major < 8) GTEST_SKIP() << "no TF32/BF16 Tensor Cores before compute capability 8.0";
    }
};

// M and N (device, float) converted to the precision, then multiplied into P.
static void tc(Precision precision, const float* M, const float* N, float* P, int W) {
    size_t n = (size_t)W * W;
    DeviceArray<unsigned char> A(input_bytes(precision, W)), B(input_bytes(precision, W));
    convert_inputs(precision, M, A.ptr, n);
    convert_inputs(precision, N, B.ptr, n);
    launch_matmul_tc(precision, A.ptr, B.ptr, P, W);
    HANDLE_ERROR(cudaDeviceSynchronize());
}
static void tf32(const float* M, const float* N, float* P, int W) {
    tc(Precision::tf32, M, N, P, W);
}
static void bf16(const float* M, const float* N, float* P, int W) {
    tc(Precision::bf16, M, N, P, W);
}

// The tolerance on uniform data in [-1, 1] (matmul_error), against the double
// product of the UNROUNDED inputs, in the relative Frobenius norm over all
// elements. Rounding each input moves it by at most u of its size (u = 2^-11
// for TF32, 2^-8 for BF16) and on average by half that, in either direction;
// the 2W such errors in each element add up like a random walk, to about
// 0.6 u of the element's size at any Width (tests/ch04_matmul/test_matrix.cpp
// measures it on the CPU). We allow 2 u. The FP32 sums add about sqrt(W) x
// 2^-24, a hundred times less. An element wrong by its own size moves the
// norm by about 1/W: seen in TF32 up to W = 1000 or so; the exact tests
// below see it at any Width.
static double tc_tolerance(Precision precision) {
    return 2 * unit_roundoff(precision);
}

#define EXPECT_TC_PRODUCT_OK(W, precision)                                                     \
    do {                                                                                       \
        double error_ = matmul_error((W), precision == Precision::tf32 ? tf32 : bf16);         \
        EXPECT_TRUE(error_ <= tc_tolerance(precision))                                         \
            << precision_name(precision) << ", Width " << (W) << ": relative error " << error_ \
            << " (tolerance " << tc_tolerance(precision)                                       \
            << "; NaN: an element was never written, inf: a write past the end of P)";         \
    } while (0)

TEST_F(MM_GPU_TC, TF32Width1) {
    EXPECT_TC_PRODUCT_OK(1, Precision::tf32);
}
TEST_F(MM_GPU_TC, TF32Width17) {
    EXPECT_TC_PRODUCT_OK(17, Precision::tf32);
}
TEST_F(MM_GPU_TC, TF32Width32) {
    EXPECT_TC_PRODUCT_OK(32, Precision::tf32);
}
TEST_F(MM_GPU_TC, TF32Width100) {
    EXPECT_TC_PRODUCT_OK(100, Precision::tf32);
}
TEST_F(MM_GPU_TC, TF32Width128) {
    EXPECT_TC_PRODUCT_OK(128, Precision::tf32);
}
TEST_F(MM_GPU_TC, TF32Width129) {
    EXPECT_TC_PRODUCT_OK(129, Precision::tf32);
}
TEST_F(MM_GPU_TC, TF32Width300) {
    EXPECT_TC_PRODUCT_OK(300, Precision::tf32);
}
TEST_F(MM_GPU_TC, LargeTF32Width1000) {
    EXPECT_TC_PRODUCT_OK(1000, Precision::tf32);
}
TEST_F(MM_GPU_TC, LargeTF32Width1025) {
    EXPECT_TC_PRODUCT_OK(1025, Precision::tf32);
}
TEST_F(MM_GPU_TC, BF16Width1) {
    EXPECT_TC_PRODUCT_OK(1, Precision::bf16);
}
TEST_F(MM_GPU_TC, BF16Width17) {
    EXPECT_TC_PRODUCT_OK(17, Precision::bf16);
}
TEST_F(MM_GPU_TC, BF16Width100) {
    EXPECT_TC_PRODUCT_OK(100, Precision::bf16);
}
TEST_F(MM_GPU_TC, BF16Width128) {
    EXPECT_TC_PRODUCT_OK(128, Precision::bf16);
}
TEST_F(MM_GPU_TC, BF16Width129) {
    EXPECT_TC_PRODUCT_OK(129, Precision::bf16);
}
TEST_F(MM_GPU_TC, BF16Width136) {
    EXPECT_TC_PRODUCT_OK(136, Precision::bf16);
}
TEST_F(MM_GPU_TC, LargeBF16Width1000) {
    EXPECT_TC_PRODUCT_OK(1000, Precision::bf16);
}
TEST_F(MM_GPU_TC, LargeBF16Width1024) {
    EXPECT_TC_PRODUCT_OK(1024, Precision::bf16);
}

// The error is the inputs' rounding, as the handout says: near 0.6 u, not 0
// (the inputs were rounded) and not far beyond (nothing else went wrong).
TEST_F(MM_GPU_TC, TheErrorIsTheInputRounding) {
    for (Precision p : {Precision::tf32, Precision::bf16}) {
        double u = unit_roundoff(p), error = matmul_error(256, p == Precision::tf32 ? tf32 : bf16);
        EXPECT_GT(error, 0.25 * u) << precision_name(p);
        EXPECT_LT(error, 1.0 * u) << precision_name(p);
    }
}

// Exact, on data of the 1/8 grid (3 significant bits: unchanged by TF32 and
// BF16): any missing, extra or misplaced term shows, at any Width.
// 1000: W % 8 == 0 (16-byte copies in both); 1001, 4095: element by element.
// (*Large* tests are left out of the sanitizer runs: slow there.)
TEST_F(MM_GPU_TC, ExactTF32Width17) {
    EXPECT_PRODUCT_EXACT(17, tf32);
}
TEST_F(MM_GPU_TC, ExactBF16Width17) {
    EXPECT_PRODUCT_EXACT(17, bf16);
}
TEST_F(MM_GPU_TC, LargeExactTF32Width1000) {
    EXPECT_PRODUCT_EXACT(1000, tf32);
}
TEST_F(MM_GPU_TC, LargeExactBF16Width1000) {
    EXPECT_PRODUCT_EXACT(1000, bf16);
}
TEST_F(MM_GPU_TC, ExactTF32Width1001) {
    EXPECT_PRODUCT_EXACT(1001, tf32);
}
TEST_F(MM_GPU_TC, ExactBF16Width1001) {
    EXPECT_PRODUCT_EXACT(1001, bf16);
}
TEST_F(MM_GPU_TC, LargeExactTF32Width4095) {
    EXPECT_PRODUCT_EXACT(4095, tf32);
}
TEST_F(MM_GPU_TC, LargeExactBF16Width4096) {
    EXPECT_PRODUCT_EXACT(4096, bf16);
}
TEST_F(MM_GPU_TC, LargeExactBF16Width4100) {
    EXPECT_PRODUCT_EXACT(4100, bf16);
}

// The checkers must be able to fail.
// 1. A grid one block short in x: the last 128 columns of P keep the poison.
TEST_F(MM_GPU_TC, CheckerCatchesAMissingColumnOfBlocks) {
    auto short_grid = [](const float* M, const float* N, float* P, int W) {
        DeviceArray<float> A((size_t)W * W), B((size_t)W * W);
        convert_inputs(Precision::tf32, M, A.ptr, (size_t)W * W);
        convert_inputs(Precision::tf32, N, B.ptr, (size_t)W * W);
        size_t shared = shared_bytes_tc<float>();
        HANDLE_ERROR(cudaFuncSetAttribute(
            matmul_tc<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
        dim3 blocks(ceil_div(W, BN) - 1, ceil_div(W, BM));
        matmul_tc<float><<<blocks, THREADS_PER_BLOCK, shared>>>(A.ptr, B.ptr, P, W);
        CHECK_LAUNCH();
        HANDLE_ERROR(cudaDeviceSynchronize());
    };
    double error = matmul_error(256, short_grid);
    EXPECT_FALSE(error <= tc_tolerance(Precision::tf32)) << "error " << error;
}
// 2. BF16's error where TF32 was asked for (a precision mixed up): 8 times
//    TF32's, above its tolerance.
TEST_F(MM_GPU_TC, CheckerCatchesBF16ErrorsInATF32Result) {
    double error = matmul_error(256, bf16);
    EXPECT_FALSE(error <= tc_tolerance(Precision::tf32)) << "error " << error;
}
// 3. One element wrong (negated) in a correct product: the exact check on the
//    1/8 grid finds it, at a Width far past where the norm could.
TEST_F(MM_GPU_TC, CheckerCatchesOneWrongElement) {
    auto one_wrong = [](const float* M, const float* N, float* P, int W) {
        bf16(M, N, P, W);
        float value;
        size_t i = (size_t)(W / 2) * W + W / 3;
        HANDLE_ERROR(cudaMemcpy(&value, P + i, sizeof value, cudaMemcpyDeviceToHost));
        value = -value;
        HANDLE_ERROR(cudaMemcpy(P + i, &value, sizeof value, cudaMemcpyHostToDevice));
    };
    CheckResult check = exact_check(1001, one_wrong);
    EXPECT_FALSE(check.passed()) << describe(check);
}
