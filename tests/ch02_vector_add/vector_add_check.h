// Checks one vector-add launch against an independent CPU sum.
#pragma once

#include <random>
#include <vector>
#include "gpu_test.h"

// Runs launch(dev_a, dev_b, dev_c, n) on random 41-bit integers with the output
// poisoned beforehand, and returns how many elements differ from a[i] + b[i].
template <typename Launch>
long long count_wrong_vector_add(long long n, Launch launch, unsigned seed = 12345) {
    std::vector<long long> a(n), b(n);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<long long> value(-(1LL << 40), 1LL << 40);
    for (long long i = 0; i < n; i++) {
        a[i] = value(rng);
        b[i] = value(rng);
    }
    DeviceArray<long long> dev_a(n), dev_b(n), dev_c(n);
    dev_a.upload(a);
    dev_b.upload(b);
    dev_c.poison();
    launch(dev_a.ptr, dev_b.ptr, dev_c.ptr, n);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<long long> c = dev_c.download();
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (c[i] != a[i] + b[i]);
    return wrong;
}

// The document's data, a[i] = -i and b[i] = i*i, checked against the closed
// form i*i - i: at N = 2^24, i*i reaches 2^48, far past the 32-bit range.
template <typename Launch>
long long count_wrong_document_data(long long n, Launch launch) {
    std::vector<long long> a(n), b(n);
    for (long long i = 0; i < n; i++) {
        a[i] = -i;
        b[i] = i * i;
    }
    DeviceArray<long long> dev_a(n), dev_b(n), dev_c(n);
    dev_a.upload(a);
    dev_b.upload(b);
    dev_c.poison();
    launch(dev_a.ptr, dev_b.ptr, dev_c.ptr, n);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<long long> c = dev_c.download();
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (c[i] != i * i - i);
    return wrong;
}
