// ceilings.cu -- the measured limits every figure of the tour is compared with.
//
// Theoretical peaks (common/device_info.h) are what the datasheet promises;
// these are what this GPU delivers today, measured the same way as the
// examples (events, warm-up, median of repeats):
//   d2d-copy     device-to-device cudaMemcpy, bytes read + written  (memory)
//   sgemm-fp32   cublasSgemm, strict FP32 (no TF32)                 (arithmetic)
//   gemm-tf32    cublasGemmEx, TF32 inputs on the Tensor Cores, FP32 sums  (compute
//   gemm-bf16    cublasGemmEx, BF16 inputs, FP32 sums               capability 8.0+)
//   h2d-pinned   host-to-device copy from page-locked memory        (the link)
//   d2h-pinned   device-to-host copy into page-locked memory        (the link)
//
// The verdict is about results, not speed: a ceiling measured on a copy that
// did not copy, or on a product that is wrong, would make every figure of the
// tour wrong. So the device-to-device copy is compared word for word, the two
// link copies make a round trip of a byte pattern that is compared byte for
// byte, and 16 entries of each GEMM result (corners included) are compared
// with dot products done in double on the CPU. Rates are never judged: the
// theoretical peaks come from attributes that some boards under-report (GPU
// Boost runs above the rated clock), so "faster than the peak" could fail a
// right run, and a slow GPU is not a wrong one.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o ceilings ceilings.cu -lcublas
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include "../common/args.h"
#include "../common/handle_cublas.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include <cuda_bf16.h>

__global__ void fill(float* x, size_t n, float scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = scale * (float)((i * 2654435761u) % 1000) / 1000.0f -
               0.5f;  // not zeros: zeros run faster
}

__global__ void to_bf16(const float* x, __nv_bfloat16* y, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = __float2bfloat16_rn(x[i]);
}

// Adds to *count the number of 32-bit words in which x and y differ.
__global__ void count_different_words(const unsigned* x, const unsigned* y, size_t n,
                                      unsigned long long* count) {
    unsigned long long mine = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
        mine += (x[i] != y[i]);
    if (mine) atomicAdd(count, mine);
}

