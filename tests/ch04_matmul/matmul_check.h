// Checks one matrix-product launch against an independent double-precision product.
#pragma once

#include <cmath>
#include <random>
#include <vector>
#include "../../ch04_matmul/matrix.h"
#include "gpu_test.h"

// The product in double, written independently of every kernel (loop order
// i-k-j, so the inner loop runs along rows of N and P, which is fast).
inline std::vector<double> reference_product(const std::vector<float>& M,
                                             const std::vector<float>& N, int W) {
    std::vector<double> P((size_t)W * W, 0.0);
    for (int i = 0; i < W; i++)
        for (int k = 0; k < W; k++) {
            double m = M[(size_t)i * W + k];
            for (int j = 0; j < W; j++) P[(size_t)i * W + j] += m * N[(size_t)k * W + j];
        }
    return P;
}

// ||P - reference|| / ||reference|| over all elements (Frobenius norm); NaN
// when any element is NaN -- in particular one the kernel never wrote.
inline double relative_error(const std::vector<float>& P, const std::vector<double>& reference) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < P.size(); i++) {
        if (std::isnan(P[i])) return NAN;
        diff += (P[i] - reference[i]) * (P[i] - reference[i]);
        norm += reference[i] * reference[i];
    }
    return std::sqrt(diff) / (norm > 0 ? std::sqrt(norm) : 1.0);
}

// The tolerance for a float product of Width W. Each output is a sum of W
// products; with random data in [-1, 1] its rounding errors add up like a
// random walk, to about sqrt(W) x 2^-24 relative (2^-24: half a float ulp).
// 8 x that leaves room for other summation orders (cuBLAS), yet it is far
// below what one wrong element costs: at W = 1025 a single element off by
// its own size moves the norm by about 1/W = 1e-3, a hundred times more.
inline double tolerance(int W) {
    return 8.0 * std::sqrt((double)W) * std::ldexp(1.0, -24);
}

// Runs launch(dev_M, dev_N, dev_P, W) on fresh random matrices (values in
// [-1, 1]) with dev_P poisoned (NaN) beforehand; returns the relative error,
// or infinity when the kernel wrote past the end of P: dev_P has one float
// more than the matrix, a guard that must keep the poison, as in the programs.
template <typename Launch>
double matmul_error(int W, Launch launch, unsigned seed = 12345) {
    std::vector<float> M((size_t)W * W), N((size_t)W * W);
    std::mt19937 rng(seed + (unsigned)W);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& m : M) m = value(rng);
    for (float& n : N) n = value(rng);
    DeviceArray<float> dev_M(M.size()), dev_N(N.size()), dev_P(M.size() + 1);
    dev_M.upload(M);
    dev_N.upload(N);
    dev_P.poison();
    launch(dev_M.ptr, dev_N.ptr, dev_P.ptr, W);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<float> P = dev_P.download();
    CheckResult guard;
    check_guard(P.data(), W, &guard);
    P.pop_back();
    return guard.wrote_past_end ? INFINITY : relative_error(P, reference_product(M, N, W));
}

// EXPECT_LE(error, tolerance) would let NaN fail with a confusing message;
// this says what happened.
#define EXPECT_PRODUCT_OK(W, launch)                                                              \
    do {                                                                                          \
        double error_ = matmul_error((W), (launch));                                              \
        EXPECT_TRUE(error_ <= tolerance(W))                                                       \
            << "Width " << (W) << ": relative error " << error_ << " (tolerance " << tolerance(W) \
            << "; NaN: an element was never written, inf: a write "                               \
            << "past the end of P)";                                                              \
    } while (0)

// The exact check, at any Width (large ones included): data on the 1/8 grid
// (fill_random), for which a correct product is exact in float whatever the
// order of the additions, checked with the programs' own check_product
// (matrix.h: whole rows and columns against double, and Freivalds' test of
// every element). A W^3 reference would take minutes at W = 8192; this takes
// about a second. test_matrix.cpp proves, without a GPU, that it refuses a
// missing tile, or a few corrupted elements in one tile, at W = 8192, 8193
// and 32767. (The tests above, on uniform data with a rounding tolerance,
// also see a lost bit of precision -- TF32 instead of FP32 -- which data on
// the 1/8 grid would not show: 3 significant bits survive TF32 unharmed.)
template <typename Launch>
CheckResult exact_check(int W, Launch launch) {
    std::vector<float> M((size_t)W * W), N((size_t)W * W);
    fill_random(M.data(), W, 100 + W);
    fill_random(N.data(), W, 200 + W);
    DeviceArray<float> dev_M(M.size()), dev_N(N.size()), dev_P(M.size() + 1);  // + the guard
    dev_M.upload(M);
    dev_N.upload(N);
    dev_P.poison();
    launch(dev_M.ptr, dev_N.ptr, dev_P.ptr, W);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<float> P = dev_P.download();
    CheckResult check = check_product(M.data(), N.data(), P.data(), W);
    check_guard(P.data(), W, &check);
    return check;
}

#define EXPECT_PRODUCT_EXACT(W, launch)                                              \
    do {                                                                             \
        CheckResult check_ = exact_check((W), (launch));                             \
        EXPECT_TRUE(check_.exact);                                                   \
        EXPECT_TRUE(check_.passed()) << "Width " << (W) << ": " << describe(check_); \
    } while (0)
