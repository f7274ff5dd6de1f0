// The grading driver of lab ch02.2 (labs/drivers/driver.h): launch_add(a, b, c, n, blocks,
// threads). Its timed runs are not here: labs/drivers/launcher.cu times the student's kernel.
#include "../common/handle_error.h"

// What this driver calls of VA-GPU-NN.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
typedef long long elem_t;  // vectors.h's
void launch_add(const elem_t* dev_a, const elem_t* dev_b, elem_t* dev_c, long long n, int blocks,
                int threads);
#include "lab_driver.h"

struct Vectors {  // a and b, guarded inputs; c with one guard element past n (see VA-GPU-N1's)
    Driver& d;
    long long n;
    elem_t *da, *db, *dc;
    Vectors(Driver& d_, long long n_) : d(d_), n(n_) {
        std::vector<long long> a(n), b(n);
        for (long long i = 0; i < n; i++)
            a[i] = d.rng.range(-(1LL << 40), 1LL << 40),
            b[i] = d.rng.range(-(1LL << 40), 1LL << 40);
        da = d.input(a), db = d.input(b);
        dc = d.output<elem_t>(n + 1);
        poison();
    }
    size_t out_bytes() const { return (n + 1) * sizeof(long long); }
    void poison() { HANDLE_ERROR(cudaMemset(dc, 0xFF, out_bytes())); }  // the guard: -1
    std::vector<long long> result() const {
        std::vector<long long> c(n + 1);
        HANDLE_ERROR(cudaMemcpy(c.data(), dc, out_bytes(), cudaMemcpyDeviceToHost));
        return c;
    }
    ~Vectors() { d.release(da), d.release(db), d.release(dc); }
};

void add_once(Driver& d, const std::string& name, long long n, int blocks, int threads) {
    Vectors v(d, n);
    launch_add(v.da, v.db, v.dc, n, blocks, threads);
    d.record(name, v.result());
    d.check_inputs(name);
}

void drive(Driver& d) {
    static_assert(sizeof(elem_t) == sizeof(long long), "the driver expects 64-bit elements");
    add_once(d, "n1-1x1", 1, 1, 1);
    add_once(d, "n1000-3x37", 1000, 3, 37);
    add_once(d, "n100-4x1024", 100, 4, 1024);  // more threads than elements
    add_once(d, "n1000003-64x256", 1000003, 64, 256);
    add_once(d, "n65536-128x128", 65536, 128, 128);
    for (int k = 0; k < 2; k++) {
        long long n = d.rng.range(2, 400000);
        add_once(d, "random" + std::to_string(k), n, (int)d.rng.range(1, 300),
                 (int)d.rng.range(1, 1024));
    }
}
