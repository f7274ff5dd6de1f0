// tests/gpu_test.h -- what every GPU test shares.
//
// GpuTest: the fixture of every test that needs a GPU. With no usable CUDA
// device the test is skipped and says why; with CUDA_EXAMPLES_REQUIRE_GPU=1
// (GPU CI runners) it fails instead, so a broken driver cannot pass unnoticed.
// DeviceArray: a device buffer freed with the object, for tests only.
#pragma once

#include <gtest/gtest.h>
#include <string>
#include <vector>
#include "common/device_info.h"
#include "common/handle_error.h"

class GpuTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        if (!cuda_device_available(&why)) {
            if (gpu_required())
                FAIL() << "no CUDA device (" << why << ") and CUDA_EXAMPLES_REQUIRE_GPU is set";
            GTEST_SKIP() << "no CUDA device: " << why;
        }
    }
};

template <typename T>
struct DeviceArray {
    T* ptr = nullptr;
    size_t count = 0;
    explicit DeviceArray(size_t n) : count(n) { HANDLE_ERROR(cudaMalloc((void**)&ptr, bytes())); }
    ~DeviceArray() { cudaFree(ptr); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;

    size_t bytes() const { return count * sizeof(T) + (count == 0); }
    void upload(const std::vector<T>& host) {
        HANDLE_ERROR(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    }
    std::vector<T> download() const {
        std::vector<T> host(count);
        HANDLE_ERROR(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }
    // Fill with a byte pattern no kernel would write (0xFF: -1 for integers,
    // NaN for floats), so an element the kernel forgot is caught.
    void poison(unsigned char byte = 0xFF) { HANDLE_ERROR(cudaMemset(ptr, byte, bytes())); }
};
