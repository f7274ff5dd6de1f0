// Tests of MM-GPU-WGMMA: each of its four steps, in BF16 and in TF32, run as the program
// runs it (M and N converted and padded once, N transposed, then multiplied). Its tiles
// are 128 x 256 with slices of 128 bytes (64 BF16, 32 TF32); rows are padded to 16 bytes
// when W is not a multiple of 8 (BF16) or 4 (TF32). Widths below, at and past each, both
// precisions, poisoned outputs (matmul_check.h). Skipped, with the reason, on a GPU that
// is not compute capability 9.0, or from a build without sm_90a code.
#include "../../ch04_matmul/MM-GPU-WGMMA.cu"
#include "matmul_check.h"

class MM_GPU_WGMMA : public GpuTest, public ::testing::WithParamInterface<int> {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        DeviceInfo dev = query_device();
        if (dev.cc_major != 9 || dev.cc_minor != 0)
            GTEST_SKIP() << "wgmma needs compute capability 9.0; this GPU is "
                         << dev.compute_capability();
        if (!wgmma_build_present()) GTEST_SKIP() << "built without sm_90a code";
    }
};

// M and N (device, float) prepared as the program does, then multiplied by one step.
static void wgmma(int step, Precision precision, const float* M, const float* N, float* P, int W) {
    WgmmaInputs in = prepare_wgmma_inputs(precision, M, N, W);
    launch_matmul_wgmma(step, in, P);
    HANDLE_ERROR(cudaDeviceSynchronize());
    free_wgmma_inputs(in);
}
static auto step_launch(int step, Precision precision) {
    return [step, precision](const float* M, const float* N, float* P, int W) {
        wgmma(step, precision, M, N, P, W);
    };
}

// On uniform data in [-1, 1], against the double product of the UNROUNDED inputs, in the
// relative Frobenius norm: the rounding of the inputs gives about 0.6 u at any Width
// (test_MM-GPU-TC.cu says why); we allow 2 u (u = 2^-8 BF16, 2^-11 TF32).
static double wgmma_tolerance(Precision precision) {
    return 2 * unit_roundoff(precision);
}

#define EXPECT_WGMMA_PRODUCT_OK(W, precision)                                                  \
    do {                                                                                       \
        double error_ = matmul_error((W), step_launch(GetParam(), precision));                 \
        EXPECT_TRUE(error_ <= wgmma_tolerance(precision))                                      \
            << "step " << GetParam() << ", " << precision_name(precision) << ", Width " << (W) \
            << ": relative error " << error_ << " (tolerance " << wgmma_tolerance(precision)   \
            << "; NaN: an element was never written, inf: a write past the end of P)";         \
    } while (0)

#define EXPECT_WGMMA_EXACT(W, precision)                                                           \
    do {                                                                                           \
        CheckResult check_ = exact_check((W), step_launch(GetParam(), precision));                 \
        EXPECT_TRUE(check_.exact);                                                                 \
        EXPECT_TRUE(check_.passed()) << "step " << GetParam() << ", " << precision_name(precision) \
                                     << ", Width " << (W) << ": " << describe(check_);             \
    } while (0)

