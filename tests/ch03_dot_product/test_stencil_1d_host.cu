// The host-side parts of stencil_1d, tested on the CPU (no GPU needed, label
// cpu): the CPU reference, the poison and the input data. The program's own
// source is included (main compiled out); nothing here launches a kernel.
#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "../../ch03_dot_product/stencil_1d.cu"

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

// The inputs stay in [-INPUT_MAX, INPUT_MAX] and are the same for the same seed.
TEST(Stencil1D, RandomIntsInRangeAndReproducible) {
    std::vector<int> x(10000), y(10000);
    fill_random_ints(x.data(), 10000, 5);
    fill_random_ints(y.data(), 10000, 5);
    EXPECT_EQ(x, y);
    int lo = 0, hi = 0;
    for (int v : x) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_EQ(lo, -INPUT_MAX);
    EXPECT_EQ(hi, INPUT_MAX);
}
