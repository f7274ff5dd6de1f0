// The grading driver of lab ch03.2 (labs/drivers/driver.h):
// launch_dot_warp(a, b, partial, result, n, blocks, threads).
#include "Dot-SM-Warp.cu"
#include "lab_driver.h"

// The partial sums (a guard past them keeps the poison, NaN) and the total.
void dot_once(Driver& d, const std::string& name, long long n, int blocks, int threads) {
    std::vector<float> a(n), b(n), partial(blocks + 1), result(1);
    for (long long i = 0; i < n; i++) a[i] = d.rng.unit(), b[i] = d.rng.unit();
    float *da, *db, *dp, *dr;
    HANDLE_ERROR(cudaMalloc(&da, n * sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&db, n * sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&dp, (blocks + 1) * sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&dr, sizeof(float)));
    HANDLE_ERROR(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemset(dp, 0xFF, (blocks + 1) * sizeof(float)));
    HANDLE_ERROR(cudaMemset(dr, 0xFF, sizeof(float)));
    launch_dot_warp(da, db, dp, dr, n, blocks, threads);
    HANDLE_ERROR(
        cudaMemcpy(partial.data(), dp, (blocks + 1) * sizeof(float), cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaMemcpy(result.data(), dr, sizeof(float), cudaMemcpyDeviceToHost));
    d.record(name + ".partial", partial);
    d.record(name + ".total", result);
    HANDLE_ERROR(cudaFree(da));
    HANDLE_ERROR(cudaFree(db));
    HANDLE_ERROR(cudaFree(dp));
    HANDLE_ERROR(cudaFree(dr));
}

void drive(Driver& d) {
    if (d.sanitize()) {  // the shapes the grader drew (labs.json: sanitize.shapes)
        for (size_t k = 0; k < d.shapes("n"); k++) {
            long long n = d.param("n", k);
            int blocks = (int)d.param("blocks", k), threads = 32 * (int)d.param("warps", k);
            dot_once(d,
                     "n" + std::to_string(n) + "-" + std::to_string(blocks) + "x" +
                         std::to_string(threads),
                     n, blocks, threads);
        }
        return;
    }
    dot_once(d, "n1-1x32", 1, 1, 32);
    dot_once(d, "n7-1x1024", 7, 1, 1024);
    dot_once(d, "n1000-3x96", 1000, 3, 96);  // 3 warps a block: not a power of two
    dot_once(d, "n100003-5x160", 100003, 5, 160);
    dot_once(d, "n1048579-132x256", (1 << 20) + 3, 132, 256);
    dot_once(d, "n5000-1500x32", 5000, 1500, 32);  // more partials than the second pass's threads
    long long n = d.rng.range(2, 500000);
    dot_once(d, "random", n, (int)d.rng.range(1, 400), 32 * (int)d.rng.range(1, 32));
}
