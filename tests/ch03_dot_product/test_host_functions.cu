// The host-side parts of Dot-SM and reduction, tested on the CPU (no GPU
// needed, label cpu): grid sizes and kernel names. The programs' own sources
// are included (main compiled out), as in the GPU tests; nothing here
// launches a kernel. (stencil_1d's are in test_stencil_1d_host.cu: it names
// its block size THREADS_PER_BLOCK too.)
#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "../../ch03_dot_product/Dot-SM.cu"
#include "../../ch03_dot_product/reduction.cu"

TEST(Dot_SM, OriginalGridIsCappedAt32) {
    EXPECT_EQ(original_blocks(1), 1);
    EXPECT_EQ(original_blocks(256), 1);
    EXPECT_EQ(original_blocks(257), 2);
    EXPECT_EQ(original_blocks(32 * 256), 32);
    EXPECT_EQ(original_blocks(1LL << 28), 32);
    EXPECT_EQ(ceil_div(1LL << 28, THREADS_PER_BLOCK), 1LL << 20);
}

TEST(Reduction, KernelNames) {
    EXPECT_EQ(kernel_number("thread0"), 0);
    EXPECT_EQ(kernel_number("sequential"), 3);
    EXPECT_EQ(kernel_number("fastest"), -1);
}
