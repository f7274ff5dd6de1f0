// The grading driver of lab ch04.3 (labs/drivers/driver.h): launch_matmul_sm(M, N, P, Width).
// Its timed runs are not here: labs/drivers/launcher.cu times the student's kernel itself.
#include "../common/handle_error.h"

// What this driver calls of MM-GPU-SM.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
void launch_matmul_sm(const float* dev_M, const float* dev_N, float* dev_P, int Width);
#include "lab_driver.h"

// P = M x N with inputs that make every sum exact (see MM-GPU-GM's driver); a guard past P.
void multiply_once(Driver& d, const std::string& name, int W) {
    size_t count = (size_t)W * W;
    std::vector<float> M(count), N(count), P(count + 1);
    for (size_t i = 0; i < count; i++) M[i] = d.rng.eighth(), N[i] = d.rng.eighth();
    float* dM = d.input(M);
    float* dN = d.input(N);
    float* dP = d.output<float>(count + 1);
    HANDLE_ERROR(cudaMemset(dP, 0xFF, (count + 1) * sizeof(float)));
    launch_matmul_sm(dM, dN, dP, W);
    HANDLE_ERROR(cudaMemcpy(P.data(), dP, (count + 1) * sizeof(float), cudaMemcpyDeviceToHost));
    d.record(name, P);
    d.check_inputs(name);
    d.release(dM), d.release(dN), d.release(dP);
}

void drive(Driver& d) {
    multiply_once(d, "W1", 1);
    multiply_once(d, "W31", 31);
    multiply_once(d, "W33", 33);
    multiply_once(d, "W64", 64);
    multiply_once(d, "W95", 95);
    for (int k = 0; k < 2; k++)
        multiply_once(d, "random" + std::to_string(k), (int)d.rng.range(2, 200));
    // Past the random range, and not a multiple of the tile (6 tiles of 32 and 9 columns). The
    // sizes are the racecheck run's cost (it runs these shapes too, twice, as every run does):
    // alone on an H200 it took 10.0 s and 42 CPU-s at W <= 321, 5.6 s and 12 CPU-s at W <= 201
    // (W = 513 had been 90% of the multiply-adds); the large widths are the timed shapes', where
    // every launch's product is checked (perf.shapes: 768 to 1280).
    multiply_once(d, "W201", 201);
}
