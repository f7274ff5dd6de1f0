// common/device_info.h -- what GPU is this, and how fast could it possibly be?
//
// CUDA 13 removed clockRate, memoryClockRate and deviceOverlap from
// cudaDeviceProp; the supported way to read them is cudaDeviceGetAttribute,
// which is what this file does. The "peak" numbers let every program say how
// close it came to the hardware's limit, and refuse a rate above it
// (common/report.h: "impossible measurement"):
//   memory bandwidth = memory clock x 2 (double data rate) x bus width in bytes
//   FP32 throughput  = SMs x FP32 lanes per SM x 2 (a fused multiply-add) x clock
//   Tensor Cores     = SMs x dense TF32 or BF16 flops per clock per SM x clock
//   the host link    = PCIe transfer rate x lanes x 128/130 (the line code) / 8,
//                      per direction, as the kernel's sysfs gives it (Linux)
#pragma once

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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
    int l2_bytes = 0;                // cudaDevAttrL2CacheSize
    double pcie_gbs = NAN;           // the host link's peak per direction; NAN: not known
    std::string pcie_source;         // where pcie_gbs came from, or why it is not known
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
    // Dense Tensor Core flops per clock per SM, FP32 accumulation, from NVIDIA's
    // architecture whitepapers (peak TFLOP/s / (SMs x boost clock)): A100 (8.0)
    // TF32 156 and BF16 312 at 108 SMs, 1410 MHz: 1024 and 2048; H100 SXM (9.0)
    // 494.7 and 989.4 at 132 SMs, 1830 MHz: 2048 and 4096; GA10x and AD10x (8.6,
    // 8.9): 512 and 1024 (the FP16-accumulate rate, the higher of the two); B200
    // (10.0) 4096 and 8192. A GPU not in the table gets the largest (Blackwell's):
    // its ceiling is then loose, never wrong. Volta and Turing have no TF32/BF16.
    int tensor_flops_per_clock_per_sm(bool bf16) const {
        int tf32 = cc_major == 8 && cc_minor == 0 ? 1024
                   : cc_major == 8                ? 512
                   : cc_major == 9                ? 2048
                                                  : 4096;
        return bf16 ? 2 * tf32 : tf32;
    }
    double peak_tensor_gflops(bool bf16) const {
        return (double)sm_count * tensor_flops_per_clock_per_sm(bf16) * clock_khz * 1e3 / 1e9;
    }
    // The physical ceiling of a resource, by the name a report gives it: GB/s for
    // "dram", "pcie" (one direction) and "pcie-duplex" (both at once), GFLOP/s for
    // "fp32", "tf32" and "bf16". NAN: no such resource, or its peak is not known.
    double peak(const std::string& resource) const {
        if (resource == "dram") return peak_bandwidth_gbs();
        if (resource == "fp32") return peak_fp32_gflops();
        if (resource == "tf32" || resource == "bf16") return peak_tensor_gflops(resource == "bf16");
        if (resource == "pcie") return pcie_gbs;
        if (resource == "pcie-duplex") return 2 * pcie_gbs;
        return NAN;
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

// The host link's peak. CUDA does not report the PCIe generation or width (NVML
// does, but the programs do not link it); on Linux the kernel does, in sysfs,
// for the PCI address CUDA gives: max_link_speed ("32.0 GT/s PCIe": gen 5) and
// max_link_width (16). The maximum, not the current link: an idle GPU trains its
// link down. Each lane carries speed x 128/130 bits (the line code of gen 3 and
// later; gen 1 and 2 use 8b/10b). Elsewhere the peak stays NAN, and a program
// compares its copies with the fastest copy it measured instead (report.h).
inline void read_pcie_link(int id, DeviceInfo* d) {
    char bus[32] = "";
    d->pcie_source = "not known: CUDA does not report the link";
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, id) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    std::string dir = "/sys/bus/pci/devices/" + std::string(bus);
    for (char& c : dir) c = (char)std::tolower((unsigned char)c);
    std::ifstream speed_file(dir + "/max_link_speed"), width_file(dir + "/max_link_width");
    double gts = 0;
    int lanes = 0;
    if (!(speed_file >> gts) || !(width_file >> lanes) || gts <= 0 || lanes <= 0) {
        d->pcie_source += " and " + dir + " does not say";
        return;
    }
    double line_code = gts >= 8 ? 128.0 / 130.0 : 0.8;
    d->pcie_gbs = gts * lanes * line_code / 8.0;
    char text[96];
    std::snprintf(text, sizeof text, "PCIe %.1f GT/s x%d (sysfs)", gts, lanes);
    d->pcie_source = text;
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
    HANDLE_ERROR(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, id));
    read_pcie_link(id, &d);
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
