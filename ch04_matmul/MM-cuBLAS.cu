// MM-cuBLAS.cu -- the same product from NVIDIA's library: the chapter's yardstick.
//
// cuBLAS is the GPU version of BLAS, the decades-old standard interface for
// linear algebra. cublasSgemm computes C = alpha * op(A) x op(B) + beta * C
// in single precision; here alpha = 1, beta = 0, no transposes: P = M x N.
// Its kernels are written and tuned per GPU by NVIDIA, so its speed is the
// bar the hand-written kernels of this chapter are measured against.
//
// Two details matter:
//  * Strict FP32. On GPUs with tensor cores cuBLAS may be allowed to round the
//    inputs to TF32 (10-bit mantissa) for speed. CUBLAS_PEDANTIC_MATH forbids
//    that and any other shortcut, so it computes exactly what our kernels do.
//  * Row-major vs column-major. BLAS comes from Fortran and stores a matrix
//    column by column; our matrices are stored row by row. A row-major W x W
//    matrix read as column-major is its transpose. So we ask cuBLAS for
//    P^T = N^T x M^T in column-major terms -- passing N first, then M -- and
//    the bytes it writes are exactly row-major P = M x N. No copy, no transpose.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o MM-cuBLAS MM-cuBLAS.cu -lcublas
// Run:
//   ./MM-cuBLAS                          Width 1024
//   ./MM-cuBLAS --width 4096             the chapter's speed benchmark
//   ./MM-cuBLAS --help                   every option

#include <cublas_v2.h>
#include "../common/handle_cublas.h"  // HANDLE_CUBLAS, the cuBLAS twin of HANDLE_ERROR
#include "../common/handle_error.h"
#include "../common/report.h"
#include "matrix.h"

// A handle holds cuBLAS's state for one device (streams, workspace, modes).
// Creating one is slow (it loads kernels), so do it once, not per product.
cublasHandle_t make_strict_fp32_handle() {
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    return handle;
}

// P = M x N, all row-major Width x Width, on the device: the launch shared by
// main() below and by tests/ch04_matmul. In column-major terms this is
// P^T = N^T x M^T, hence N before M; every leading dimension is Width.
void launch_matmul_cublas(cublasHandle_t handle, const float* dev_M, const float* dev_N,
                          float* dev_P, int Width) {
    const float alpha = 1.0f, beta = 0.0f;
    HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, Width, Width,
                              Width,  // rows of op(A) and C, columns of C, inner dimension
                              &alpha, dev_N, Width, dev_M, Width, &beta, dev_P, Width));
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-cuBLAS [--width W] [--data document|random] [--seed S] [--repeats R] [--cpu]\n"
    "                 [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --data KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'document': M[y*W+x] = x + y*W, as the original\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "random", true);  // --width, --data, --seed, --cpu
    Report report(args, 10);
    int W = run.W;
    size_t bytes = run.bytes, guarded = run.guarded_bytes();  // P has a guard float
    // The host's memory is checked already, by read_matrix_run (at most 3/4 of the RAM).
    report.start(2 * bytes + guarded, 0);
    report_matrix_run(report, run);  // cuBLAS picks its own launch: no launch figures
    std::printf("cublasSgemm in strict FP32 (CUBLAS_PEDANTIC_MATH)\n");
    cublasHandle_t handle = make_strict_fp32_handle();  // before the clock starts: a one-time cost

    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, guarded);
    fill_inputs(M, N, run);

    // End to end, as the original timed it: allocate, copy in, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc(&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_P, guarded));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, guarded));  // poison: an unwritten element reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    launch_matmul_cublas(handle, dev_M, dev_N, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end_ms);

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = report.compute("sgemm-fp32", "kernel only", run.flops(), [&] {
        launch_matmul_cublas(handle, dev_M, dev_N, dev_P, W);
    });
    report_cpu_baseline(report, args, run, M, N, end_to_end_ms, kernel);

    HANDLE_CUBLAS(cublasDestroy(handle));
    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    return report.verdict(check.passed(), "%s", describe(check).c_str());
}
#endif