// How many 32-bit words differ between two device buffers of `bytes` bytes.
unsigned long long device_words_differ(const void* x, const void* y, size_t bytes) {
    unsigned long long* dev_count;
    unsigned long long count = 0;
    HANDLE_ERROR(cudaMalloc((void**)&dev_count, sizeof count));
    HANDLE_ERROR(cudaMemset(dev_count, 0, sizeof count));
    const unsigned* x_words = (const unsigned*)x;
    const unsigned* y_words = (const unsigned*)y;
    count_different_words<<<1024, 256>>>(x_words, y_words, bytes / 4, dev_count);
    CHECK_LAUNCH();
    HANDLE_ERROR(cudaMemcpy(&count, dev_count, sizeof count, cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaFree(dev_count));
    return count;
}

// How many of `samples` entries of the n x n product C = A B (column-major,
// as cuBLAS stores it: C(i,j) = sum over k of A(i,k) B(k,j)) are wrong. Each is
// compared with the dot product of A's row i and B's column j done in double.
// Whatever order n float products are summed in, FMA or not, the result is
// within gamma_n * sum |A(i,k) B(k,j)| of the exact value, gamma_n = n u / (1 - n u)
// with u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1);
// an entry further away (or NaN, the poison) is wrong, not rounded.
// input_unit: for a product of inputs rounded before they were multiplied
// (TF32, BF16), each product of two may be off by (2 + input_unit) input_unit
// of its size besides: that is added to the bound; a and b are the unrounded inputs.
int sgemm_entries_wrong(const float* a, const float* b, const float* c, int n, int samples,
                        double input_unit = 0) {
    std::vector<float> row(n), column(n);
    const double u = std::ldexp(1.0, -24);
    const double gamma = n * u / (1 - n * u) + (2 + input_unit) * input_unit;
    unsigned long long state = 12345;  // a small LCG picks the entries after the corners
    int wrong = 0;
    for (int s = 0; s < samples; s++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        int i = s < 4 ? (s % 2) * (n - 1) : (int)((state >> 33) % n);
        int j = s < 4 ? (s / 2) * (n - 1) : (int)((state >> 13) % n);
        // Row i of A is one float every n; column j of B is n floats in a row.
        HANDLE_ERROR(cudaMemcpy2D(row.data(), sizeof(float), a + i, n * sizeof(float),
                                  sizeof(float), n, cudaMemcpyDeviceToHost));
        HANDLE_ERROR(cudaMemcpy(column.data(), b + (size_t)j * n, n * sizeof(float),
                                cudaMemcpyDeviceToHost));
        float gpu = 0;
        HANDLE_ERROR(
            cudaMemcpy(&gpu, c + i + (size_t)j * n, sizeof(float), cudaMemcpyDeviceToHost));
        double exact = 0, magnitude = 0;
        for (int k = 0; k < n; k++) {
            double product = (double)row[k] * column[k];  // exact: 24 + 24 bits fit in 53
            exact += product;
            magnitude += std::fabs(product);
        }
        if (!(std::fabs(gpu - exact) <= gamma * magnitude)) {
            if (wrong++ == 0)
                std::printf("  SGEMM check: C(%d,%d) = %.9g, the CPU says %.9g (bound %.3g)\n", i,
                            j, gpu, exact, gamma * magnitude);
        }
    }
    return wrong;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
int main(int argc, char** argv) {
    Args args(argc, argv, "ceilings",
              "usage: ceilings [--quick] [--json]\n"
              "  --quick   smaller sizes (about a second in all)\n"
              "  --json    one JSON record per ceiling\n"
              "exit codes: 0 every copy and the SGEMM result checked right, 1 one did not\n"
              "            (or a CUDA error), 2 bad usage or too little host memory,\n"
              "            77 no CUDA device\n");
    bool quick = args.flag("--quick");
    bool json = args.flag("--json");
    args.done();
    size_t copy_bytes = (quick ? 256ull : 1024ull) << 20;  // several times the 50-60 MB L2 cache
    size_t link_bytes = (quick ? 64ull : 256ull) << 20;
    int n = quick ? 2048 : 8192;
    check_fits_on_host(args, 2 * link_bytes);  // two pinned buffers
    DeviceInfo dev = require_device("ceilings");
    print_device(dev);

    JsonRecord info;
    info.add("schema", 1)
        .add("program", "ceilings")
        .add("variant", "device")
        .add("device", dev.name)
        .add("cc", dev.compute_capability())
        .add("sm_count", dev.sm_count)
        .add("clock_mhz", dev.clock_khz / 1e3)
        .add("peak_dram_gbs", dev.peak_bandwidth_gbs())
        .add("peak_fp32_gflops", dev.peak_fp32_gflops())
        .add("copy_engines", dev.copy_engines)
        .add("driver_version", dev.driver_version)
        .add("runtime_version", dev.runtime_version)
        .add("memory_gb", dev.total_bytes / 1e9);
    print_json(json, info);

    // Memory: a device-to-device copy, then every word of it compared.
    float *src, *dst;
    HANDLE_ERROR(cudaMalloc((void**)&src, copy_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dst, copy_bytes));
    fill<<<1024, 256>>>(src, copy_bytes / 4, 1.0f);
    CHECK_LAUNCH();
    HANDLE_ERROR(cudaMemset(dst, 0xFF, copy_bytes));  // poison: a NaN that fill() never writes
    TimingStats copy = time_gpu(
        [&] { HANDLE_ERROR(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice)); }, 20);
    unsigned long long copy_wrong = device_words_differ(dst, src, copy_bytes);
    double copy_gbs = 2.0 * copy_bytes / (copy.median_ms * 1e6);
    print_timing("device-to-device copy", copy, copy_gbs, NAN,
                 100 * copy_gbs / dev.peak_bandwidth_gbs(), "dram");
    const char* copy_result = copy_wrong ? "FAIL" : "PASS";
    print_json(json, measurement("ceilings", "d2d-copy", dev, copy, copy_gbs, NAN, copy_result)
                         .add("bytes", (long long)copy_bytes)
                         .add("wrong_words", (long long)copy_wrong));

    // The link: page-locked host memory, both directions. A byte pattern goes
    // to the device and comes back into a second buffer cleared to 0, a byte the
    // pattern (1..251) never holds; the two must then be equal byte for byte.
    unsigned char *sent, *received;
    HANDLE_ERROR(cudaHostAlloc((void**)&sent, link_bytes, cudaHostAllocDefault));
    HANDLE_ERROR(cudaHostAlloc((void**)&received, link_bytes, cudaHostAllocDefault));
    for (size_t i = 0; i < link_bytes; i++) sent[i] = (unsigned char)(1 + i % 251);
    std::memset(received, 0, link_bytes);
    TimingStats h2d = time_gpu(
        [&] { HANDLE_ERROR(cudaMemcpyAsync(dst, sent, link_bytes, cudaMemcpyHostToDevice)); }, 10);
    TimingStats d2h = time_gpu(
        [&] { HANDLE_ERROR(cudaMemcpyAsync(received, dst, link_bytes, cudaMemcpyDeviceToHost)); },
        10);
    bool link_ok = std::memcmp(sent, received, link_bytes) == 0;
    double h2d_gbs = link_bytes / (h2d.median_ms * 1e6),
           d2h_gbs = link_bytes / (d2h.median_ms * 1e6);
    print_timing("host-to-device, pinned", h2d, h2d_gbs, NAN, NAN, nullptr);
    print_timing("device-to-host, pinned", d2h, d2h_gbs, NAN, NAN, nullptr);
    // CUDA does not report the link's speed, so these have no peak to be a
    // percentage of (pct_peak and peak are null); the tour compares the
    // programs' copies with these two measurements instead.
    const char* link_result = link_ok ? "PASS" : "FAIL";
    print_json(json, measurement_against("ceilings", "h2d-pinned", dev, h2d, h2d_gbs, NAN, NAN,
                                         nullptr, link_result)
                         .add("bytes", (long long)link_bytes));
    print_json(json, measurement_against("ceilings", "d2h-pinned", dev, d2h, d2h_gbs, NAN, NAN,
                                         nullptr, link_result)
                         .add("bytes", (long long)link_bytes));
    HANDLE_ERROR(cudaFreeHost(sent));
    HANDLE_ERROR(cudaFreeHost(received));

    // Arithmetic: cuBLAS SGEMM in strict FP32 on random-looking data, C poisoned.
    size_t matrix_bytes = (size_t)n * n * sizeof(float);
    float *a, *b, *c;
    HANDLE_ERROR(cudaMalloc((void**)&a, matrix_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&b, matrix_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&c, matrix_bytes));
    fill<<<1024, 256>>>(a, (size_t)n * n, 1.0f);
    CHECK_LAUNCH();
    fill<<<1024, 256>>>(b, (size_t)n * n, 2.0f);
    CHECK_LAUNCH();
    HANDLE_ERROR(cudaMemset(c, 0xFF, matrix_bytes));  // NaN: an entry never written cannot pass
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    const float one = 1.0f, zero = 0.0f;
    TimingStats gemm = time_gpu(
        [&] {
            HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n,
                                      &zero, c, n));
        },
        quick ? 5 : 10);
    const int samples = 16;
    int gemm_wrong = sgemm_entries_wrong(a, b, c, n, samples);
    double gemm_gflops = 2.0 * n * n * (double)n / (gemm.median_ms * 1e6);
    std::printf(
        "  %-34s median %9.4f ms  (min %.4f, max %.4f, %d runs)  %8.1f GFLOP/s = %5.1f%% of peak\n",
        "cuBLAS SGEMM (FP32)", gemm.median_ms, gemm.min_ms, gemm.max_ms, gemm.repeats, gemm_gflops,
        100 * gemm_gflops / dev.peak_fp32_gflops());
    JsonRecord size;
    size.add("n", n);
    const char* gemm_result = gemm_wrong ? "FAIL" : "PASS";
    print_json(json, measurement("ceilings", "sgemm-fp32", dev, gemm, NAN, gemm_gflops, gemm_result)
                         .add("size", size)
                         .add("entries_checked", samples)
                         .add("entries_wrong", gemm_wrong));

    // The Tensor Cores (compute capability 8.0 and newer): the same product with
    // TF32 inputs (cuBLAS rounds the floats itself; it may truncate, so the check
    // allows a whole TF32 place, 2^-10) and with BF16 inputs (converted once,
    // outside the timing, rounded to nearest: 2^-8), FP32 sums; the default math
    // mode, which the pedantic one above would forbid. These are the ceilings of
    // MM-GPU-TC's rows in the tour (results.json: ceilings "tf32" and "bf16").
    int tc_wrong = 0;
    if (dev.cc_major >= 8) {
        HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
        __nv_bfloat16 *a16, *b16;
        HANDLE_ERROR(cudaMalloc((void**)&a16, (size_t)n * n * sizeof(__nv_bfloat16)));
        HANDLE_ERROR(cudaMalloc((void**)&b16, (size_t)n * n * sizeof(__nv_bfloat16)));
        to_bf16<<<1024, 256>>>(a, a16, (size_t)n * n);
        CHECK_LAUNCH();
        to_bf16<<<1024, 256>>>(b, b16, (size_t)n * n);
        CHECK_LAUNCH();
        const char* names[2] = {"gemm-tf32", "gemm-bf16"};
        const char* labels[2] = {"cuBLAS GEMM, TF32 inputs", "cuBLAS GEMM, BF16 inputs"};
        for (int p = 0; p < 2; p++) {
            bool bf16 = p == 1;
            HANDLE_ERROR(cudaMemset(c, 0xFF, matrix_bytes));  // the poison again
            cudaDataType type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
            const void* x = bf16 ? (const void*)a16 : (const void*)a;
            const void* y = bf16 ? (const void*)b16 : (const void*)b;
            cublasComputeType_t compute = bf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
            TimingStats t = time_gpu(
                [&] {
                    HANDLE_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, x,
                                               type, n, y, type, n, &zero, c, CUDA_R_32F, n,
                                               compute, CUBLAS_GEMM_DEFAULT));
                },
                quick ? 5 : 10);
            int wrong = sgemm_entries_wrong(a, b, c, n, samples, std::ldexp(1.0, bf16 ? -8 : -10));
            tc_wrong += wrong;
            double gflops = 2.0 * n * n * (double)n / (t.median_ms * 1e6);
            print_timing(labels[p], t, NAN, gflops, NAN, nullptr);
            print_json(json, measurement_against("ceilings", names[p], dev, t, NAN, gflops, NAN,
                                                 nullptr, wrong ? "FAIL" : "PASS")
                                 .add("size", size)
                                 .add("entries_checked", samples)
                                 .add("entries_wrong", wrong));
        }
        HANDLE_ERROR(cudaFree(a16));
        HANDLE_ERROR(cudaFree(b16));
    }

    HANDLE_CUBLAS(cublasDestroy(handle));
    HANDLE_ERROR(cudaFree(a));
    HANDLE_ERROR(cudaFree(b));
    HANDLE_ERROR(cudaFree(c));
    HANDLE_ERROR(cudaFree(src));
    HANDLE_ERROR(cudaFree(dst));

    char detail[200];
    std::snprintf(detail, sizeof detail,
                  "device copy: %llu wrong words; link round trip: %s; SGEMM: %d of %d wrong; "
                  "TF32 and BF16 GEMM: %d wrong",
                  copy_wrong, link_ok ? "every byte back" : "bytes changed", gemm_wrong, samples,
                  tc_wrong);
    return verdict(copy_wrong == 0 && link_ok && gemm_wrong == 0 && tc_wrong == 0, detail);
}
#endif
