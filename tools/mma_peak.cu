// mma_peak.cu -- how fast wmma::mma_sync alone runs on this GPU: the ceiling
// of any kernel built on the warp-level matrix API, MM-GPU-TC included.
//
// Every warp keeps 8 fragments of sums in its registers and multiplies the
// same two input fragments into them, again and again: no memory traffic, no
// barriers, 8 independent Tensor Core operations in flight per warp. What it
// reaches is the rate of the mma.sync instructions that wmma compiles to. On
// Hopper, cuBLAS uses another instruction, warpgroup MMA (wgmma), which
// MM-GPU-TC's handout compares with this ceiling (docs/ch04_tensor_cores.md).
//
// The check: A's fragment holds 1s and B's 1/1024, so each mma_sync adds
// K / 1024 to every sum, exactly in FP32 (and TF32 and BF16 hold 1/1024
// exactly): after ITERATIONS steps each sum must be ITERATIONS * K / 1024.
//
// Standalone build, from this folder (sm_80 or newer):
//   nvcc -std=c++17 -O2 -arch=sm_80 -o mma_peak mma_peak.cu
// (-arch=sm_90 on an H100/H200.)
#include <mma.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <vector>
#include <type_traits>
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/timer.h"

using namespace nvcuda;

const int ITERATIONS = 4096, SUMS = 8, WARPS_PER_BLOCK = 8;

// T: float (TF32 inputs, K = 8) or __nv_bfloat16 (K = 16). out: one sum per warp.
template <typename T>
__global__ void __launch_bounds__(32 * WARPS_PER_BLOCK) mma_loop(const void* inputs, float* out) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    using Input = std::conditional_t<std::is_same_v<T, float>, wmma::precision::tf32, T>;
    constexpr int K = std::is_same_v<T, float> ? 8 : 16;
    wmma::fragment<wmma::matrix_a, 16, 16, K, Input, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, K, Input, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, K, float> sum[SUMS];
    // Loaded from memory, not filled with constants: the compiler would see
    // that B's two halves are equal, and skip one of the two instructions.
    wmma::load_matrix_sync(a, (const T*)inputs, 16);
    wmma::load_matrix_sync(b, (const T*)inputs + 16 * 16, 16);
    for (int s = 0; s < SUMS; s++) wmma::fill_fragment(sum[s], 0.0f);
    for (int i = 0; i < ITERATIONS; i++)
#pragma unroll
        for (int s = 0; s < SUMS; s++) wmma::mma_sync(sum[s], a, b, sum[s]);
    // Every element of every sum is used: the compiler drops the instructions
    // whose results nothing reads. All are equal, so their mean is exact.
    float total = 0;
    for (int s = 0; s < SUMS; s++)
        for (int e = 0; e < sum[s].num_elements; e++) total += sum[s].x[e];
    if (threadIdx.x % 32 == 0)
        out[blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32] = total / (SUMS * sum[0].num_elements);
#endif
}

// Runs the loop on `blocks` blocks; prints the rate; returns the number of wrong sums.
template <typename T>
int measure(const char* name, int blocks) {
    constexpr int K = std::is_same_v<T, float> ? 8 : 16;
    int warps = blocks * WARPS_PER_BLOCK;
    // A (16 x 16 of 1s) then B (16 x 16 of 1/1024), as T: what the fragments load.
    std::vector<T> inputs(2 * 16 * 16);
    for (int i = 0; i < 2 * 16 * 16; i++) inputs[i] = T(i < 16 * 16 ? 1.0f : 1.0f / 1024);
    void* dev_inputs;
    float* dev_out;
    HANDLE_ERROR(cudaMalloc(&dev_inputs, inputs.size() * sizeof(T)));
    HANDLE_ERROR(
        cudaMemcpy(dev_inputs, inputs.data(), inputs.size() * sizeof(T), cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMalloc(&dev_out, warps * sizeof(float)));
    HANDLE_ERROR(cudaMemset(dev_out, 0xFF, warps * sizeof(float)));  // poison: NaN
    TimingStats t = time_gpu(
        [&] {
            mma_loop<T><<<blocks, 32 * WARPS_PER_BLOCK>>>(dev_inputs, dev_out);
            CHECK_LAUNCH();
        },
        20);
    std::vector<float> out(warps);
    HANDLE_ERROR(cudaMemcpy(out.data(), dev_out, warps * sizeof(float), cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaFree(dev_inputs));
    HANDLE_ERROR(cudaFree(dev_out));
    float expected = (float)ITERATIONS * K / 1024;
    int wrong = 0;
    for (float x : out) wrong += x != expected;
    double flops = 2.0 * warps * ITERATIONS * SUMS * 16 * 16 * K;
    std::printf("%-30s median %8.4f ms (min %.4f, max %.4f, %d runs)  %6.1f TFLOP/s  %s\n", name,
                t.median_ms, t.min_ms, t.max_ms, t.repeats, flops / (t.median_ms * 1e9),
                wrong ? "WRONG SUMS" : "sums exact");
    return wrong;
}

int main() {
    DeviceInfo dev = require_device("mma_peak");
    std::printf("Device: %s (compute capability %s, %d SMs)\n", dev.name.c_str(),
                dev.compute_capability().c_str(), dev.sm_count);
    if (dev.cc_major < 8) {
        std::printf("mma_peak: TF32 and BF16 Tensor Cores need compute capability 8.0 or newer\n");
        return EXIT_CODE_NO_DEVICE;
    }
    int blocks = dev.sm_count * 4;  // 32 warps on every multiprocessor
    int wrong = measure<float>("wmma::mma_sync TF32 (16x16x8)", blocks) +
                measure<__nv_bfloat16>("wmma::mma_sync BF16 (16x16x16)", blocks);
    std::printf("Verdict: %s\n", wrong ? "FAIL (wrong sums)" : "PASS (every sum exact)");
    return wrong ? 1 : 0;
}
