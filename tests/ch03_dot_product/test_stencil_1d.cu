// Tests of stencil_1d: the program's own kernel and launch, against the CPU.
#include "../../ch03_dot_product/stencil_1d.cu"
#include "gpu_test.h"

class Stencil1D : public GpuTest {};

static std::vector<int> random_ints(long long n, unsigned seed) {
    std::vector<int> v(n);
    fill_random_ints(v.data(), n, seed);
    return v;
}

// Runs the GPU stencil, told `n_run` elements, on `in` (output poisoned as
// the program does) and counts the outputs that differ from the CPU stencil
// of `expected_from`.
static long long count_wrong_stencil(const std::vector<int>& in,
                                     const std::vector<int>& expected_from, long long n_run) {
    long long n = (long long)in.size();
    DeviceArray<int> dev_in(n), dev_out(n);
    dev_in.upload(in);
    dev_out.poison(POISON_BYTE);
    launch_stencil_1d(dev_in.ptr, dev_out.ptr, n_run);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<int> out = dev_out.download(), expected(n);
    stencil_on_cpu(expected_from.data(), expected.data(), n);
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (out[i] != expected[i]);
    return wrong;
}

static long long count_wrong_stencil(const std::vector<int>& in,
                                     const std::vector<int>& expected_from) {
    return count_wrong_stencil(in, expected_from, (long long)in.size());
}

static long long count_wrong_stencil(long long n) {
    std::vector<int> in = random_ints(n, 99);
    return count_wrong_stencil(in, in);
}

TEST_F(Stencil1D, ShorterThanTheWindow) {
    for (long long n = 1; n <= 2 * RADIUS + 2; n++)
        EXPECT_EQ(count_wrong_stencil(n), 0) << "n = " << n;
}
TEST_F(Stencil1D, AroundOneBlock) {
    for (long long n : {THREADS_PER_BLOCK - 1, THREADS_PER_BLOCK, THREADS_PER_BLOCK + 1,
                        THREADS_PER_BLOCK + RADIUS})
        EXPECT_EQ(count_wrong_stencil(n), 0) << "n = " << n;
}
TEST_F(Stencil1D, NotAMultipleOfTheBlock) {
    EXPECT_EQ(count_wrong_stencil(100003), 0);
}
TEST_F(Stencil1D, Large) {
    EXPECT_EQ(count_wrong_stencil((1 << 24) + 7), 0);
}

// The checker must be able to fail: change one input on the CPU side only,
// and the 2*RADIUS + 1 outputs that see it differ.
TEST_F(Stencil1D, CheckerCatchesAChangedInput) {
    std::vector<int> in = random_ints(1000, 3), changed = in;
    changed[THREADS_PER_BLOCK] += 1;  // just past the first block: the halo of both
    EXPECT_EQ(count_wrong_stencil(in, changed), 2 * RADIUS + 1);
}

// An output the kernel never writes must fail, whatever its right value is:
// here the last output should be -1 (the old poison, 0xFF bytes, read -1 and
// passed), and the kernel is told one element fewer, so it never writes it.
// The last input is 0, so the outputs it does write are all right.
TEST_F(Stencil1D, CheckerCatchesAnUnwrittenOutputWhoseRightValueIsMinusOne) {
    std::vector<int> in = random_ints(1000, 5);
    in[999] = 0;
    in[996] = -1 - in[997] - in[998];  // out[999] = in[996] + in[997] + in[998] + in[999] = -1
    std::vector<int> expected(1000);
    stencil_on_cpu(in.data(), expected.data(), 1000);
    ASSERT_EQ(expected[999], -1);
    EXPECT_EQ(count_wrong_stencil(in, in, 999), 1);
}
