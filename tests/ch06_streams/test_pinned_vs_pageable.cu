// Tests of pinned_vs_pageable: the program's own allocation and round trip,
// for each kind of host memory, with every byte checked.
#include "../../ch06_streams/pinned_vs_pageable.cu"
#include "gpu_test.h"

class PinnedVsPageable : public GpuTest {};

// One round trip of `bytes` through host memory of `kind`; returns the bytes
// that came back wrong.
static long long round_trip_wrong_bytes(HostKind kind, size_t bytes) {
    unsigned char* src = alloc_host(kind, bytes);
    unsigned char* dst = alloc_host(kind, bytes);
    EXPECT_NE(src, nullptr);
    EXPECT_NE(dst, nullptr);
    if (!src || !dst) return -1;
    DeviceArray<unsigned char> dev(bytes);
    RoundTrip r = time_round_trip(src, dst, dev.ptr, bytes, 1);
    EXPECT_GT(r.h2d.median_ms, 0.0);
    EXPECT_GT(r.d2h.median_ms, 0.0);
    free_host(kind, src);
    free_host(kind, dst);
    return r.wrong_bytes;
}

TEST_F(PinnedVsPageable, OneByteEachKind) {
    for (int k = 0; k < HOST_KINDS; k++)
        EXPECT_EQ(round_trip_wrong_bytes((HostKind)k, 1), 0) << HOST_KIND_NAMES[k];
}
// Not a multiple of a page (4096) nor of the pattern's period (251).
TEST_F(PinnedVsPageable, OddSizeEachKind) {
    for (int k = 0; k < HOST_KINDS; k++)
        EXPECT_EQ(round_trip_wrong_bytes((HostKind)k, 100003), 0) << HOST_KIND_NAMES[k];
}
TEST_F(PinnedVsPageable, OneMiBEachKind) {
    for (int k = 0; k < HOST_KINDS; k++)
        EXPECT_EQ(round_trip_wrong_bytes((HostKind)k, 1 << 20), 0) << HOST_KIND_NAMES[k];
}
TEST_F(PinnedVsPageable, Large256MiBEachKind) {
    for (int k = 0; k < HOST_KINDS; k++)
        EXPECT_EQ(round_trip_wrong_bytes((HostKind)k, 256u << 20), 0) << HOST_KIND_NAMES[k];
}

// Registered memory that is not page-aligned: malloc'd memory plus an odd offset.
TEST_F(PinnedVsPageable, RegisteredAtAnOddAddress) {
    const size_t bytes = 12345;
    const size_t block_bytes = 2 * bytes + 7;
    unsigned char* block = (unsigned char*)std::malloc(block_bytes);
    ASSERT_NE(block, nullptr);
    unsigned char* src = block + 3;          // neither aligned to a page nor to 8 bytes
    unsigned char* dst = block + 3 + bytes;  // right after it, overlapping no byte of src
    HANDLE_ERROR(cudaHostRegister(block, block_bytes, cudaHostRegisterDefault));
    DeviceArray<unsigned char> dev(bytes);
    EXPECT_EQ(time_round_trip(src, dst, dev.ptr, bytes, 1).wrong_bytes, 0);
    HANDLE_ERROR(cudaHostUnregister(block));
    std::free(block);
}

TEST_F(PinnedVsPageable, CheckerCatchesAShortCopy) {
    const size_t bytes = 1 << 16;
    unsigned char* src = alloc_host(PINNED, bytes);
    unsigned char* dst = alloc_host(PINNED, bytes);
    ASSERT_TRUE(src && dst);
    fill_pattern(src, bytes);
    std::memset(dst, 0, bytes);
    DeviceArray<unsigned char> dev(bytes);
    HANDLE_ERROR(cudaMemcpy(dev.ptr, src, bytes - 100, cudaMemcpyHostToDevice));  // 100 bytes short
    HANDLE_ERROR(cudaMemcpy(dst, dev.ptr, bytes - 100, cudaMemcpyDeviceToHost));
    EXPECT_EQ(count_wrong_bytes(src, dst, bytes), 100);
    free_host(PINNED, src);
    free_host(PINNED, dst);
}

// An impossible request comes back as nullptr (main() turns it into exit 2),
// not as a crash. Named *Large* so that the sanitizer run, which reports the
// refused cudaHostAlloc as an API error, leaves it out.
TEST_F(PinnedVsPageable, ImpossibleAllocationReturnsNullLarge) {
    const size_t huge = 1ull << 60;  // an exbibyte
    for (int k = 0; k < HOST_KINDS; k++)
        EXPECT_EQ(alloc_host((HostKind)k, huge), nullptr) << HOST_KIND_NAMES[k];
}
