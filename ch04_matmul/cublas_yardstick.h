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
