// common/handle_cublas.h -- HANDLE_ERROR's twin for cuBLAS calls.
//
// cuBLAS functions return a cublasStatus_t rather than a cudaError_t, so they
// need their own check. Programs that include this file link with -lcublas.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include "handle_error.h"

inline void handle_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cuBLAS error: %s\n  returned %s\n  at %s:%d\n", call,
                     cublasGetStatusName(status), file, line);
        std::exit(EXIT_CODE_FAILED);
    }
}

#define HANDLE_CUBLAS(call) handle_cublas((call), #call, __FILE__, __LINE__)
