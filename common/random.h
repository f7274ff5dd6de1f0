// common/random.h -- the same random numbers on every machine.
//
// rand() differs between C libraries, so a test that passes with one could
// fail with another. SplitMix64 (Steele, Lea and Flood, 2014) is a few lines
// of arithmetic, fast, good enough for test data, and identical everywhere.
#pragma once
#include <cstdint>

struct SplitMix64 {
    uint64_t state;
    explicit SplitMix64(uint64_t seed) : state(seed) {}

    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1), with the 53 bits a double holds.
    double uniform() { return (next() >> 11) * 0x1.0p-53; }
    // Uniform in [0, n).
    uint64_t below(uint64_t n) { return next() % n; }
};
