// common/device_info.h -- what GPU is this, and how fast could it possibly be?
//
// CUDA 13 removed clockRate, memoryClockRate and deviceOverlap from
// cudaDeviceProp; the supported way to read them is cudaDeviceGetAttribute,
// which is what this file does. The two "peak" numbers let every program say
// how close it came to the hardware's limit:
//   memory bandwidth = memory clock x 2 (double data rate) x bus width in bytes
//   FP32 throughput  = SMs x FP32 lanes per SM x 2 (a fused multiply-add) x clock
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <cuda_runtime.h>
#include "handle_error.h"

struct DeviceInfo {
    std::string name;
    int cc_major = 0, cc_minor = 0;  // compute capability, e.g. 9.0 for H100/H200
    int sm_count = 0;                // streaming multiprocessors
    int clock_khz = 0;               // peak SM clock
    int memory_clock_khz = 0;        // peak memory clock
    int bus_width_bits = 0;          // memory bus width
    int copy_engines = 0;            // cudaDevAttrAsyncEngineCount
    size_t free_bytes = 0, total_bytes = 0;
    int driver_version = 0, runtime_version = 0;

    double peak_bandwidth_gbs() const {  // GB/s, 1 GB = 1e9 bytes
        return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
    }
    int fp32_lanes_per_sm() const {                     // from the CUDA programming guide's tables
        if (cc_major == 7) return 64;                   // Turing (7.5)
        if (cc_major == 8 && cc_minor == 0) return 64;  // A100
        return 128;                                     // 8.6 and later, 9.0 (Hopper)
    }
    double peak_fp32_gflops() const {
        return 2.0 * sm_count * fp32_lanes_per_sm() * clock_khz * 1e3 / 1e9;
    }
    std::string compute_capability() const {
        return std::to_string(cc_major) + "." + std::to_string(cc_minor);
    }
};

// True when a CUDA device can be used; otherwise *why says what is missing.
inline bool cuda_device_available(std::string* why = nullptr) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        if (why)
            *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err) +
                   (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice
                        ? " -- is there an NVIDIA GPU and driver on this machine?"
                        : "");
        cudaGetLastError();  // clear the sticky error so later calls are not confused
        return false;
    }
    if (count == 0) {
        if (why) *why = "the driver reports 0 CUDA devices";
        return false;
    }
    return true;
}

inline DeviceInfo query_device(int id = 0) {
    DeviceInfo d;
    cudaDeviceProp prop;
    HANDLE_ERROR(cudaGetDeviceProperties(&prop, id));
    d.name = prop.name;
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, id));
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, id));
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, id));
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, id));
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.memory_clock_khz, cudaDevAttrMemoryClockRate, id));
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, id));
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.copy_engines, cudaDevAttrAsyncEngineCount, id));
    HANDLE_ERROR(cudaSetDevice(id));
    HANDLE_ERROR(cudaMemGetInfo(&d.free_bytes, &d.total_bytes));
    HANDLE_ERROR(cudaDriverGetVersion(&d.driver_version));
    HANDLE_ERROR(cudaRuntimeGetVersion(&d.runtime_version));
    return d;
}

// True when the environment asks that a missing GPU be an error, not a skip.
inline bool gpu_required() {
    const char* require = std::getenv("CUDA_EXAMPLES_REQUIRE_GPU");
    return require && *require && std::string(require) != "0";
}

// Every program starts here. With no usable device it explains why and exits
// with 77, which ctest reports as "skipped". GPU CI runners set
// CUDA_EXAMPLES_REQUIRE_GPU=1 to turn that into a failure (exit 1).
inline DeviceInfo require_device(const char* program) {
    std::string why;
    if (!cuda_device_available(&why)) {
        bool must = gpu_required();
        std::fprintf(stderr, "%s: no usable CUDA device (%s)%s\n", program, why.c_str(),
                     must ? "; CUDA_EXAMPLES_REQUIRE_GPU is set, so this is an error" : "");
        std::exit(must ? EXIT_CODE_FAILED : EXIT_CODE_NO_DEVICE);
    }
    return query_device(0);
}

inline void print_device(const DeviceInfo& d) {
    std::printf("Device: %s (compute capability %s, %d SMs, %.0f MHz)\n", d.name.c_str(),
                d.compute_capability().c_str(), d.sm_count, d.clock_khz / 1e3);
    std::printf("        theoretical peaks: memory %.0f GB/s, FP32 %.1f TFLOP/s; %.1f GB free\n",
                d.peak_bandwidth_gbs(), d.peak_fp32_gflops() / 1e3, d.free_bytes / 1e9);
}

// Blocks needed for `count` items at `per_block` items a block: the division
// rounded up, so that the last, partly filled block is not forgotten.
inline long long ceil_div(long long count, long long per_block) {
    return (count + per_block - 1) / per_block;
}

// "--blocks auto": as many blocks of `threads` threads as the GPU can keep
// resident at once (blocks per SM, from the occupancy calculator, times the
// SMs). A grid-stride loop then gives every thread several elements.
template <typename Kernel>
int blocks_to_fill_gpu(Kernel kernel, int threads, size_t shared_bytes = 0) {
    int device = 0, sms = 0, blocks_per_sm = 0;
    HANDLE_ERROR(cudaGetDevice(&device));
    HANDLE_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    HANDLE_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads,
                                                               shared_bytes));
    return blocks_per_sm * sms;
}
