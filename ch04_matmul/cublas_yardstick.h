// ch04_matmul/cublas_yardstick.h -- "how far am I from the library?"
//
// The GPU kernels of this chapter print their speed as a fraction of cuBLAS
// at the same Width when run with --compare-cublas. This file times that
// yardstick: the same cublasSgemm call that MM-cuBLAS.cu explains step by
// step (strict FP32, and the row-major/column-major swap), made through
// cublasGemmEx so that the Tensor Core kernel gets its yardstick from the same
// call as MM-cuBLAS --precision tf32|bf16.
// Programs that include it need -lcublas on their nvcc line.
#pragma once

#include <cmath>
#include <cstdio>
#include "../common/handle_cublas.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "tensor_inputs.h"

// Kernel-only time of cuBLAS computing P = A x B (row-major, W x W) into the
// device buffer dev_P, after a warm-up; the median of `repeats` launches.
// FP32: cublasSgemm in strict FP32 (no TF32). TF32 and BF16: cublasGemmEx on
// the inputs the Tensor Core kernel multiplies -- A and B already rounded to
// TF32, or converted to BF16 -- with FP32 sums, in the default math mode that
// lets cuBLAS use its Tensor Core kernels.
inline TimingStats time_cublas_yardstick(Precision precision, const void* dev_A, const void* dev_B,
                                         float* dev_P, int W, int repeats) {
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    if (precision == Precision::fp32)
        HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));  // true FP32, no TF32
    cudaDataType input = precision == Precision::bf16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasComputeType_t compute =
        precision == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float one = 1.0f, zero = 0.0f;
    // Column-major P^T = B^T x A^T is row-major P = A x B: pass B first.
    TimingStats t = time_gpu(
        [&] {
            HANDLE_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, W, W, W, &one, dev_B,
                                       input, W, dev_A, input, W, &zero, dev_P, CUDA_R_32F, W,
                                       compute, CUBLAS_GEMM_DEFAULT));
        },
        repeats);
    HANDLE_CUBLAS(cublasDestroy(handle));
    return t;
}

// "--compare-cublas": times the yardstick at this Width and precision, prints
// it and the kernel's share of it, and adds cublas_gflops and ratio_to_cublas
// to the record (null without the option). dev_P is overwritten, so call it
// after the kernel's own result has been checked.
inline void report_cublas_yardstick(Report& report, bool compare, const void* dev_A,
                                    const void* dev_B, float* dev_P, int W,
                                    const TimingStats& kernel,
                                    Precision precision = Precision::fp32) {
    double flops = 2.0 * W * (double)W * W;
    double kernel_gflops = flops / (kernel.median_ms * 1e6), cublas_gflops = NAN;
    if (compare) {
        TimingStats t = time_cublas_yardstick(precision, dev_A, dev_B, dev_P, W, report.repeats());
        cublas_gflops = flops / (t.median_ms * 1e6);
        bool fp32 = precision == Precision::fp32;  // the Tensor Cores are not FP32 lanes
        char label[64];
        std::snprintf(label, sizeof label, "cuBLAS %s (yardstick)",
                      fp32 ? "SGEMM" : precision_name(precision));
        print_timing(label, t, NAN, cublas_gflops,
                     fp32 ? 100 * cublas_gflops / report.device().peak_fp32_gflops() : NAN,
                     fp32 ? "fp32" : nullptr);
        std::printf("  the kernel runs at %.1f%% of cuBLAS\n", 100 * kernel_gflops / cublas_gflops);
    }
    report.extra("cublas_gflops", cublas_gflops);
    report.extra("ratio_to_cublas", kernel_gflops / cublas_gflops);
}
