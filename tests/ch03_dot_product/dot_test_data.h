// What the chapter-3 GPU tests share: inputs and their double-precision reference.
#pragma once

#include <cmath>
#include <vector>
#include "gpu_test.h"
#include "../../ch03_dot_product/dot_reference.h"

enum class Data { Random, Document };

struct DotInputs {
    std::vector<float> a, b;
    Reference ref;
};

// The programs' random data (+-1/8 .. +-7/8, both signs: the sum cancels, and
// the GPU's answer must be exact), or the original's a[i] = i, b[i] = 2i (all
// positive: every term pushes the same way; checked with the rounding bound).
inline DotInputs make_dot_inputs(long long n, Data data, unsigned long long seed = 7) {
    DotInputs in;
    in.a.resize(n);
    in.b.resize(n);
    if (data == Data::Document) {
        fill_document_data(in.a.data(), in.b.data(), n);
    } else {
        fill_random(in.a.data(), n, seed);
        fill_random(in.b.data(), n, seed + 1);
    }
    in.ref = dot_reference(in.a.data(), in.b.data(), n, data == Data::Random);
    return in;
}

inline long long count_nan(const std::vector<float>& v) {
    long long count = 0;
    for (float x : v) count += std::isnan(x);
    return count;
}

// A readable failure message: the result, the reference, the error and what is allowed.
inline std::string explain(double result, const Reference& ref, long long depth) {
    char text[240];
    std::snprintf(text, sizeof text, "GPU %.9e, reference %.9e, |error| %.3e, allowed %.3e (%s)",
                  result, ref.sum, std::fabs(result - ref.sum), allowed_error(depth, ref),
                  ref.exact ? "exact data" : ("depth " + std::to_string(depth)).c_str());
    return text;
}
