// ceilings.cu -- the measured limits every figure of the tour is compared with.
//
// Theoretical peaks (common/device_info.h) are what the datasheet promises;
// these are what this GPU delivers today, measured the same way as the
// examples (events, warm-up, median of repeats):
//   d2d-copy     device-to-device cudaMemcpy, bytes read + written  (memory)
//   sgemm-fp32   cublasSgemm, strict FP32 (no TF32)                 (arithmetic)
//   h2d-pinned   host-to-device copy from page-locked memory        (the link)
//   d2h-pinned   device-to-host copy into page-locked memory        (the link)
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o ceilings ceilings.cu -lcublas
#include <cstdio>
#include <vector>
#include "../common/args.h"
#include "../common/handle_cublas.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"

__global__ void fill(float* x, size_t n, float scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = scale * (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;  // not zeros: zeros run faster
}

int main(int argc, char** argv) {
    Args args(argc, argv, "ceilings",
              "usage: ceilings [--quick] [--json]\n"
              "  --quick   smaller sizes (about a second in all)\n"
              "  --json    one JSON record per ceiling\n");
    bool quick = args.flag("--quick");
    bool json = args.flag("--json");
    args.done();
    DeviceInfo dev = require_device("ceilings");
    print_device(dev);

    JsonRecord info;
    info.add("schema", 1).add("program", "ceilings").add("variant", "device").add("device", dev.name)
        .add("cc", dev.compute_capability()).add("sm_count", dev.sm_count).add("clock_mhz", dev.clock_khz / 1e3)
        .add("peak_dram_gbs", dev.peak_bandwidth_gbs()).add("peak_fp32_gflops", dev.peak_fp32_gflops())
        .add("copy_engines", dev.copy_engines).add("driver_version", dev.driver_version)
        .add("runtime_version", dev.runtime_version).add("memory_gb", dev.total_bytes / 1e9);
    print_json(json, info);

    // Memory: a copy several times larger than the 50-60 MB L2 cache.
    size_t copy_bytes = (quick ? 256ull : 1024ull) << 20;
    float *src, *dst;
    HANDLE_ERROR(cudaMalloc((void**)&src, copy_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dst, copy_bytes));
    fill<<<1024, 256>>>(src, copy_bytes / 4, 1.0f);
    CHECK_LAUNCH();
    TimingStats copy = time_gpu([&] {
        HANDLE_ERROR(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice));
    }, 20);
    double copy_gbs = 2.0 * copy_bytes / (copy.median_ms * 1e6);
    print_timing("device-to-device copy", copy, copy_gbs, 100 * copy_gbs / dev.peak_bandwidth_gbs());
    print_json(json, measurement("ceilings", "d2d-copy", dev, copy, copy_gbs, NAN, "PASS")
                         .add("bytes", (long long)copy_bytes));

    // The link: page-locked host memory, both directions.
    size_t link_bytes = (quick ? 64ull : 256ull) << 20;
    void* pinned;
    HANDLE_ERROR(cudaHostAlloc(&pinned, link_bytes, cudaHostAllocDefault));
    std::memset(pinned, 1, link_bytes);
    TimingStats h2d = time_gpu([&] {
        HANDLE_ERROR(cudaMemcpyAsync(dst, pinned, link_bytes, cudaMemcpyHostToDevice));
    }, 10);
    TimingStats d2h = time_gpu([&] {
        HANDLE_ERROR(cudaMemcpyAsync(pinned, src, link_bytes, cudaMemcpyDeviceToHost));
    }, 10);
    double h2d_gbs = link_bytes / (h2d.median_ms * 1e6), d2h_gbs = link_bytes / (d2h.median_ms * 1e6);
    print_timing("host-to-device, pinned", h2d, h2d_gbs, NAN);
    print_timing("device-to-host, pinned", d2h, d2h_gbs, NAN);
    print_json(json, measurement("ceilings", "h2d-pinned", dev, h2d, h2d_gbs, NAN, "PASS")
                         .add("bytes", (long long)link_bytes).raw("pct_peak", "null"));
    print_json(json, measurement("ceilings", "d2h-pinned", dev, d2h, d2h_gbs, NAN, "PASS")
                         .add("bytes", (long long)link_bytes).raw("pct_peak", "null"));
    HANDLE_ERROR(cudaFreeHost(pinned));

    // Arithmetic: cuBLAS SGEMM in strict FP32 on random-looking data.
    int n = quick ? 2048 : 8192;
    size_t matrix_bytes = (size_t)n * n * sizeof(float);
    float *a, *b, *c;
    HANDLE_ERROR(cudaMalloc((void**)&a, matrix_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&b, matrix_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&c, matrix_bytes));
    fill<<<1024, 256>>>(a, (size_t)n * n, 1.0f);
    CHECK_LAUNCH();
    fill<<<1024, 256>>>(b, (size_t)n * n, 2.0f);
    CHECK_LAUNCH();
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    const float one = 1.0f, zero = 0.0f;
    TimingStats gemm = time_gpu([&] {
        HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    }, quick ? 5 : 10);
    double gemm_gflops = 2.0 * n * n * (double)n / (gemm.median_ms * 1e6);
    std::printf("  %-34s median %9.4f ms  (min %.4f, max %.4f, %d runs)  %8.1f GFLOP/s = %5.1f%% of peak\n",
                "cuBLAS SGEMM (FP32)", gemm.median_ms, gemm.min_ms, gemm.max_ms, gemm.repeats, gemm_gflops,
                100 * gemm_gflops / dev.peak_fp32_gflops());
    JsonRecord size;
    size.add("n", n);
    print_json(json, measurement("ceilings", "sgemm-fp32", dev, gemm, NAN, gemm_gflops, "PASS").add("size", size));

    HANDLE_CUBLAS(cublasDestroy(handle));
    HANDLE_ERROR(cudaFree(a));
    HANDLE_ERROR(cudaFree(b));
    HANDLE_ERROR(cudaFree(c));
    HANDLE_ERROR(cudaFree(src));
    HANDLE_ERROR(cudaFree(dst));
    return verdict(true, "ceilings measured");
}
