// dot_reference.h -- the CPU side of every check in chapter 3 (plain C++, no CUDA).
//
// A float sum computed in parallel adds the numbers in a different order than
// a loop on the CPU, so the two results usually differ in their last bits. How
// can a check still tell a right answer from a wrong one? The reference is
// computed in double (a product of two floats is exact in double: 24 + 24
// significant bits fit in 53), and the check depends on the data:
//
// 1. The original's data, a[i] = i and b[i] = 2i (all terms positive): a
//    rounding-error bound. Every float operation rounds by at most u = 2^-24
//    of its result. If each term reaches the final result through at most
//    `depth` roundings (its product, the additions along the longest chain of
//    the summation), then
//        |float result - exact sum| <= depth * u / (1 - depth * u) * sum |term|
//    (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 4). Each
//    program computes its own depth from N and its launch. With positive
//    terms, sum |term| is the answer itself, so the bound is a small fraction
//    of the answer (2e-3 at Dot-SM's depth of 32 777) and a lost block fails.
//
// 2. "--data random" (both signs): exact arithmetic, and no tolerance at all.
//    With terms of both signs the bound above is useless: the answer (about
//    sqrt(N) / 3) is tiny next to sum |term| (about N / 4), and at N = 2^28 the
//    bound allowed 73 times the answer -- 0, the sign flipped, half the blocks
//    lost, all passed. A statistical bound (sqrt(depth) instead of depth) is
//    still too loose to see one lost block among a thousand, and checking each
//    block's partial sum against the CPU's sum of the same elements has the
//    same problem one level down (and needs every program's mapping of
//    elements to blocks). So instead the values are chosen so that float
//    arithmetic makes no rounding error at all:
//
//    - every value is one of +-1/8, +-3/8, +-5/8, +-7/8 (random_eighth below);
//    - every product is then an odd multiple of 1/64, at most 49/64: exact in
//      float, and never 0;
//    - every sum of products is a multiple of 1/64, and a float holds every
//      multiple of 1/64 below 2^24 / 64 = 2^18 exactly. So every addition the
//      GPU does is exact, in whatever order, as long as no partial sum reaches
//      2^18 in magnitude.
//    - Does one? A partial sum adds some set of m <= N <= 2^31 terms; which set
//      depends on the launch, never on the values. The terms are independent,
//      have mean 0, |term| <= 49/64 and variance (21/64)^2 = 0.108, so
//      Bernstein's inequality gives
//          P(|partial| >= 2^18) <= 2 exp(-(2^36 / 2) / (0.108 m + 49/64 * 2^18 / 3))
//      which is below 1e-64 for m = 2^31 (the typical sum at N = 2^31 is
//      15 000, 17 times smaller than 2^18). A summation, on any grid, combines
//      two non-empty sets of terms at most N - 1 times, so at most 2^31
//      different partial sums are formed: the chance that any of them rounds
//      is below 1e-54. (The values come from a hash, not from dice; if this
//      ever failed, the hash would be broken.)
//    - The double reference is exact as well (multiples of 1/64 below 2^47).
//
//    So the GPU's answer must EQUAL the reference. Every wrong answer fails:
//    0 and the sign flipped (unless the dot product is 0: it never is for odd
//    N, a sum of an odd number of odd multiples of 1/64), one term left out
//    (every term is non-zero), one block's partial sum left out (unless that
//    block's terms add up to exactly 0: never for an odd number of terms, and
//    about 0.04 / sqrt(m) for m terms -- tests/ch03_dot_product checks the
//    grids of the H200 at N = 2^28, where no block sums to 0).
#pragma once

#include <cmath>
#include <cstdint>
#include "../common/random.h"

// Round-off units: the largest relative error of one rounding.
const double FLOAT_ROUNDOFF = 1.0 / 16777216.0;               // 2^-24
const double DOUBLE_ROUNDOFF = FLOAT_ROUNDOFF / 536870912.0;  // 2^-53

