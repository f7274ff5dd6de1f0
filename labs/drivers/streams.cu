// The grading driver of labs ch06.1 and ch06.2 (labs/drivers/driver.h): run_mode(p, mode) on a
// Pipeline of n words in `chunks` chunks over `streams` streams, every mode.
#include "streams.cu"
#include "lab_driver.h"

// Each mode's output words, and how many guard words of the device buffers were written. The
// schedule's input is host memory (p.host_in): after every mode it must still be the driver's.
void schedule_once(Driver& d, const std::string& name, long long n, int chunks, int streams,
                   int max_blocks) {
    Pipeline p(n, chunks, streams, max_blocks);
    p.steps = 3;
    for (int m = 0; m < MODES; m++) {
        std::vector<uint32_t> in(n);
        for (long long i = 0; i < n; i++) in[i] = p.host_in[i] = (word_t)d.rng.next();
        poison(p.dev_in, p.guard + 1);
        poison(p.dev_out, p.guard + 1);
        std::memset(p.host_out, 0xFF, n * sizeof(word_t));
        HANDLE_ERROR(cudaDeviceSynchronize());
        run_mode(p, (Mode)m);
        HANDLE_ERROR(cudaDeviceSynchronize());
        std::vector<uint32_t> out(p.host_out, p.host_out + n);
        out.push_back(
            (uint32_t)(guards_written(p.dev_in, p.guard) + guards_written(p.dev_out, p.guard)));
        d.record(name + "." + MODE_NAMES[m], out);
        long long written = std::memcmp(in.data(), p.host_in, n * sizeof(word_t)) != 0;
        d.record(name + "." + MODE_NAMES[m] + ".inputs-written",
                 std::vector<long long>(1, written));
    }
}

void drive(Driver& d) {
    if (d.timing()) {  // the performance gate: the depth-first schedule at the drawn shape
        long long n = d.param("n");
        int chunks = (int)d.param("chunks"), streams = (int)d.param("streams");
        Pipeline p(n, chunks, streams, 1024);
        p.steps = 64;
        std::vector<uint32_t> in(n);
        for (long long i = 0; i < n; i++) in[i] = (word_t)d.rng.next();
        d.timed_launches(
            "depth-first", 5,
            [&] {  // the input again from the driver's copy, every buffer poisoned
                std::memcpy(p.host_in, in.data(), n * sizeof(word_t));
                poison(p.dev_in, p.guard + 1);
                poison(p.dev_out, p.guard + 1);
                std::memset(p.host_out, 0xFF, n * sizeof(word_t));
            },
            [&] { run_mode(p, DEPTH_FIRST); },
            [&](const std::string& name) {
                HANDLE_ERROR(cudaDeviceSynchronize());
                d.digest(name, std::vector<uint32_t>(p.host_out, p.host_out + n));
                long long written = std::memcmp(in.data(), p.host_in, n * sizeof(word_t)) != 0;
                d.record(name + ".host-inputs-written", std::vector<long long>(1, written));
            });
        return;
    }
    schedule_once(d, "n1-1c-2s", 1, 1, 2, 1);
    schedule_once(d, "n1000-7c-3s", 1000, 7, 3, 4);  // chunks that do not divide n nor the streams
    schedule_once(d, "n100000-16c-4s", 100000, 16, 4, 64);
    for (int k = 0; k < 2; k++) {
        long long n = d.rng.range(64, 300000);
        int chunks = (int)d.rng.range(1, 40);
        schedule_once(d, "random" + std::to_string(k), n, chunks,
                      (int)d.rng.range(2, std::max(2, chunks)), (int)d.rng.range(1, 200));
    }
}
