// CPU tests of pinned_vs_pageable (no GPU needed): the byte pattern and the
// checker that compares what was sent with what came back.
#include "../../ch06_streams/pinned_vs_pageable.cu"
#include <gtest/gtest.h>

#include <vector>

// The pattern never writes 0, the value the destination is cleared to, so a
// byte that was never copied cannot pass for a right one.
TEST(PinnedVsPageablePattern, NeverZeroAndNotPeriodicInAPage) {
    std::vector<unsigned char> p(3 * 4096);
    fill_pattern(p.data(), p.size());
    for (unsigned char b : p) ASSERT_NE(b, 0);
    EXPECT_NE(std::memcmp(p.data(), p.data() + 4096, 4096), 0);
}

// The checker can fail: one changed byte, and a copy one byte short.
TEST(PinnedVsPageablePattern, CheckerCountsWrongBytes) {
    std::vector<unsigned char> sent(10000), received(10000);
    fill_pattern(sent.data(), sent.size());
    received = sent;
    EXPECT_EQ(count_wrong_bytes(sent.data(), received.data(), sent.size()), 0);
    received[4321] ^= 0x10;
    EXPECT_EQ(count_wrong_bytes(sent.data(), received.data(), sent.size()), 1);
    received = sent;
    received.back() = 0;  // the last byte never arrived
    EXPECT_EQ(count_wrong_bytes(sent.data(), received.data(), sent.size()), 1);
}

TEST(PinnedVsPageableHost, PhysicalMemoryIsKnown) {
    EXPECT_GT(host_physical_bytes(), 0ull);
}
