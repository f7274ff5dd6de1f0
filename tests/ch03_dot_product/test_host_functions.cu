// The host-side parts of the chapter-3 programs, tested on the CPU (no GPU
// needed, label cpu): grid sizes, kernel names, the stencil's CPU reference
// and its poison. The programs' own sources are included (main compiled out),
// as in the GPU tests; nothing here launches a kernel.
#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "../../ch03_dot_product/Dot-SM.cu"
#include "../../ch03_dot_product/reduction.cu"
#include "../../ch03_dot_product/stencil_1d.cu"

TEST(Dot_SM, DocumentGridIsCappedAt32) {
    EXPECT_EQ(document_blocks(1), 1);
    EXPECT_EQ(document_blocks(256), 1);
    EXPECT_EQ(document_blocks(257), 2);
    EXPECT_EQ(document_blocks(32 * 256), 32);
    EXPECT_EQ(document_blocks(1LL << 28), 32);
    EXPECT_EQ(uncapped_blocks(1LL << 28), 1LL << 20);
}

TEST(Reduction, KernelNames) {
    EXPECT_EQ(kernel_number("thread0"), 0);
    EXPECT_EQ(kernel_number("sequential"), 3);
    EXPECT_EQ(kernel_number("fastest"), -1);
}

// The window at the edges counts outside values as 0.
TEST(Stencil1D, CpuReferenceEdges) {
    std::vector<int> in(10, 1), out(10);
    stencil_on_cpu(in.data(), out.data(), 10);
    EXPECT_EQ(out[0], 4);  // itself and 3 to the right
    EXPECT_EQ(out[3], 7);
    EXPECT_EQ(out[9], 4);
}

// The poison must be a value no correct output can take: every output is a sum
// of at most 2 * RADIUS + 1 inputs in [-INPUT_MAX, INPUT_MAX]. (The old poison,
// the byte 0xFF, read -1, a sum the stencil can produce.)
TEST(Stencil1D, PoisonIsNoPossibleOutput) {
    int poison = 0;
    std::memset(&poison, POISON_BYTE, sizeof poison);
    EXPECT_GT(std::llabs((long long)poison), (long long)(2 * RADIUS + 1) * INPUT_MAX) << poison;
}
