// ch04_matmul/cublas_yardstick.h -- "how far am I from the library?"
//
// The programs of this chapter print their speed as a fraction of cuBLAS at
// the same Width when run with --compare-cublas. This file times that
// yardstick: the same cublasSgemm call that MM-cuBLAS.cu explains step by
// step (strict FP32, and the row-major/column-major swap). Programs that
// include it need -lcublas on their nvcc line.
#pragma once

#include <cstdio>
#include <cstdlib>
#include "../common/handle_cublas.h"
#include "../common/timer.h"


// Kernel-only time of cuBLAS computing P = M x N (row-major, W x W) into the
// device buffer dev_P, after a warm-up; the median of `repeats` launches.
inline TimingStats time_cublas_yardstick(const float* dev_M, const float* dev_N, float* dev_P, int W,
                                         int repeats) {
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));  // true FP32, no TF32
    const float one = 1.0f, zero = 0.0f;
    // Column-major P^T = N^T x M^T is row-major P = M x N: pass N first.
    TimingStats t = time_gpu([&] {
        HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, W, W, W, &one, dev_N, W, dev_M, W,
                                  &zero, dev_P, W));
    }, repeats);
    HANDLE_CUBLAS(cublasDestroy(handle));
    return t;
}

// "--compare-cublas": times the yardstick at this Width, prints it and the
// program's share of it, and returns cuBLAS's GFLOP/s. dev_P is overwritten,
// so call it after the program's own result has been checked.
inline double compare_with_cublas(const char* program, double program_gflops, const float* dev_M,
                                  const float* dev_N, float* dev_P, int W, int repeats, double peak_gflops) {
    TimingStats cublas = time_cublas_yardstick(dev_M, dev_N, dev_P, W, repeats);
    double cublas_gflops = 2.0 * W * (double)W * W / (cublas.median_ms * 1e6);
    std::printf("  %-28s median %9.3f ms (min %.3f, max %.3f)  %8.1f GFLOP/s = %4.1f%% of FP32 peak\n",
                "cuBLAS SGEMM (yardstick)", cublas.median_ms, cublas.min_ms, cublas.max_ms, cublas_gflops,
                100 * cublas_gflops / peak_gflops);
    std::printf("  %s runs at %.1f%% of cuBLAS\n", program, 100 * program_gflops / cublas_gflops);
    return cublas_gflops;
}
