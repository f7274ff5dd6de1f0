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
//   driver --mode check|sanitize|time --seed S --out FILE
//
// The file: for each record one header line "rec NAME TYPE COUNT\n" and COUNT raw values (TYPE:
// i64, u32, f32, u8), or "time NAME MS\n" for a timed launch (mode time).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

struct Driver {
    std::string mode;
    Rng rng{0};
    FILE* out = nullptr;
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
    // The median of `repeats` timed launches after one warm-up.
    template <class F>
    float median_ms(F launch, int repeats) {
        launch();
        HANDLE_ERROR(cudaDeviceSynchronize());
        std::vector<float> t;
        for (int r = 0; r < repeats; r++) t.push_back(time_ms(launch));
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
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
