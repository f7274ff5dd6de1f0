// The grading driver of lab ch02.2 (labs/drivers/driver.h): launch_add(a, b, c, n, blocks,
// threads).
#include "VA-GPU-NN.cu"
#include "lab_driver.h"

struct Vectors {  // a, b and c with one guard element past n (see VA-GPU-N1's driver)
    long long n;
    std::vector<long long> a, b;
    elem_t *da, *db, *dc;
    Vectors(Driver& d, long long n_) : n(n_), a(n_ + 1), b(n_ + 1) {
        for (long long i = 0; i <= n; i++)
            a[i] = d.rng.range(-(1LL << 40), 1LL << 40),
            b[i] = d.rng.range(-(1LL << 40), 1LL << 40);
        HANDLE_ERROR(cudaMalloc(&da, bytes()));
        HANDLE_ERROR(cudaMalloc(&db, bytes()));
        HANDLE_ERROR(cudaMalloc(&dc, bytes()));
        HANDLE_ERROR(cudaMemcpy(da, a.data(), bytes(), cudaMemcpyHostToDevice));
        HANDLE_ERROR(cudaMemcpy(db, b.data(), bytes(), cudaMemcpyHostToDevice));
        HANDLE_ERROR(cudaMemset(dc, 0xFF, bytes()));
    }
    size_t bytes() const { return (n + 1) * sizeof(long long); }
    std::vector<long long> result() const {
        std::vector<long long> c(n + 1);
        HANDLE_ERROR(cudaMemcpy(c.data(), dc, bytes(), cudaMemcpyDeviceToHost));
        return c;
    }
    ~Vectors() {
        HANDLE_ERROR(cudaFree(da));
        HANDLE_ERROR(cudaFree(db));
        HANDLE_ERROR(cudaFree(dc));
    }
};

void add_once(Driver& d, const std::string& name, long long n, int blocks, int threads) {
    Vectors v(d, n);
    launch_add(v.da, v.db, v.dc, n, blocks, threads);
    d.record(name, v.result());
}

void drive(Driver& d) {
    static_assert(sizeof(elem_t) == sizeof(long long), "the driver expects 64-bit elements");
    if (d.timing()) {  // the performance gate: the drawn n and threads, a grid that fills the GPU
        long long n = d.param("n");
        int threads = (int)d.param("threads");
        Vectors v(d, n);
        int blocks = blocks_to_fill_gpu(add, threads);
        d.timed_launches(
            "kernel", 20, [&] { HANDLE_ERROR(cudaMemset(v.dc, 0xFF, v.bytes())); },
            [&] { launch_add(v.da, v.db, v.dc, n, blocks, threads); },
            [&](const std::string& name) {
                d.digest_value(name, d.device_digest(v.dc, v.bytes()));
            });
        return;
    }
    if (d.sanitize()) {  // the shapes the grader drew (labs.json: sanitize.shapes)
        for (size_t k = 0; k < d.shapes("n"); k++) {
            long long n = d.param("n", k);
            int blocks = (int)d.param("blocks", k), threads = (int)d.param("threads", k);
            add_once(d,
                     "n" + std::to_string(n) + "-" + std::to_string(blocks) + "x" +
                         std::to_string(threads),
                     n, blocks, threads);
        }
        return;
    }
    add_once(d, "n1-1x1", 1, 1, 1);
    add_once(d, "n1000-3x37", 1000, 3, 37);
    add_once(d, "n100-4x1024", 100, 4, 1024);  // more threads than elements
    add_once(d, "n1000003-64x256", 1000003, 64, 256);
    add_once(d, "n65536-128x128", 65536, 128, 128);
    long long n = d.rng.range(2, 400000);
    add_once(d, "random", n, (int)d.rng.range(1, 300), (int)d.rng.range(1, 1024));
}
