// The grading driver of lab ch03.1 (labs/drivers/driver.h): launch_dot(a, b, partial, n, blocks).
#include "../common/handle_error.h"

// What this driver calls of Dot-SM.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
void launch_dot(const float* dev_a, const float* dev_b, float* dev_partial, long long n,
                int blocks);
#include "lab_driver.h"

// One partial sum per block, and a guard past them that must keep the poison (NaN).
void dot_once(Driver& d, const std::string& name, long long n, int blocks) {
    std::vector<float> a(n), b(n), partial(blocks + 1);
    for (long long i = 0; i < n; i++) a[i] = d.rng.unit(), b[i] = d.rng.unit();
    float* da = d.input(a);
    float* db = d.input(b);
    float* dp = d.output<float>(blocks + 1);
    HANDLE_ERROR(cudaMemset(dp, 0xFF, (blocks + 1) * sizeof(float)));
    launch_dot(da, db, dp, n, blocks);
    HANDLE_ERROR(
        cudaMemcpy(partial.data(), dp, (blocks + 1) * sizeof(float), cudaMemcpyDeviceToHost));
    d.record(name, partial);
    d.check_inputs(name);
    d.release(da), d.release(db), d.release(dp);
}

void drive(Driver& d) {
    dot_once(d, "n1-blocks1", 1, 1);
    dot_once(d, "n255-blocks1", 255, 1);
    dot_once(d, "n257-blocks2", 257, 2);
    dot_once(d, "n1000-blocks40", 1000, 40);  // blocks with nothing to add
    dot_once(d, "n1048579-blocks64", (1 << 20) + 3, 64);
    for (int k = 0; k < 2; k++) {
        long long n = d.rng.range(2, 500000);
        dot_once(d, "random" + std::to_string(k), n, (int)d.rng.range(1, 300));
    }
}
