// driver.h -- the grading driver's own main (labs/grader, docs/instructors.md).
//
// The grader builds each task as ONE program: the course's copy of a lab program, with the
// student's regions spliced in and its own main() left out (CUDA_EXAMPLES_NO_MAIN), plus a
// driver from this folder. The driver, not the student, owns main: it draws the inputs from the
// seed the grader picked at grade time, calls the program's launch function on several shapes
// (odd ones included), and writes what came back to a file. The grader runs the reference build
// with the same seed and compares the two files in its own process: nothing the student's code
// prints, and no exit code, is ever read as a verdict.
//
//   driver --mode check|sanitize|time --seed S --out FILE [--param NAME=V1,V2,...]...
//
// The shapes of the sanitizer runs and of the timed runs are not the driver's: the grader draws
// them from the grade's seed, within the ranges the instructor set for the task (labs/labs.json,
// "sanitize" / "perf" "shapes"), and passes them as --param; a submission cannot know them in
// advance. Every timed launch writes into outputs poisoned just before it, and every timed
// launch's output is recorded (a digest) and compared with the reference's: a kernel that
// recognises a repeated launch, or finds its output already right, gains nothing.
//
// The file: for each record one header line "rec NAME TYPE COUNT\n" and COUNT raw values (TYPE:
// i64, u32, f32, u8), or "time NAME MS\n" for a timed launch (mode time).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>
#include <algorithm>

