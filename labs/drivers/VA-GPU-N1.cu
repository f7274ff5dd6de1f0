// The grading driver of lab ch02.1 (labs/drivers/driver.h): launch_add(a, b, c, n, blocks).
#include "VA-GPU-N1.cu"
#include "lab_driver.h"

// c = a + b for n elements on `blocks` blocks; a, b and c have one guard element past n: a and
// b hold random values there, c the poison (-1), so a write of c[n] shows in the record.
void add_once(Driver& d, const std::string& name, long long n, int blocks) {
    std::vector<long long> a(n + 1), b(n + 1), c(n + 1, -1);
    for (long long i = 0; i <= n; i++)
        a[i] = d.rng.range(-(1LL << 40), 1LL << 40), b[i] = d.rng.range(-(1LL << 40), 1LL << 40);
    size_t bytes = (n + 1) * sizeof(long long);
    elem_t *da, *db, *dc;
    HANDLE_ERROR(cudaMalloc(&da, bytes));
    HANDLE_ERROR(cudaMalloc(&db, bytes));
    HANDLE_ERROR(cudaMalloc(&dc, bytes));
    HANDLE_ERROR(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemset(dc, 0xFF, bytes));
    launch_add(da, db, dc, n, blocks);
    HANDLE_ERROR(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
    d.record(name, c);
    HANDLE_ERROR(cudaFree(da));
    HANDLE_ERROR(cudaFree(db));
    HANDLE_ERROR(cudaFree(dc));
}

void drive(Driver& d) {
    static_assert(sizeof(elem_t) == sizeof(long long), "the driver expects 64-bit elements");
    if (d.sanitize()) {  // the shapes the grader drew (labs.json: sanitize.shapes)
        for (size_t k = 0; k < d.shapes("n"); k++) {
            long long n = d.param("n", k);
            int blocks = (int)d.param("blocks", k);
            add_once(d, "n" + std::to_string(n) + "-blocks" + std::to_string(blocks), n, blocks);
        }
        return;
    }
    add_once(d, "n1-blocks1", 1, 1);
    add_once(d, "n7-blocks3", 7, 3);
    add_once(d, "n100-blocks160", 100, 160);  // more blocks than elements
    add_once(d, "n100003-blocks96", 100003, 96);
    long long n = d.rng.range(2, 300000);
    add_once(d, "random", n, (int)d.rng.range(1, 500));
    add_once(d, "n1048589-blocks97", (1 << 20) + 13, 97);
}