// Width 1: one element, every box almost all zeros. 17: smaller than a slice, padded.
// 100, 129: partial tiles and slices (129: padded in both). 256: whole tiles in columns.
TEST_P(MM_GPU_WGMMA, BF16Width1) {
    EXPECT_WGMMA_PRODUCT_OK(1, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, TF32Width1) {
    EXPECT_WGMMA_PRODUCT_OK(1, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, BF16Width17) {
    EXPECT_WGMMA_PRODUCT_OK(17, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, TF32Width17) {
    EXPECT_WGMMA_PRODUCT_OK(17, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, BF16Width100) {
    EXPECT_WGMMA_PRODUCT_OK(100, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, TF32Width129) {
    EXPECT_WGMMA_PRODUCT_OK(129, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, BF16Width256) {
    EXPECT_WGMMA_PRODUCT_OK(256, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, LargeTF32Width1025) {
    EXPECT_WGMMA_PRODUCT_OK(1025, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, LargeBF16Width1000) {
    EXPECT_WGMMA_PRODUCT_OK(1000, Precision::bf16);
}

// Exact, on data of the 1/8 grid (unchanged by TF32 and BF16): any missing, extra or
// misplaced term shows, at any Width. 257 and 301: a partial slice and partial tiles in
// both directions, rows padded; 384: whole slices, 3 row tiles (step 4: a cluster with a
// block past the matrix); 4095, 4100, 8200: large, padded, partial.
TEST_P(MM_GPU_WGMMA, ExactBF16Width257) {
    EXPECT_WGMMA_EXACT(257, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, ExactTF32Width301) {
    EXPECT_WGMMA_EXACT(301, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, ExactBF16Width384) {
    EXPECT_WGMMA_EXACT(384, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, ExactTF32Width384) {
    EXPECT_WGMMA_EXACT(384, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, LargeExactBF16Width4100) {
    EXPECT_WGMMA_EXACT(4100, Precision::bf16);
}
TEST_P(MM_GPU_WGMMA, LargeExactTF32Width4095) {
    EXPECT_WGMMA_EXACT(4095, Precision::tf32);
}
TEST_P(MM_GPU_WGMMA, LargeExactBF16Width8200) {
    EXPECT_WGMMA_EXACT(8200, Precision::bf16);
}

// The error is the inputs' rounding: near 0.6 u, not 0 (the inputs were rounded) and not
// far beyond (nothing else went wrong).
TEST_P(MM_GPU_WGMMA, TheErrorIsTheInputRounding) {
    for (Precision p : {Precision::tf32, Precision::bf16}) {
        double u = unit_roundoff(p), error = matmul_error(256, step_launch(GetParam(), p));
        EXPECT_GT(error, 0.25 * u) << precision_name(p);
        EXPECT_LT(error, 1.0 * u) << precision_name(p);
    }
}

INSTANTIATE_TEST_SUITE_P(Steps, MM_GPU_WGMMA, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return "Step" + std::to_string(info.param);
                         });

// The checkers must be able to fail.
class MM_GPU_WGMMA_Checker : public MM_GPU_WGMMA {};

// 1. A grid one tile short in the rows: the last rows of P keep the poison.
TEST_F(MM_GPU_WGMMA_Checker, CatchesAMissingRowOfTiles) {
    auto short_grid = [](const float* M, const float* N, float* P, int W) {
        WgmmaInputs in = prepare_wgmma_inputs(Precision::bf16, M, N, W);
        int shared = STAGE_BYTES + 1024;
        HANDLE_ERROR(cudaFuncSetAttribute(matmul_wgmma_stages<__nv_bfloat16, 1>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
        dim3 blocks((unsigned)ceil_div(W, BM) - 1, (unsigned)ceil_div(W, BN));
        matmul_wgmma_stages<__nv_bfloat16, 1>
            <<<blocks, CONSUMERS * WARPGROUP, shared>>>(in.map_a, in.map_b, P, W);
        CHECK_LAUNCH();
        HANDLE_ERROR(cudaDeviceSynchronize());
        free_wgmma_inputs(in);
    };
    CheckResult check = exact_check(300, short_grid);
    EXPECT_FALSE(check.passed()) << describe(check);
}
// 2. BF16's error where TF32 was asked for (a precision mixed up): 8 times TF32's.
TEST_F(MM_GPU_WGMMA_Checker, CatchesBF16ErrorsInATF32Result) {
    double error = matmul_error(256, step_launch(4, Precision::bf16));
    EXPECT_FALSE(error <= wgmma_tolerance(Precision::tf32)) << "error " << error;
}
// 3. One element wrong (negated) in a correct product: the exact check finds it.
TEST_F(MM_GPU_WGMMA_Checker, CatchesOneWrongElement) {
    auto one_wrong = [](const float* M, const float* N, float* P, int W) {
        wgmma(4, Precision::bf16, M, N, P, W);
        float value;
        size_t i = (size_t)(W / 2) * W + W / 3;
        HANDLE_ERROR(cudaMemcpy(&value, P + i, sizeof value, cudaMemcpyDeviceToHost));
        value = -value;
        HANDLE_ERROR(cudaMemcpy(P + i, &value, sizeof value, cudaMemcpyHostToDevice));
    };
    CheckResult check = exact_check(1001, one_wrong);
    EXPECT_FALSE(check.passed()) << describe(check);
}
// 4. The padding is needed: rows of W = 129 BF16 values (258 bytes) described to the TMA
//    unit unpadded are refused by cuTensorMapEncodeTiled -- which is why the program
//    pads. (The driver says CUDA_ERROR_INVALID_VALUE; nothing is launched.)
TEST_F(MM_GPU_WGMMA_Checker, TheTensorMapRefusesUnpaddedRows) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    cudaDriverEntryPointQueryResult found;
    HANDLE_ERROR(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&encode, 12000,
                                                  cudaEnableDefault, &found));
    ASSERT_TRUE(found == cudaDriverEntryPointSuccess && encode);
    DeviceArray<__nv_bfloat16> A((size_t)129 * 129);
    CUtensorMap map;
    cuuint64_t size[2] = {129, 129}, row_stride[1] = {129 * sizeof(__nv_bfloat16)};
    cuuint32_t box[2] = {64, 128}, element_stride[2] = {1, 1};
    CUresult result =
        encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, A.ptr, size, row_stride, box,
               element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    EXPECT_NE(result, CUDA_SUCCESS);
    EXPECT_EQ(padded_pitch(Precision::bf16, 129), 136);
    EXPECT_EQ(padded_pitch(Precision::tf32, 129), 132);
}
