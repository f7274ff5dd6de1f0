// The grading driver of lab ch03.2 (labs/drivers/driver.h):
// launch_dot_warp(a, b, partial, result, n, blocks, threads).
#include "../common/handle_error.h"

// What this driver calls of Dot-SM-Warp.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
void launch_dot_warp(const float* dev_a, const float* dev_b, float* dev_partial, float* dev_result,
                     long long n, int blocks, int threads);
#include "lab_driver.h"

// The partial sums (a guard past them keeps the poison, NaN) and the total.
void dot_once(Driver& d, const std::string& name, long long n, int blocks, int threads) {
    std::vector<float> a(n), b(n), partial(blocks + 1), result(1);
    for (long long i = 0; i < n; i++) a[i] = d.rng.unit(), b[i] = d.rng.unit();
    float* da = d.input(a);
    float* db = d.input(b);
    float* dp = d.output<float>(blocks + 1);
    float* dr = d.output<float>(1);
    HANDLE_ERROR(cudaMemset(dp, 0xFF, (blocks + 1) * sizeof(float)));
    HANDLE_ERROR(cudaMemset(dr, 0xFF, sizeof(float)));
    launch_dot_warp(da, db, dp, dr, n, blocks, threads);
    HANDLE_ERROR(
        cudaMemcpy(partial.data(), dp, (blocks + 1) * sizeof(float), cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaMemcpy(result.data(), dr, sizeof(float), cudaMemcpyDeviceToHost));
    d.record(name + ".partial", partial);
    d.record(name + ".total", result);
    d.check_inputs(name);
    d.release(da), d.release(db), d.release(dp), d.release(dr);
}

void drive(Driver& d) {
    // The program reads a and b as float4: their starts must stay 16-byte aligned when they end
    // at their guard (the reference itself fails otherwise: misaligned address at odd n).
    d.memory.end_align = 16;
    dot_once(d, "n1-1x32", 1, 1, 32);
    dot_once(d, "n7-1x1024", 7, 1, 1024);
    dot_once(d, "n1000-3x96", 1000, 3, 96);  // 3 warps a block: not a power of two
    dot_once(d, "n100003-5x160", 100003, 5, 160);
    dot_once(d, "n1048579-132x256", (1 << 20) + 3, 132, 256);
    dot_once(d, "n5000-1500x32", 5000, 1500, 32);  // more partials than the second pass's threads
    for (int k = 0; k < 2; k++) {
        long long n = d.rng.range(2, 500000);
        dot_once(d, "random" + std::to_string(k), n, (int)d.rng.range(1, 400),
                 32 * (int)d.rng.range(1, 32));
    }
}
