// common/handle_error.h -- check every CUDA call, and every kernel launch.
//
// Every CUDA runtime function returns a cudaError_t. Ignoring it is the most
// common reason a CUDA program "runs" and prints garbage: the first failure is
// silent and every later call fails too. Wrap each call in HANDLE_ERROR(...).
//
// A kernel launch returns nothing, so check it afterwards:
//   CHECK_LAUNCH()       - was the launch itself accepted? (bad configuration,
//                          too many threads per block, ...). Cheap; no wait.
//   CHECK_LAUNCH_SYNC()  - also waits for the kernel to finish and reports an
//                          error that happened while it ran (an out-of-bounds
//                          access, say). Use it when checking, not when timing.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// Exit codes shared by every program of the suite (README.md lists them).
const int EXIT_CODE_OK = 0;          // ran, and the GPU result matched the CPU
const int EXIT_CODE_FAILED = 1;      // a result check failed, or a CUDA error
const int EXIT_CODE_USAGE = 2;       // bad command line or input file
const int EXIT_CODE_NO_DEVICE = 77;  // no usable CUDA device (ctest: skipped)

inline void handle_error(cudaError_t err, const char* call, const char* file, int line) {
    if (err != cudaSuccess) {
        std::fprintf(stderr, "CUDA error: %s\n  returned %s: %s\n  at %s:%d\n", call,
                     cudaGetErrorName(err), cudaGetErrorString(err), file, line);
        std::exit(EXIT_CODE_FAILED);
    }
}

#define HANDLE_ERROR(call) handle_error((call), #call, __FILE__, __LINE__)

#define CHECK_LAUNCH() handle_error(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

#define CHECK_LAUNCH_SYNC()                                                            \
    do {                                                                               \
        CHECK_LAUNCH();                                                                \
        handle_error(cudaDeviceSynchronize(), "kernel execution", __FILE__, __LINE__); \
    } while (0)
