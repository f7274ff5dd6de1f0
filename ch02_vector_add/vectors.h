// vectors.h -- what VA-GPU-11, VA-GPU-N1 and VA-GPU-NN share, so that each
// program's main() keeps to its lesson and the three differ only in the launch.
//
// The data is the original's: a[i] = -i and b[i] = i*i, so c[i] = i*i - i.
// Every array has one element more than the vector, a guard at [n]: a[n] =
// b[n] = 0, and c[n] must still hold the poison after the kernel. If it does
// not, the kernel wrote past the end (as a loop bound of i <= n would).
#pragma once
#include <cstdio>
#include <string>
#include "../common/args.h"

// 64-bit integers: the original's `int` overflows once i*i passes 2^31 - 1.
typedef long long elem_t;

// 3e9 elements: 72 GB for a, b and c on the host, 72 GB on an H200 (141 GB).
const long long MAX_N = 3000000000LL;

// Bytes of one array: n elements and the guard. Refuses a size that overflows.
inline size_t guarded_bytes(const Args& args, long long n) {
    return checked_bytes(args, n + 1, sizeof(elem_t), 1);
}

inline void fill_inputs(elem_t* a, elem_t* b, long long n) {
    for (long long i = 0; i < n; i++) {
        a[i] = -i;
        b[i] = i * i;
    }
    a[n] = b[n] = 0;  // the guard
}

// The check, on the CPU, of every element: c[i] must be the CPU's a[i] + b[i],
// and with the original's data that is i*i - i, worked out here in 64 bits
// whatever elem_t is (so a type too narrow for i*i, like the original's int,
// fails). -1, the poison, is never a right answer.
struct SumCheck {
    long long n = 0, wrong = 0, first_wrong = -1;
    bool past_the_end = false;  // the guard c[n] was written

    bool pass() const { return wrong == 0 && !past_the_end; }
    std::string detail() const {
        char text[160];
        if (wrong)
            std::snprintf(text, sizeof text, "%lld of %lld elements wrong, first at i = %lld",
                          wrong, n, first_wrong);
        else if (past_the_end)
            std::snprintf(text, sizeof text, "the kernel wrote past the end (guard c[%lld])", n);
        else
            std::snprintf(text, sizeof text, "all %lld elements match the CPU", n);
        return text;
    }
};

inline SumCheck check_sums(const elem_t* a, const elem_t* b, const elem_t* c, long long n) {
    SumCheck check;
    check.n = n;
    for (long long i = 0; i < n; i++) {
        if (c[i] != a[i] + b[i] || c[i] != i * i - i) {
            if (check.wrong++ == 0) check.first_wrong = i;
        }
    }
    check.past_the_end = (c[n] != (elem_t)-1);
    return check;
}

// A long run says so first. The rates are conservative: a thread alone on the
// GPU adds 10 million elements a second (an H200's: 16 million), one of many 4
// million (an H200's: 5.4 million), the GPU in all at most 5 billion (an H200:
// 35 billion); the host fills, copies and checks 50 million a second (the H200
// machine's: about 90 million).
inline void announce_vector_add(long long n, long long gpu_threads, int launches) {
    double per_thread = gpu_threads == 1 ? 1e7 : 4e6;
    double gpu_rate = gpu_threads * per_thread < 5e9 ? gpu_threads * per_thread : 5e9;
    announce_long_run(launches * (n / gpu_rate) + n / 5e7,
                      gpu_threads == 1
                          ? "estimated for one GPU thread adding 10 million "
                            "elements a second"
                          : "estimated for 4 million elements a second per GPU thread");
}
