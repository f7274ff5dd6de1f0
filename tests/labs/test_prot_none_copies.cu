// What the ch06 grading driver (labs/drivers/streams.cu) relies on: host pages pinned with
// cudaHostRegister and then made unreadable to the CPU with mprotect(PROT_NONE) are still
// reached by the GPU's copies (DMA), synchronous and asynchronous, in both directions, at every
// size; and the CPU really cannot read them (a read is a segmentation fault). If a CUDA version
// ever touched the host buffer from the CPU during a copy, this test dies with SIGSEGV.
#include <gtest/gtest.h>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>
#include "gpu_test.h"

class ProtNoneCopies : public GpuTest {};

struct Protected {  // page-aligned, pinned, and fenced from the CPU on demand
    size_t bytes;
    uint32_t* p;
    explicit Protected(size_t words) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        bytes = (words * sizeof(uint32_t) + page - 1) / page * page;
        void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(m, MAP_FAILED);
        p = (uint32_t*)m;
        HANDLE_ERROR(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    }
    void fence(bool on) {
        ASSERT_EQ(mprotect(p, bytes, on ? PROT_NONE : PROT_READ | PROT_WRITE), 0);
    }
    ~Protected() {
        mprotect(p, bytes, PROT_READ | PROT_WRITE);
        cudaHostUnregister(p);
        munmap(p, bytes);
    }
};

TEST_F(ProtNoneCopies, CopyEnginesReachPagesTheCpuCannot) {
    for (size_t words : {1UL, 3UL, 1000UL, 16384UL, 100003UL, 1UL << 20, 1UL << 24}) {
        for (int async = 0; async < 2; async++) {
            SCOPED_TRACE(std::to_string(words) + " words, " + (async ? "async" : "sync"));
            Protected in(words), out(words);
            for (size_t i = 0; i < words; i++) in.p[i] = (uint32_t)(i * 2654435761u + 7);
            std::memset(out.p, 0xFF, words * sizeof(uint32_t));
            uint32_t* dev;
            HANDLE_ERROR(cudaMalloc(&dev, words * sizeof(uint32_t)));
            cudaStream_t s;
            HANDLE_ERROR(cudaStreamCreate(&s));
            in.fence(true);
            out.fence(true);
            if (async) {
                HANDLE_ERROR(cudaMemcpyAsync(dev, in.p, words * 4, cudaMemcpyHostToDevice, s));
                HANDLE_ERROR(cudaMemcpyAsync(out.p, dev, words * 4, cudaMemcpyDeviceToHost, s));
                HANDLE_ERROR(cudaStreamSynchronize(s));
            } else {
                HANDLE_ERROR(cudaMemcpy(dev, in.p, words * 4, cudaMemcpyHostToDevice));
                HANDLE_ERROR(cudaMemcpy(out.p, dev, words * 4, cudaMemcpyDeviceToHost));
            }
            in.fence(false);
            out.fence(false);
            size_t wrong = 0;
            for (size_t i = 0; i < words; i++) wrong += out.p[i] != (uint32_t)(i * 2654435761u + 7);
            EXPECT_EQ(wrong, 0u);
            HANDLE_ERROR(cudaStreamDestroy(s));
            HANDLE_ERROR(cudaFree(dev));
        }
    }
}

static sigjmp_buf caught;
static void on_segv(int) {
    siglongjmp(caught, 1);
}

TEST_F(ProtNoneCopies, TheCpuCannotReadThem) {
    Protected in(1000);
    in.p[5] = 42;
    in.fence(true);
    struct sigaction sa = {}, old = {};
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, &old);
    volatile uint32_t got = 0;
    bool faulted = sigsetjmp(caught, 1) != 0;
    if (!faulted) got = *(volatile uint32_t*)&in.p[5];
    sigaction(SIGSEGV, &old, nullptr);
    in.fence(false);
    EXPECT_TRUE(faulted) << "the CPU read " << got << " from a PROT_NONE page";
}
