// The grading driver of labs ch06.1 and ch06.2 (labs/drivers/driver.h): run_mode(p, mode) on a
// Pipeline of n words in `chunks` chunks over `streams` streams, every mode.
//
// A schedule is host code that only queues copies and kernels: it must not be able to touch the
// data on the CPU by any route (a name, a cast, an offset from a member's address, a pointer
// found in memory). So the data the schedule moves lives in host buffers that the CPU cannot
// read or write while the schedule runs: page-aligned, pinned with cudaHostRegister (the GPU's
// copy engines reach them by DMA) and mprotect(PROT_NONE) from before run_mode until the GPU is
// done. Any CPU access to them in that time is a segmentation fault: the driver dies, the record
// is missing, the task scores 0 (tests/labs/cheats/measure_cheats.py tries it).
#include <sys/mman.h>
#include <unistd.h>
#include "streams.cu"
#include "lab_driver.h"

struct FencedHostBuffers {  // p.host_in and p.host_out replaced by protectable pinned pages
    Pipeline& p;
    word_t *own_in, *own_out;  // the Pipeline's own buffers, given back before it frees them
    size_t bytes;
    FencedHostBuffers(Pipeline& p_) : p(p_), own_in(p_.host_in), own_out(p_.host_out) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        bytes = (p.n * sizeof(word_t) + page - 1) / page * page;
        p.host_in = map_pinned();
        p.host_out = map_pinned();
        std::memcpy(p.host_in, own_in, p.n * sizeof(word_t));
    }
    word_t* map_pinned() {
        void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            std::perror("driver: mmap");
            std::exit(1);
        }
        HANDLE_ERROR(cudaHostRegister(m, bytes, cudaHostRegisterDefault));
        return (word_t*)m;
    }
    void fence(bool on) {  // on: the CPU can neither read nor write the data
        int prot = on ? PROT_NONE : PROT_READ | PROT_WRITE;
        if (mprotect(p.host_in, bytes, prot) != 0 || mprotect(p.host_out, bytes, prot) != 0) {
            std::perror("driver: mprotect");
            std::exit(1);
        }
    }
    // The schedule, fenced: the data is unreachable from the CPU until the GPU is done.
    void run(Mode mode) {
        fence(true);
        run_mode(p, mode);
        HANDLE_ERROR(cudaDeviceSynchronize());
        fence(false);
    }
    ~FencedHostBuffers() {
        fence(false);
        for (word_t* m : {p.host_in, p.host_out}) {
            HANDLE_ERROR(cudaHostUnregister(m));
            munmap(m, bytes);
        }
        p.host_in = own_in;
        p.host_out = own_out;
    }
};

// Each mode's output words, and how many guard words of the device buffers were written.
void schedule_once(Driver& d, const std::string& name, long long n, int chunks, int streams,
                   int max_blocks) {
    Pipeline p(n, chunks, streams, max_blocks);
    FencedHostBuffers fenced(p);
    p.steps = 3;
    for (int m = 0; m < MODES; m++) {
        for (long long i = 0; i < n; i++) p.host_in[i] = (word_t)d.rng.next();
        poison(p.dev_in, p.guard + 1);
        poison(p.dev_out, p.guard + 1);
        std::memset(p.host_out, 0xFF, n * sizeof(word_t));
        HANDLE_ERROR(cudaDeviceSynchronize());
        fenced.run((Mode)m);
        std::vector<uint32_t> out(p.host_out, p.host_out + n);
        out.push_back(
            (uint32_t)(guards_written(p.dev_in, p.guard) + guards_written(p.dev_out, p.guard)));
        d.record(name + "." + MODE_NAMES[m], out);
    }
}

std::string shape_name(long long n, int chunks, int streams, int blocks) {
    return "n" + std::to_string(n) + "-" + std::to_string(chunks) + "c-" + std::to_string(streams) +
           "s-" + std::to_string(blocks) + "b";
}

void drive(Driver& d) {
    if (d.timing()) {  // the performance gate: the depth-first schedule at the drawn shape
        long long n = d.param("n");
        int chunks = (int)d.param("chunks"), streams = (int)d.param("streams");
        Pipeline p(n, chunks, streams, 1024);
        FencedHostBuffers fenced(p);
        p.steps = 64;
        for (long long i = 0; i < n; i++) p.host_in[i] = (word_t)d.rng.next();
        d.timed_launches(
            "depth-first", 5,
            [&] {
                poison(p.dev_in, p.guard + 1);
                poison(p.dev_out, p.guard + 1);
                std::memset(p.host_out, 0xFF, n * sizeof(word_t));
                fenced.fence(true);
            },
            [&] { run_mode(p, DEPTH_FIRST); },
            [&](const std::string& name) {
                HANDLE_ERROR(cudaDeviceSynchronize());
                fenced.fence(false);
                d.digest(name, std::vector<uint32_t>(p.host_out, p.host_out + n));
            });
        return;
    }
    if (d.sanitize()) {  // the shapes the grader drew (labs.json: sanitize.shapes)
        for (size_t k = 0; k < d.shapes("n"); k++) {
            long long n = d.param("n", k);
            int chunks = (int)d.param("chunks", k), streams = (int)d.param("streams", k);
            int blocks = (int)d.param("blocks", k);
            schedule_once(d, shape_name(n, chunks, streams, blocks), n, chunks, streams, blocks);
        }
        return;
    }
    schedule_once(d, "n1-1c-2s", 1, 1, 2, 1);
    schedule_once(d, "n1000-7c-3s", 1000, 7, 3, 4);  // chunks that do not divide n nor the streams
    schedule_once(d, "n100000-16c-4s", 100000, 16, 4, 64);
    long long n = d.rng.range(64, 300000);
    int chunks = (int)d.rng.range(1, 40);
    schedule_once(d, "random", n, chunks, (int)d.rng.range(2, std::max(2, chunks)),
                  (int)d.rng.range(1, 200));
}
