// Tests of Dot-GM: the program's own kernel and launch, against the CPU.
#include "../../ch03_dot_product/Dot-GM.cu"
#include "dot_test_data.h"

class Dot_GM : public GpuTest {};

// Runs dot_gm on poisoned output, the kernel told n; returns the products.
static std::vector<float> run_dot_gm_products(const DotInputs& in, int blocks, int threads,
                                              long long n) {
    long long size = (long long)in.a.size();
    DeviceArray<float> a(size), b(size), c(size);
    a.upload(in.a);
    b.upload(in.b);
    c.poison();
    launch_multiply(a.ptr, b.ptr, c.ptr, n, blocks, threads);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<float> products = c.download();
    products.resize(n);
    return products;
}

// The same; returns the CPU's double sum of the products and sets *unwritten
// to the number of products never written (still NaN).
static double run_dot_gm(const DotInputs& in, int blocks, int threads, long long n,
                         long long* unwritten) {
    std::vector<float> products = run_dot_gm_products(in, blocks, threads, n);
    *unwritten = count_nan(products);
    return sum_products(products.data(), n);
}

static void expect_dot_gm(long long n, Data data, int blocks, int threads) {
    DotInputs in = make_dot_inputs(n, data);
    long long unwritten = 0;
    double sum = run_dot_gm(in, blocks, threads, n, &unwritten);
    EXPECT_EQ(unwritten, 0) << "n = " << n;
    EXPECT_TRUE(within_bound(sum, in.ref, 1)) << "n = " << n << ": " << explain(sum, in.ref, 1);
}

TEST_F(Dot_GM, OneElement) {
    expect_dot_gm(1, Data::Random, 128, 128);
    expect_dot_gm(1, Data::Document, 128, 128);
}
TEST_F(Dot_GM, AroundOneBlock) {
    for (long long n : {255, 256, 257}) {
        expect_dot_gm(n, Data::Random, 1, 256);
        expect_dot_gm(n, Data::Document, 2, 128);
    }
}
TEST_F(Dot_GM, NotAMultipleOfTheGrid) {
    expect_dot_gm(100003, Data::Random, 128, 128);
}
TEST_F(Dot_GM, OddGrid) {
    expect_dot_gm(99991, Data::Document, 7, 96);
}
TEST_F(Dot_GM, Large) {
    expect_dot_gm((1 << 24) + 5, Data::Random, 128, 128);
}
TEST_F(Dot_GM, DocumentDataLarge) {
    expect_dot_gm(1 << 24, Data::Document, 128, 128);
}
TEST_F(Dot_GM, LargeAutoGrid) {
    expect_dot_gm(1 << 24, Data::Random, blocks_to_fill_gpu(multiply, 256), 256);
}

// The checker must be able to fail: leave the last product out (the kernel is
// told n - 1) and the sum of the original's all-positive data is off by far
// more than one rounding allows.
TEST_F(Dot_GM, CheckerCatchesAMissingProduct) {
    DotInputs in = make_dot_inputs(1000, Data::Document);
    long long unwritten = 0;
    double sum = run_dot_gm(in, 4, 64, 999, &unwritten);
    EXPECT_FALSE(within_bound(sum, in.ref, 1)) << explain(sum, in.ref, 1);
    // ... and an element never written (poison, NaN) fails every comparison.
    EXPECT_FALSE(within_bound(NAN, in.ref, 1000));
}

// With data of both signs too: every product of the random data is non-zero
// and the sum is exact, so one product left out fails at any size ...
TEST_F(Dot_GM, LargeSignedDataCheckerCatchesAMissingProduct) {
    const long long n = (1 << 24) + 5;
    DotInputs in = make_dot_inputs(n, Data::Random);
    long long unwritten = 0;
    double sum = run_dot_gm(in, 128, 128, n - 1, &unwritten);
    EXPECT_FALSE(within_bound(sum, in.ref, 1)) << explain(sum, in.ref, 1);
}
// ... and so do the products of any one block lost (block k of the grid-stride
// loop writes the elements i with (i / threads) mod blocks = k), 0 and the
// sign flipped.
TEST_F(Dot_GM, LargeSignedDataCheckerCatchesALostBlock) {
    const long long n = (1 << 24) + 5;
    const int blocks = 128, threads = 128;
    DotInputs in = make_dot_inputs(n, Data::Random);
    std::vector<float> products = run_dot_gm_products(in, blocks, threads, n);
    double sum = sum_products(products.data(), n);
    ASSERT_TRUE(within_bound(sum, in.ref, 1)) << explain(sum, in.ref, 1);
    EXPECT_FALSE(within_bound(0.0, in.ref, 1));
    EXPECT_FALSE(within_bound(-sum, in.ref, 1));
    for (long long lost : {0, 1, blocks - 1}) {
        double without = 0;
        for (long long i = 0; i < n; i++)
            if ((i / threads) % blocks != lost) without += products[i];
        EXPECT_FALSE(within_bound(without, in.ref, 1))
            << "block " << lost << ": " << explain(without, in.ref, 1);
    }
}
