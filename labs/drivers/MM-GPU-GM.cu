// The grading driver of labs ch04.1 and ch04.2 (labs/drivers/driver.h):
// launch_matmul_gm(M, N, P, Width, block_side, accumulate_in_global).
#include "../common/handle_error.h"

// What this driver calls of MM-GPU-GM.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
void launch_matmul_gm(const float* dev_M, const float* dev_N, float* dev_P, int Width,
                      int block_side, bool accumulate_in_global);
#include "lab_driver.h"

// P = M x N. The inputs are odd multiples of 1/8, so every sum is exact in float whatever the
// order of its terms. P has a guard float past W * W that must keep the poison (NaN).
void multiply_once(Driver& d, const std::string& name, int W, int block_side, bool global_sum) {
    size_t count = (size_t)W * W, bytes = count * sizeof(float);
    std::vector<float> M(count), N(count), P(count + 1);
    for (size_t i = 0; i < count; i++) M[i] = d.rng.eighth(), N[i] = d.rng.eighth();
    float* dM = d.input(M);
    float* dN = d.input(N);
    float* dP = d.output<float>(count + 1);
    HANDLE_ERROR(cudaMemset(dP, 0xFF, bytes + sizeof(float)));
    launch_matmul_gm(dM, dN, dP, W, block_side, global_sum);
    HANDLE_ERROR(cudaMemcpy(P.data(), dP, bytes + sizeof(float), cudaMemcpyDeviceToHost));
    d.record(name, P);
    d.check_inputs(name);
    d.release(dM), d.release(dN), d.release(dP);
}

void drive(Driver& d) {
    for (int global = 0; global < 2; global++) {
        std::string g = global ? "-global" : "";
        multiply_once(d, "W1-b16" + g, 1, 16, global);
        multiply_once(d, "W33-b16" + g, 33, 16, global);
        multiply_once(d, "W100-b7" + g, 100, 7, global);
        multiply_once(d, "W64-b32" + g, 64, 32, global);
        multiply_once(d, "W20-b32" + g, 20, 32, global);  // a block larger than the matrix
        for (int k = 0; k < 2; k++) {
            int W = (int)d.rng.range(2, 260);
            multiply_once(d, "random" + std::to_string(k) + g, W, (int)d.rng.range(1, 32), global);
        }
    }
    multiply_once(d, "W1025-b16", 1025, 16, false);
}