struct Rng {  // splitmix64: the same stream for the same seed, in the reference and the student
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    long long range(long long lo, long long hi) {
        return lo + (long long)(next() % (uint64_t)(hi - lo + 1));
    }
    float eighth() { return (float)(2 * range(-4, 3) + 1) / 8.0f; }  // an odd multiple of 1/8
    float unit() { return (float)((next() >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f; }
};

// A digest of a device buffer, computed on the GPU (a timed launch's output need not travel to
// the host): the sum over its 32-bit words of a mix of (index, word), the same in any order.
__device__ unsigned long long lab_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__global__ void lab_digest_words(const unsigned int* words, long long count,
                                 unsigned long long* sum) {
    unsigned long long mine = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        mine += lab_mix(((unsigned long long)i << 32) ^ words[i] ^ 0x9E3779B97F4A7C15ull);
    atomicAdd(sum, mine);
}

struct Driver {
    std::string mode;
    Rng rng{0};
    FILE* out = nullptr;
    std::map<std::string, std::vector<long long>> params;  // --param NAME=V1,V2,...

    // The k-th value of a --param the grader must pass (a missing one: exit 2, never a default
    // that a submission could learn).
    long long param(const std::string& name, size_t k = 0) const {
        auto it = params.find(name);
        if (it == params.end() || it->second.size() <= k) {
            std::fprintf(stderr, "driver: --param %s needs at least %zu value(s)\n", name.c_str(),
                         k + 1);
            std::exit(2);
        }
        return it->second[k];
    }
    size_t shapes(const std::string& name) const {  // how many values --param NAME has
        auto it = params.find(name);
        return it == params.end() ? 0 : it->second.size();
    }
    // The digest of `bytes` bytes (a multiple of 4) of device memory.
    uint64_t device_digest(const void* data, size_t bytes) {
        unsigned long long* sum;
        HANDLE_ERROR(cudaMalloc(&sum, sizeof(unsigned long long)));
        HANDLE_ERROR(cudaMemset(sum, 0, sizeof(unsigned long long)));
        lab_digest_words<<<256, 256>>>((const unsigned int*)data, (long long)(bytes / 4), sum);
        HANDLE_ERROR(cudaGetLastError());
        unsigned long long h = 0;
        HANDLE_ERROR(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
        HANDLE_ERROR(cudaFree(sum));
        return h ^ bytes;
    }
    void digest_value(const std::string& name, uint64_t h) {
        std::vector<long long> one(1, (long long)h);
        record(name, one);
    }
    bool check() const { return mode == "check"; }
    bool sanitize() const { return mode == "sanitize"; }
    bool timing() const { return mode == "time"; }

    void record(const std::string& name, const char* type, const void* data, size_t count,
                size_t elem_bytes) {
        std::fprintf(out, "rec %s %s %zu\n", name.c_str(), type, count);
        if (count) std::fwrite(data, elem_bytes, count, out);
    }
    void record(const std::string& name, const std::vector<long long>& v) {
        record(name, "i64", v.data(), v.size(), 8);
    }
    void record(const std::string& name, const std::vector<float>& v) {
        record(name, "f32", v.data(), v.size(), 4);
    }
    void record(const std::string& name, const std::vector<uint32_t>& v) {
        record(name, "u32", v.data(), v.size(), 4);
    }
    void record(const std::string& name, const std::vector<unsigned char>& v) {
        record(name, "u8", v.data(), v.size(), 1);
    }
    // The outputs of a timed run, as one 64-bit digest of their bytes (the reference's run with
    // the same seed must give the same): large outputs need not travel through a file.
    template <class T>
    void digest(const std::string& name, const std::vector<T>& v) {
        const unsigned char* p = reinterpret_cast<const unsigned char*>(v.data());
        size_t bytes = v.size() * sizeof(T);
        uint64_t h = 1469598103934665603ull ^ bytes;
        size_t i = 0;
        for (; i + 8 <= bytes; i += 8) {
            uint64_t word;
            std::memcpy(&word, p + i, 8);
            h = (h ^ word) * 1099511628211ull;
            h ^= h >> 29;
        }
        for (; i < bytes; i++) h = (h ^ p[i]) * 1099511628211ull;
        std::vector<long long> one(1, (long long)h);
        record(name, one);
    }
    void timed(const std::string& name, float ms) {
        std::fprintf(out, "time %s %.6f\n", name.c_str(), ms);
    }

    // One launch (or one schedule) timed with CUDA events on the default stream.
    template <class F>
    float time_ms(F launch) {
        cudaEvent_t start, stop;
        HANDLE_ERROR(cudaEventCreate(&start));
        HANDLE_ERROR(cudaEventCreate(&stop));
        HANDLE_ERROR(cudaEventRecord(start, 0));
        launch();
        HANDLE_ERROR(cudaEventRecord(stop, 0));
        HANDLE_ERROR(cudaEventSynchronize(stop));
        float ms = 0;
        HANDLE_ERROR(cudaEventElapsedTime(&ms, start, stop));
        HANDLE_ERROR(cudaEventDestroy(start));
        HANDLE_ERROR(cudaEventDestroy(stop));
        return ms;
    }
    // `repeats` timed launches after one warm-up, each on outputs poisoned just before it
    // (`poison`, not timed), each one's output recorded after it (`check(name)`, not timed):
    // NAME.warm-up, NAME.0, NAME.1, ... must all match the reference's. Writes "time NAME MS"
    // (the median) and NAME.min / NAME.max; returns the median.
    template <class P, class F, class C>
    float timed_launches(const std::string& name, int repeats, P poison, F launch, C check) {
        poison();
        HANDLE_ERROR(cudaDeviceSynchronize());
        launch();
        HANDLE_ERROR(cudaDeviceSynchronize());
        check(name + ".warm-up");
        std::vector<float> t;
        for (int r = 0; r < repeats; r++) {
            poison();
            HANDLE_ERROR(cudaDeviceSynchronize());
            t.push_back(time_ms(launch));
            check(name + "." + std::to_string(r));
        }
        std::sort(t.begin(), t.end());
        float median = t[t.size() / 2];
        timed(name, median);
        timed(name + ".min", t.front());
        timed(name + ".max", t.back());
        return median;
    }
};

void drive(Driver& d);  // each driver's shapes: one per lab program

int main(int argc, char** argv) {
    Driver d;
    const char* path = nullptr;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string key = argv[i];
        if (key == "--mode")
            d.mode = argv[i + 1];
        else if (key == "--seed")
            d.rng.state = std::strtoull(argv[i + 1], nullptr, 10);
        else if (key == "--out")
            path = argv[i + 1];
        else if (key == "--param") {  // NAME=V1,V2,...
            std::string v = argv[i + 1];
            size_t eq = v.find('=');
            if (eq == std::string::npos) {
                std::fprintf(stderr, "driver: --param %s: expected NAME=V1,V2,...\n", v.c_str());
                return 2;
            }
            std::vector<long long>& values = d.params[v.substr(0, eq)];
            for (size_t at = eq + 1; at <= v.size();) {
                size_t comma = v.find(',', at);
                if (comma == std::string::npos) comma = v.size();
                values.push_back(std::strtoll(v.substr(at, comma - at).c_str(), nullptr, 10));
                at = comma + 1;
            }
        }
    }
    if (!path || !(d.check() || d.sanitize() || d.timing())) {
        std::fprintf(stderr, "usage: driver --mode check|sanitize|time --seed S --out FILE\n");
        return 2;
    }
    d.out = std::fopen(path, "wb");
    if (!d.out) {
        std::perror(path);
        return 1;
    }
    drive(d);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::fprintf(d.out, "end\n");  // a file without it was cut short
    return std::fclose(d.out) == 0 ? 0 : 1;
}
