// dot_reference.h -- the CPU side of every check in chapter 3 (plain C++, no CUDA).
//
// A float sum computed in parallel adds the numbers in a different order than
// a loop on the CPU, so the two results differ in their last bits, and the
// question "is the GPU right?" becomes "is the GPU within the rounding error
// that float arithmetic allows?". This file answers it:
//
//  * the reference is computed in double: a product of two floats is exact in
//    double (24 + 24 significant bits fit in 53), and the double running sum
//    is 2^29 times more precise than any float result we check;
//  * every float operation rounds by at most u = 2^-24 of its result. If each
//    term reaches the final result through at most `depth` roundings (its
//    product, the additions along the longest chain of the summation), then
//        |float result - exact sum| <= depth * u / (1 - depth * u) * sum |term|
//    (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 4).
//    Each program computes its own depth from N and its launch: a thread that
//    adds up L elements, a tree of log2(T) levels, the final pass.
//
// The bound is scaled by sum |term|, not by the result: with data of both
// signs the dot product can be much smaller than its terms (cancellation),
// and the rounding errors are made on the terms, not on the result.
#pragma once

#include <cmath>
#include <cstdint>

// Round-off units: the largest relative error of one rounding.
const double FLOAT_ROUNDOFF = 1.0 / 16777216.0;           // 2^-24
const double DOUBLE_ROUNDOFF = FLOAT_ROUNDOFF / 536870912.0;  // 2^-53

struct Reference {
    double sum = 0;      // the (nearly) exact result
    double sum_abs = 0;  // sum of |terms|: the scale of every rounding error
    long long n = 0;     // number of terms
};

// sum of a[i] * b[i], in double.
inline Reference dot_reference(const float* a, const float* b, long long n) {
    Reference r;
    r.n = n;
    for (long long i = 0; i < n; i++) {
        double term = (double)a[i] * (double)b[i];  // exact
        r.sum += term;
        r.sum_abs += std::fabs(term);
    }
    return r;
}

// sum of x[i], in double.
inline Reference sum_reference(const float* x, long long n) {
    Reference r;
    r.n = n;
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

// True when `result` lies within the bound. A NaN (a poisoned value that was
// never overwritten) fails, because every comparison with NaN is false.
inline bool within_bound(double result, const Reference& ref, long long depth) {
    return std::fabs(result - ref.sum) <= float_error_bound(depth, ref);
}

inline bool is_power_of_two(long long x) { return x > 0 && (x & (x - 1)) == 0; }

// Levels of a tree that halves `x` values down to one: ceil(log2(x)).
inline int tree_levels(long long x) {
    int levels = 0;
    while ((1LL << levels) < x) levels++;
    return levels;
}

inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// The document's data: a[i] = i, b[i] = 2i (rounded to float above 2^24).
inline void fill_document_data(float* a, float* b, long long n) {
    for (long long i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }
}

// Reproducible pseudo-random floats in [lo, hi), fast enough for 2^28 values:
// each value is a hash of (seed, i) -- the "splitmix64" mixer.
inline float hashed_uniform(unsigned long long seed, long long i, float lo, float hi) {
    unsigned long long z = seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)i * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    float unit = (float)(z >> 40) / 16777216.0f;  // 24 random bits: [0, 1)
    return lo + (hi - lo) * unit;
}

inline void fill_random(float* x, long long n, unsigned long long seed, float lo, float hi) {
    for (long long i = 0; i < n; i++) x[i] = hashed_uniform(seed, i, lo, hi);
}

// The document's check: 2 * sum_{i<N} i^2 = 2 * x(x+1)(2x+1)/6 with x = N-1,
// evaluated in float as the document does (each operation rounds; the result
// drifts from the truth as N grows) ...
inline float document_closed_form_float(long long n) {
    float x = (float)(n - 1);
    return 2 * (x * (x + 1) * (2 * x + 1) / 6);
}

// ... and exactly, in 128-bit integers, then rounded once to double.
inline double closed_form_exact(long long n) {
    unsigned __int128 x = (unsigned __int128)(n - 1);
    unsigned __int128 value = x * (x + 1) * (2 * x + 1) / 3;  // 2 * x(x+1)(2x+1)/6
    return (double)value;
}
