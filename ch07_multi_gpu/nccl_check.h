// nccl_check.h -- NCCL calls checked like CUDA calls (chapter 7).
//
// Every NCCL function returns an ncclResult_t; HANDLE_NCCL prints the call, NCCL's
// own words and file:line, and exits 1, as HANDLE_ERROR does for the CUDA runtime.
// (NCCL_DEBUG=WARN, or INFO, in the environment makes NCCL say more.)
// Programs that include this link NCCL: -lnccl on the nvcc line.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <nccl.h>
#include "../common/handle_error.h"

inline void handle_nccl(ncclResult_t result, const char* call, const char* file, int line) {
    if (result != ncclSuccess) {
        std::fprintf(stderr, "NCCL error: %s\n  returned %d: %s\n  at %s:%d\n", call, (int)result,
                     ncclGetErrorString(result), file, line);
        std::exit(EXIT_CODE_FAILED);
    }
}

#define HANDLE_NCCL(call) handle_nccl((call), #call, __FILE__, __LINE__)

// NCCL's version as "2.28.9".
inline void nccl_version_text(char* text, size_t size) {
    int v = 0;
    HANDLE_NCCL(ncclGetVersion(&v));
    std::snprintf(text, size, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}
