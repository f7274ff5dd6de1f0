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

// Random values in [-1, 1] (both signs: the sum cancels), or the document's
// a[i] = i, b[i] = 2i (all positive: every term pushes the same way).
inline DotInputs make_dot_inputs(long long n, Data data, unsigned long long seed = 7) {
    DotInputs in;
    in.a.resize(n);
    in.b.resize(n);
    if (data == Data::Document) {
        fill_document_data(in.a.data(), in.b.data(), n);
    } else {
        fill_random(in.a.data(), n, seed, -1.0f, 1.0f);
        fill_random(in.b.data(), n, seed + 1, -1.0f, 1.0f);
    }
    in.ref = dot_reference(in.a.data(), in.b.data(), n);
    return in;
}

inline long long count_nan(const std::vector<float>& v) {
    long long count = 0;
    for (float x : v) count += std::isnan(x);
    return count;
}

// A readable failure message: the result, the reference, the error and the bound.
inline std::string explain(double result, const Reference& ref, long long depth) {
    char text[240];
    std::snprintf(text, sizeof text, "GPU %.9e, reference %.9e, |error| %.3e, bound %.3e (depth %lld)", result,
                  ref.sum, std::fabs(result - ref.sum), float_error_bound(depth, ref), depth);
    return text;
}
