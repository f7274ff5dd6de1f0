// Checks one matrix-product launch against an independent double-precision product.
#pragma once

#include <cmath>
#include <random>
#include <vector>
#include "gpu_test.h"

// The product in double, written independently of every kernel (loop order
// i-k-j, so the inner loop runs along rows of N and P, which is fast).
inline std::vector<double> reference_product(const std::vector<float>& M, const std::vector<float>& N, int W) {
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
inline double tolerance(int W) { return 8.0 * std::sqrt((double)W) * std::ldexp(1.0, -24); }

// Runs launch(dev_M, dev_N, dev_P, W) on fresh random matrices (values in
// [-1, 1]) with dev_P poisoned (NaN) beforehand; returns the relative error.
template <typename Launch>
double matmul_error(int W, Launch launch, unsigned seed = 12345) {
    std::vector<float> M((size_t)W * W), N((size_t)W * W);
    std::mt19937 rng(seed + (unsigned)W);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& m : M) m = value(rng);
    for (float& n : N) n = value(rng);
    DeviceArray<float> dev_M(M.size()), dev_N(N.size()), dev_P(M.size());
    dev_M.upload(M);
    dev_N.upload(N);
    dev_P.poison();
    launch(dev_M.ptr, dev_N.ptr, dev_P.ptr, W);
    HANDLE_ERROR(cudaDeviceSynchronize());
    return relative_error(dev_P.download(), reference_product(M, N, W));
}

// EXPECT_LE(error, tolerance) would let NaN fail with a confusing message;
// this says what happened.
#define EXPECT_PRODUCT_OK(W, launch)                                                   \
    do {                                                                               \
        double error_ = matmul_error((W), (launch));                                   \
        EXPECT_TRUE(error_ <= tolerance(W))                                            \
            << "Width " << (W) << ": relative error " << error_ << " (tolerance "       \
            << tolerance(W) << "; NaN means an element was never written)";            \
    } while (0)
