// Tests of stencil_1d: the program's own kernel and launch, against the CPU.
#include "../../ch03_dot_product/stencil_1d.cu"
#include "gpu_test.h"

class Stencil1D : public GpuTest {};

static std::vector<int> random_ints(long long n, unsigned seed) {
    std::vector<int> v(n);
    unsigned long long state = seed;
    for (long long i = 0; i < n; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (int)((state >> 33) % 2001) - 1000;
    }
    return v;
}

// Runs the GPU stencil on `in` (poisoned output) and counts the outputs that
// differ from the CPU stencil of `expected_from`.
static long long count_wrong_stencil(const std::vector<int>& in, const std::vector<int>& expected_from) {
    long long n = (long long)in.size();
    DeviceArray<int> dev_in(n), dev_out(n);
    dev_in.upload(in);
    dev_out.poison();
    stencil(dev_in.ptr, dev_out.ptr, n);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<int> out = dev_out.download(), expected(n);
    stencil_on_cpu(expected_from.data(), expected.data(), n);
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (out[i] != expected[i]);
    return wrong;
}

static long long count_wrong_stencil(long long n) {
    std::vector<int> in = random_ints(n, 99);
    return count_wrong_stencil(in, in);
}

TEST_F(Stencil1D, ShorterThanTheWindow) {
    for (long long n = 1; n <= 2 * RADIUS + 2; n++) EXPECT_EQ(count_wrong_stencil(n), 0) << "n = " << n;
}
TEST_F(Stencil1D, AroundOneBlock) {
    for (long long n : {BLOCK_SIZE - 1, BLOCK_SIZE, BLOCK_SIZE + 1, BLOCK_SIZE + RADIUS})
        EXPECT_EQ(count_wrong_stencil(n), 0) << "n = " << n;
}
TEST_F(Stencil1D, NotAMultipleOfTheBlock) { EXPECT_EQ(count_wrong_stencil(100003), 0); }
TEST_F(Stencil1D, Large) { EXPECT_EQ(count_wrong_stencil((1 << 24) + 7), 0); }

// The CPU side alone: the window at the edges counts outside values as 0.
TEST_F(Stencil1D, CpuReferenceEdges) {
    std::vector<int> in(10, 1), out(10);
    stencil_on_cpu(in.data(), out.data(), 10);
    EXPECT_EQ(out[0], 4);  // itself and 3 to the right
    EXPECT_EQ(out[3], 7);
    EXPECT_EQ(out[9], 4);
}

// The checker must be able to fail: change one input on the CPU side only,
// and the 2*RADIUS + 1 outputs that see it differ.
TEST_F(Stencil1D, CheckerCatchesAChangedInput) {
    std::vector<int> in = random_ints(1000, 3), changed = in;
    changed[BLOCK_SIZE] += 1;  // just past the first block: the halo of both
    EXPECT_EQ(count_wrong_stencil(in, changed), 2 * RADIUS + 1);
}