struct Reference {
    double sum = 0;      // the (nearly) exact result; exactly exact for the random data
    double sum_abs = 0;  // sum of |terms|: the scale of every rounding error
    long long n = 0;     // number of terms
    bool exact = false;  // the random data of this file: the GPU must match exactly
};

// sum of a[i] * b[i], in double. `exact`: the inputs are random_eighth values
// (fill_random), for which the check allows no error.
inline Reference dot_reference(const float* a, const float* b, long long n, bool exact) {
    Reference r;
    r.n = n;
    r.exact = exact;
    for (long long i = 0; i < n; i++) {
        double term = (double)a[i] * (double)b[i];  // exact
        r.sum += term;
        r.sum_abs += std::fabs(term);
    }
    return r;
}

// sum of x[i], in double.
inline Reference sum_reference(const float* x, long long n, bool exact) {
    Reference r;
    r.n = n;
    r.exact = exact;
    for (long long i = 0; i < n; i++) {
        r.sum += x[i];
        r.sum_abs += std::fabs((double)x[i]);
    }
    return r;
}

// The largest error a float computation of this reference may make when no
// term passes through more than `depth` roundings, plus the (tiny) errors of
// two double sums of n terms (the reference, and the CPU's sum of the GPU's
// partials). Infinite when the bound says nothing (depth * u >= 1).
inline double float_error_bound(long long depth, const Reference& ref) {
    double d = (double)depth * FLOAT_ROUNDOFF;
    double gpu = d < 1 ? d / (1 - d) * ref.sum_abs : INFINITY;
    double reference = 2.02 * (double)ref.n * DOUBLE_ROUNDOFF * ref.sum_abs;
    return gpu + reference;
}

// What a check allows: nothing for the exact random data, the bound otherwise.
inline double allowed_error(long long depth, const Reference& ref) {
    return ref.exact ? 0.0 : float_error_bound(depth, ref);
}

// True when `result` is right: equal to the reference for the random data,
// within the bound for the original's. A NaN (a poisoned value that was never
// overwritten) fails, because every comparison with NaN is false.
inline bool within_bound(double result, const Reference& ref, long long depth) {
    return std::fabs(result - ref.sum) <= allowed_error(depth, ref);
}

inline bool is_power_of_two(long long x) {
    return x > 0 && (x & (x - 1)) == 0;
}

// Levels of a tree that halves `x` values down to one: ceil(log2(x)).
inline int tree_levels(long long x) {
    int levels = 0;
    while ((1LL << levels) < x) levels++;
    return levels;
}

// The original's data: a[i] = i, b[i] = 2i (rounded to float above 2^24).
inline void fill_document_data(float* a, float* b, long long n) {
    for (long long i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }
}

// The random data: one of -7/8, -5/8, ..., 5/8, 7/8, each as likely, from the
// top three bits of the next SplitMix64 number (see the top of this file for
// why eighths).
inline float random_eighth(SplitMix64& rng) {
    uint64_t z = rng.next();
    int odd = 2 * (int)(z >> 62) + 1;  // 1, 3, 5 or 7
    int sign = (z >> 61) & 1 ? -1 : 1;
    return (float)(sign * odd) / 8.0f;
}

// x[0 .. n-1], the same on every machine for the same seed.
inline void fill_random(float* x, long long n, uint64_t seed) {
    SplitMix64 rng(seed);
    for (long long i = 0; i < n; i++) x[i] = random_eighth(rng);
}

// The original's check: 2 * sum_{i<N} i^2 = 2 * x(x+1)(2x+1)/6 with x = N-1,
// evaluated in float as the original does (each operation rounds; the result
// drifts from the truth as N grows) ...
inline float original_closed_form_float(long long n) {
    float x = (float)(n - 1);
    return 2 * (x * (x + 1) * (2 * x + 1) / 6);
}

// ... and exactly, in 128-bit integers, then rounded once to double.
inline double closed_form_exact(long long n) {
    unsigned __int128 x = (unsigned __int128)(n - 1);
    unsigned __int128 value = x * (x + 1) * (2 * x + 1) / 3;  // 2 * x(x+1)(2x+1)/6
    return (double)value;
}
