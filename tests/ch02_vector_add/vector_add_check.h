// Checks one vector-add launch against an independent CPU sum.
//
// Include it after the program's .cu: it uses the program's own element type
// elem_t, so a program built with a type too narrow for its data (the
// original's int) is tested as it was built. Expected values are worked out in
// 64-bit arithmetic whatever elem_t is.
#pragma once

#include <functional>
#include <random>
#include <vector>
#include "gpu_test.h"

// Runs launch(dev_a, dev_b, dev_c, n) with the output poisoned beforehand, and
// returns how many of c[0..n) differ from expected(i), plus one when the kernel
// wrote past the end. Each device array has a guard element at [n]: a[n] =
// b[n] = 0, and c[n] must keep the poison (-1), which a loop bound of
// i <= n would overwrite.
template <typename Launch>
long long count_wrong_after_launch(const std::vector<elem_t>& a_data,
                                   const std::vector<elem_t>& b_data, Launch launch,
                                   const std::function<long long(long long)>& expected) {
    long long n = (long long)a_data.size();
    // Element by element rather than a vector copy: g++ 13 warns (wrongly) on
    // the copy of a one-element vector at -O3, and warnings are errors in CI.
    std::vector<elem_t> a(n + 1, 0), b(n + 1, 0);
    for (long long i = 0; i < n; i++) {
        a[i] = a_data[i];
        b[i] = b_data[i];
    }
    DeviceArray<elem_t> dev_a(n + 1), dev_b(n + 1), dev_c(n + 1);
    dev_a.upload(a);
    dev_b.upload(b);
    dev_c.poison();
    launch(dev_a.ptr, dev_b.ptr, dev_c.ptr, n);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<elem_t> c = dev_c.download();
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += ((long long)c[i] != expected(i));
    wrong += (c[n] != (elem_t)-1);  // the guard was written
    return wrong;
}

// Random non-negative 41-bit integers: their sums need more than 32 bits, and
// are never -1, the poison.
template <typename Launch>
long long count_wrong_vector_add(long long n, Launch launch, unsigned seed = 12345) {
    std::vector<elem_t> a(n), b(n);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<long long> value(0, 1LL << 41);
    for (long long i = 0; i < n; i++) {
        a[i] = value(rng);
        b[i] = value(rng);
    }
    return count_wrong_after_launch(a, b, launch,
                                    [&](long long i) { return (long long)a[i] + (long long)b[i]; });
}

// The original's data, a[i] = -i and b[i] = i*i, checked against the closed
// form i*i - i: at N = 2^24, i*i reaches 2^48, far past the 32-bit range.
template <typename Launch>
long long count_wrong_document_data(long long n, Launch launch) {
    std::vector<elem_t> a(n), b(n);
    for (long long i = 0; i < n; i++) {
        a[i] = -i;
        b[i] = i * i;
    }
    return count_wrong_after_launch(a, b, launch, [](long long i) { return i * i - i; });
}
