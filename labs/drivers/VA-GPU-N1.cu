// The grading driver of lab ch02.1 (labs/drivers/driver.h): launch_add(a, b, c, n, blocks).
#include "../common/handle_error.h"

// What this driver calls of VA-GPU-N1.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
typedef long long elem_t;  // vectors.h's
void launch_add(const elem_t* dev_a, const elem_t* dev_b, elem_t* dev_c, long long n, int blocks);
#include "lab_driver.h"

// c = a + b for n elements on `blocks` blocks; c has one guard element past n, which must keep
// the poison (-1); a and b end where their memory ends (driver.h), so a read of a[n] faults.
void add_once(Driver& d, const std::string& name, long long n, int blocks) {
    std::vector<long long> a(n), b(n), c(n + 1, -1);
    for (long long i = 0; i < n; i++)
        a[i] = d.rng.range(-(1LL << 40), 1LL << 40), b[i] = d.rng.range(-(1LL << 40), 1LL << 40);
    elem_t* da = d.input(a);
    elem_t* db = d.input(b);
    elem_t* dc = d.output<elem_t>(n + 1);
    HANDLE_ERROR(cudaMemset(dc, 0xFF, (n + 1) * sizeof(elem_t)));
    launch_add(da, db, dc, n, blocks);
    HANDLE_ERROR(cudaMemcpy(c.data(), dc, (n + 1) * sizeof(elem_t), cudaMemcpyDeviceToHost));
    d.record(name, c);
    d.check_inputs(name);
    d.release(da), d.release(db), d.release(dc);
}

void drive(Driver& d) {
    static_assert(sizeof(elem_t) == sizeof(long long), "the driver expects 64-bit elements");
    add_once(d, "n1-blocks1", 1, 1);
    add_once(d, "n7-blocks3", 7, 3);
    add_once(d, "n100-blocks160", 100, 160);  // more blocks than elements
    add_once(d, "n100003-blocks96", 100003, 96);
    for (int k = 0; k < 2; k++) {
        long long n = d.rng.range(2, 300000);
        add_once(d, "random" + std::to_string(k), n, (int)d.rng.range(1, 500));
    }
    add_once(d, "n1048589-blocks97", (1 << 20) + 13, 97);
}
