// driver.h -- the grading driver's own main (labs/grader, docs/grader.md).
//
// The grader builds each task as ONE program: the course's copy of a lab program, with the
// student's regions spliced in and its own main() left out (CUDA_EXAMPLES_NO_MAIN), plus a
// driver from this folder. The driver, not the student, owns main: it draws the inputs from the
// seed the grader picked at grade time, calls the program's launch function on several shapes
// (odd ones included, and random ones drawn from the seed), and writes what came back to a file.
// The grader runs the reference build with the same seed and compares the two files in its own
// process: nothing the student's code prints, and no exit code, is ever read as a verdict.
//
// A driver of its own: ch06's driver includes its program (it reads the program's types and
// globals); the others declare the one function they call of it, as the program declares it, and
// the grader compiles such a driver once, on its own, and links it with each build of the program
// (labs/grader/build.py: builds_alone, driver_unit). Both compiles read program_memory.h first
// (-include), so a header both include reads the same in both. The link checks a declaration's
// parameters against the program's (a mismatch is an undefined reference), not its return type:
// keep it the program's.
//
//   driver --seed S --out FILE                     the tests, and every compute-sanitizer run
//   driver --seed S --out FILE --time --param NAME=V1,...   a timed run
//   driver --seed S --out FILE --plan --param NAME=V1,...   a plan run: what a schedule asks for
//
// A plan run is for a task whose code decides only an order (ch06.1's schedule): it runs once
// at the timed shape and records the operations the code queued. The grader checks that list
// and hands it to the REFERENCE's driver, which carries it out and times it (--time, with the
// plan as a file): the student's program never times anything.
//
// A checked run and a sanitizer run are the same command: the program cannot tell them apart,
// and the sanitizer sees the shapes of the tests (new ones for its own seed). Each run goes
// over its shapes twice: once with every device buffer ENDING at the end of its mapped memory,
// once with every buffer STARTING at its start (GuardedMemory below): an access one element past
// the end, or one before the start, touches an unmapped page and faults, at full speed, in
// every run. Every launch is followed by a check of its INPUTS: each input buffer's digest on
// the GPU against its digest as uploaded, before any code of the task ran; a kernel that writes
// into what it should only read fails the tests. Every timed launch starts from poisoned
// outputs and from inputs of its own: drawn afresh from the seed where the driver can draw them
// on the GPU (redraw_inputs: the launcher's), restored as uploaded otherwise (from a second
// device copy: upload_inputs); every one is checked.
//
// The file: for each record one header line "rec NAME TYPE COUNT\n" and COUNT raw values (TYPE:
// i64, u32, f32, u8), or "time NAME MS\n" for a timed launch.
#pragma once
// After program_memory.h (and the program, where the driver includes it): the driver's own
// cudaMalloc and cudaFree.
#undef cudaMalloc
#undef cudaFree
#include <cuda.h>  // the types of the virtual memory management API (called through the runtime)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>
#include <algorithm>

// The exit code of a run that could not get the GPU (no context, no memory for its buffers):
// the grader runs it again, alone on the GPU, and never scores it as the student's fault.
const int EXIT_CODE_NO_GPU_NOW = 75;
// The exit code of a run started ahead of its turn (--wait) whose turn never came: the grader
// closed its stdin without a go (Driver::wait_for_go). Nothing ran on the GPU.
const int EXIT_CODE_NO_TURN = 76;

// splitmix64's step and its mix: the k-th value of the stream after `state` is
// lab_mix(state + k * LAB_GOLDEN), so the GPU can draw any stretch of it in parallel.
const unsigned long long LAB_GOLDEN = 0x9E3779B97F4A7C15ull;
__host__ __device__ inline unsigned long long lab_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__host__ __device__ inline long long lab_range(unsigned long long z, long long lo, long long hi) {
    return lo + (long long)(z % (unsigned long long)(hi - lo + 1));
}
// An odd multiple of 1/8 from -7/8 to 7/8: every product of two is a multiple of 1/64, and a
// matmul's sums of them are exact in float.
__host__ __device__ inline float lab_eighth(unsigned long long z) {
    return (float)(2 * lab_range(z, -4, 3) + 1) / 8.0f;
}

struct Rng {  // splitmix64: the same stream for the same seed, in the reference and the student
    uint64_t state;
    uint64_t next() { return lab_mix(state += LAB_GOLDEN); }
    long long range(long long lo, long long hi) { return lab_range(next(), lo, hi); }
    float eighth() { return lab_eighth(next()); }
    float unit() { return (float)((next() >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f; }
};

// The host's loop `for (i < n) a[i] = rng.range(lo, hi), b[i] = rng.range(lo, hi);` on the GPU,
// from a stream that starts at `state`: a[i] is its (2i+1)th value, b[i] its (2i+2)th (the
// launcher passes each launch's own start: Driver::launch_stream).
__global__ void lab_draw_pairs(long long* a, long long* b, long long n, unsigned long long state,
                               long long lo, long long hi) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        a[i] = lab_range(lab_mix(state + (unsigned long long)(2 * i + 1) * LAB_GOLDEN), lo, hi);
        b[i] = lab_range(lab_mix(state + (unsigned long long)(2 * i + 2) * LAB_GOLDEN), lo, hi);
    }
}

// The host's loop `for (i < n) a[i] = rng.eighth(), b[i] = rng.eighth();` on the GPU, the same
// way (as lab_draw_pairs).
__global__ void lab_draw_eighths(float* a, float* b, long long n, unsigned long long state) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        a[i] = lab_eighth(lab_mix(state + (unsigned long long)(2 * i + 1) * LAB_GOLDEN));
        b[i] = lab_eighth(lab_mix(state + (unsigned long long)(2 * i + 2) * LAB_GOLDEN));
    }
}

// A digest of a buffer: the sum over its 32-bit words of a mix of (index, word), the same in
// any order, so the GPU computes it in parallel and the host the same way from its own copy.
__global__ void lab_digest_words(const unsigned int* words, long long count,
                                 unsigned long long* sum) {
    unsigned long long mine = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        mine += lab_mix(((unsigned long long)i << 32) ^ words[i] ^ 0x9E3779B97F4A7C15ull);
    atomicAdd(sum, mine);
}
inline uint64_t host_digest(const void* data, size_t bytes) {
    const unsigned char* p = (const unsigned char*)data;
    unsigned long long sum = 0;
    for (size_t i = 0; i < bytes / 4; i++) {
        unsigned int w;
        std::memcpy(&w, p + 4 * i, 4);
        sum += lab_mix(((unsigned long long)i << 32) ^ w ^ 0x9E3779B97F4A7C15ull);
    }
    return sum ^ bytes;
}

// Guarded device memory, with CUDA's virtual memory management: every buffer gets a range of
// addresses of its own, one unmapped granule (2 MiB on an H200) on each side of the granules
// that hold it. The buffer is placed at the END of its mapped granules (past it nothing mapped,
// or a few poisoned bytes where the task needs an aligned start: end_align) or at their START
// (the byte before it is unmapped): a kernel that reads past a[n] or at a[-1] stops with an
// illegal address, whatever else was allocated, in every run, at full speed.
// The driver API is reached through the runtime (cudaGetDriverEntryPointByVersion): no -lcuda.
struct GuardedMemory {
    struct Range {
        CUdeviceptr base;
        size_t reserved, mapped;
        CUmemGenericAllocationHandle handle;
    };
    bool at_start = false;  // where the next buffers go in their mapping
    size_t end_align = 1;   // the start's alignment when a buffer ends at its mapping's end
    size_t granule = 0;
    CUmemAllocationProp prop{};
    std::map<uintptr_t, Range> ranges;  // buffer address -> its range
    decltype(&cuMemAddressReserve) reserve;
    decltype(&cuMemAddressFree) unreserve;
    decltype(&cuMemCreate) create;
    decltype(&cuMemRelease) release;
    decltype(&cuMemMap) map;
    decltype(&cuMemUnmap) unmap;
    decltype(&cuMemSetAccess) set_access;

    template <class F>
    void entry(const char* name, F& fn) {
        cudaDriverEntryPointQueryResult found;
        void* p = nullptr;
        if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess) {
            std::fprintf(stderr, "driver: the CUDA driver has no %s\n", name);
            std::exit(EXIT_CODE_NO_GPU_NOW);
        }
        fn = (F)p;
    }
    void init() {
        if (granule) return;
        int device = 0;
        cudaError_t err = cudaFree(nullptr);  // creates the context: the first touch of the GPU
        if (err == cudaSuccess) err = cudaGetDevice(&device);
        if (err != cudaSuccess) {
            std::fprintf(stderr, "driver: could not get the GPU: %s\n", cudaGetErrorString(err));
            std::exit(err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
                          ? EXIT_CODE_NO_DEVICE
                          : EXIT_CODE_NO_GPU_NOW);
        }
        entry("cuMemAddressReserve", reserve), entry("cuMemAddressFree", unreserve);
        entry("cuMemCreate", create), entry("cuMemRelease", release);
        entry("cuMemMap", map), entry("cuMemUnmap", unmap), entry("cuMemSetAccess", set_access);
        decltype(&cuMemGetAllocationGranularity) granularity;
        entry("cuMemGetAllocationGranularity", granularity);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        check(granularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              "cuMemGetAllocationGranularity");
    }
    static void check(CUresult r, const char* what) {
        if (r == CUDA_SUCCESS) return;
        std::fprintf(stderr, "driver: %s failed (CUresult %d)\n", what, (int)r);
        std::exit(r == CUDA_ERROR_OUT_OF_MEMORY ? EXIT_CODE_NO_GPU_NOW : EXIT_CODE_FAILED);
    }
    void* alloc(size_t bytes) {
        init();
        Range r{};
        r.mapped = std::max<size_t>(granule, (bytes + granule - 1) / granule * granule);
        r.reserved = r.mapped + 2 * granule;  // a guard granule before and one after
        check(reserve(&r.base, r.reserved, granule, 0, 0), "cuMemAddressReserve");
        check(create(&r.handle, r.mapped, &prop, 0), "cuMemCreate");
        CUdeviceptr first = r.base + granule;
        check(map(first, r.mapped, 0, r.handle, 0), "cuMemMap");
        CUmemAccessDesc access{};
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        check(set_access(first, r.mapped, &access, 1), "cuMemSetAccess");
        // At the end, the buffer starts on an end_align boundary: 1 (its last byte touches the
        // guard) unless the task's program loads wider words than its elements (Dot-SM-Warp's
        // float4 needs 16: cudaMalloc gives 256). The up to end_align - 1 bytes between its end
        // and the guard are poisoned (0xFF, a NaN in every float): a read there spoils the
        // answer, and only a read past them faults.
        size_t padded = (bytes + end_align - 1) / end_align * end_align;
        uintptr_t at = (uintptr_t)(at_start ? first : first + r.mapped - padded);
        if (padded > bytes) HANDLE_ERROR(cudaMemset((void*)(at + bytes), 0xFF, padded - bytes));
        ranges[at] = r;
        return (void*)at;
    }
    bool owns(const void* p) const { return ranges.count((uintptr_t)p) != 0; }
    void free(void* p) {
        auto it = ranges.find((uintptr_t)p);
        if (it == ranges.end()) return;
        HANDLE_ERROR(cudaDeviceSynchronize());  // no kernel may still use it
        Range& r = it->second;
        check(unmap(r.base + granule, r.mapped), "cuMemUnmap");
        check(release(r.handle), "cuMemRelease");
        check(unreserve(r.base, r.reserved), "cuMemAddressFree");
        ranges.erase(it);
    }
};

// The program's own device buffers (ch05's image, ch06's buffers of each stream: the course's
// code allocates them) are guarded as the driver's are: the program is compiled after
// program_memory.h (ch06's driver includes both; elsewhere the grader gives it to the program's
// compile with -include), which turns its cudaMalloc and cudaFree into these two, and main()
// below points lab_program_memory at the driver's memory, so that both placements, at the end
// and at the start of the mapping, apply to them too.
GuardedMemory* lab_program_memory = nullptr;
cudaError_t lab_program_malloc(void** p, size_t bytes) {
    if (!lab_program_memory) {  // a static initializer of the program: before main()
        std::fprintf(stderr, "driver: the program allocated device memory before main()\n");
        std::exit(EXIT_CODE_FAILED);
    }
    *p = lab_program_memory->alloc(bytes);
    return cudaSuccess;
}
cudaError_t lab_program_free(void* p) {
    if (lab_program_memory && lab_program_memory->owns(p)) {
        lab_program_memory->free(p);
        return cudaSuccess;
    }
    return cudaFree(p);  // not one of its buffers (cudaFree(nullptr) and the like)
}

struct Driver {
    Rng rng{0};
    uint64_t seed = 0;
    bool time_run = false;  // --time: the timed run; otherwise the tests' (or a sanitizer's) run
    bool plan_run = false;  // --plan: record what the code asks for, at the timed shape
    bool wait_run = false;  // --wait: started ahead of its turn, it waits for it (wait_for_go)
    std::string pass;       // the placement pass, prefixed to every record's name
    FILE* out = nullptr;
    std::map<std::string, std::vector<long long>> params;  // --param NAME=V1,V2,...
    GuardedMemory memory;
    struct Input {
        const void* device;
        size_t bytes;
        uint64_t digest;  // of the buffer as uploaded, before the task's code ran: the truth
        void* restore = nullptr;  // a timed run's second device copy of it (upload_inputs)
    };
    std::vector<Input> inputs;

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
    bool timing() const { return time_run; }
    bool planning() const { return plan_run; }

    // A timed run holds the GPU alone, and under load most of its time went to opening the GPU
    // (command 2 on an H200 at e176711: the context took 1.2 to 2.6 s of each of ch02's 20 timed
    // runs, 1.7 to 9.0 s in all; their launches, 11 to 56 ms in 11 of them). So the grader
    // starts it before its turn (--wait): it opens the GPU and loads its code, which runs nothing
    // on the GPU, then waits here for one byte on stdin, written when the gate holds the GPU
    // alone. End of file without it: the turn never came, and the run ends having done nothing.
    void wait_for_go() {
        if (!wait_run) return;
        if (std::getchar() == EOF) std::exit(EXIT_CODE_NO_TURN);
    }

    // Device buffers, all guarded (GuardedMemory). An output: poisoned by the caller. An input:
    // uploaded from `host`, its digest taken on the GPU at once, before any code of the task runs
    // (nothing else runs on the GPU then: the driver waits for the device first), to check the
    // buffer after every launch; in a timed run, a second device copy of it restores it before
    // every launch. The digest used to be taken on the host, from a copy the driver kept: for two
    // of ch02's timed vectors (200 MB each) the copy took 230 to 390 ms and the digest 270 ms of
    // one core of a 2-core EPYC, every run, and a timed run holds the GPU alone.
    template <class T>
    T* output(size_t count) {
        return (T*)memory.alloc(count * sizeof(T));
    }
    template <class T>
    T* input(const std::vector<T>& host) {
        size_t bytes = host.size() * sizeof(T);
        T* p = blank_input<T>(host.size());
        HANDLE_ERROR(cudaDeviceSynchronize());
        HANDLE_ERROR(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice));
        seal_input(p, bytes);
        return p;
    }
    // An input drawn on the GPU (the grader's launcher draws its large ones there: no host
    // vector, no upload): blank_input gives the buffer, the caller fills it before any code of
    // the task runs, and seal_input takes its digest and, in a timed run, its second copy.
    template <class T>
    T* blank_input(size_t count) {
        return (T*)memory.alloc(count * sizeof(T));
    }
    void seal_input(const void* p, size_t bytes) {
        HANDLE_ERROR(cudaDeviceSynchronize());
        Input in{p, bytes, device_digest(p, bytes)};
        if (time_run && !redraw_inputs) {
            in.restore = memory.alloc(bytes);
            HANDLE_ERROR(cudaMemcpy(in.restore, p, bytes, cudaMemcpyDeviceToDevice));
        }
        inputs.push_back(in);
    }
    void release(const void* p) {
        for (Input& in : inputs)
            if (in.device == p && in.restore) memory.free(in.restore);
        inputs.erase(std::remove_if(inputs.begin(), inputs.end(),
                                    [&](const Input& in) { return in.device == p; }),
                     inputs.end());
        memory.free((void*)p);
    }
    // Every input restored before each timed launch: copied on the device from its second device
    // copy, made when it was uploaded. Uploaded from the host before every launch, a ch02
    // timed run copied its two vectors (up to 200 MB each) through pageable memory, on the CPU,
    // twenty-one times while it held the GPU alone (command 2 on an H200 at 01e1535: ch02's timed
    // runs took 5 to 10 s each while the cores were busy, about 1.2 s once they were idle). A
    // kernel that writes the second copy gains nothing: check_inputs compares the restored
    // buffer's digest with the one taken at its upload after every launch, so the next launch
    // fails.
    //
    // Restored, each launch sees the same inputs, and a kernel that kept its answer in device
    // memory that outlives a launch (a static array, the device heap) could hand it back in every
    // timed launch, one or twenty, and do the work only in the warm-up. So where the inputs are
    // drawn on the GPU, every launch gets new ones instead: redraw_inputs, set before the inputs
    // are sealed, draws them into the same buffers from a stream of the launch's own
    // (launch_stream; the reference's run, from the same seed, gets the same inputs launch by
    // launch, and each launch's output is compared with its own), and each input's digest is
    // taken again before the launch. A kept answer is then the answer to another launch's inputs.
    std::function<void()> redraw_inputs;
    // The stream a launch's inputs are drawn from (redraw_inputs): for the k-th launch,
    // lab_mix(A + k * LAB_GOLDEN) ^ lab_mix(B + k * LAB_GOLDEN), A and B drawn once from the seed.
    // A launch's inputs give away the start of their own stream: from ch02.2's a[0] and b[0], a
    // search of some 2^23 candidates through lab_mix's inverse finds it (7.3 million, 0.1 s of
    // one core of a 2-core machine: tests/labs/cheats/launcher_stream_predict.c), so a kernel
    // could learn it in its warm-up; had the next launch's stream gone on from there, it would
    // know the next inputs too, and could compute their answer before it is timed (the cheat
    // add-foretells-the-next-launchs-inputs did, on an H200: tests/labs/cheats/truth_cheats.py).
    // This start tells nothing of the next: whatever A is, some B gives the same start.
    uint64_t launch_keys[2] = {0, 0};
    unsigned long long launches_drawn = 0;
    unsigned long long launch_stream() {
        if (launches_drawn == 0) launch_keys[0] = rng.next(), launch_keys[1] = rng.next();
        unsigned long long k = launches_drawn++;
        return lab_mix(launch_keys[0] + k * LAB_GOLDEN) ^ lab_mix(launch_keys[1] + k * LAB_GOLDEN);
    }
    void upload_inputs() {
        if (redraw_inputs) {
            redraw_inputs();
            HANDLE_ERROR(cudaGetLastError());
            HANDLE_ERROR(cudaDeviceSynchronize());
            for (Input& in : inputs) in.digest = device_digest(in.device, in.bytes);
            return;
        }
        for (Input& in : inputs)
            if (in.restore)
                HANDLE_ERROR(
                    cudaMemcpy((void*)in.device, in.restore, in.bytes, cudaMemcpyDeviceToDevice));
    }
    // After a launch: how many input buffers differ from their digest at upload, as the record
    // NAME.inputs-written (0 in the reference: any other count fails the tests).
    void check_inputs(const std::string& name) {
        queue_input_check(name);
        settle();
    }

    // Digests queued on the GPU and read back together (settle). A timed run checks every
    // launch's output and inputs; read back one by one, each digest waited twice for a GPU
    // that other processes share (its result, then cudaFree). In command 2 on an H200, ch02's
    // timed runs, waiting eight times a launch, took from 0.37 s to 14 s as the rest of the
    // tests came and went, while they held the GPU against every other grader; read back
    // together after all the launches (one wait), 1.5 to 9.4 s. A timed run settles after every
    // launch (three waits a launch), so that no code of the task ever runs while a digest waits
    // in device memory: a later launch that found the slots could otherwise rewrite them.
    struct Queued {
        std::string record;
        size_t slot, bytes;
        bool input;       // an input check: counted into RECORD, not recorded itself
        uint64_t expect;  // an input's digest at upload
    };
    static constexpr size_t DIGEST_SLOTS = 1024;
    unsigned long long* sums = nullptr;  // one slot a queued digest
    std::vector<Queued> queued;
    void queue_digest(const std::string& record, const void* data, size_t bytes, bool input,
                      uint64_t expect) {
        if (!sums) HANDLE_ERROR(cudaMalloc(&sums, DIGEST_SLOTS * sizeof(unsigned long long)));
        if (queued.size() == DIGEST_SLOTS) settle();
        launch_digest(data, bytes, sums + queued.size());
        queued.push_back({record, queued.size(), bytes, input, expect});
    }
    // NAME's digest, recorded at the next settle().
    void digest_later(const std::string& name, const void* data, size_t bytes) {
        queue_digest(name, data, bytes, false, 0);
    }
    // check_inputs, recorded at the next settle() (all of one launch's inputs in one settle).
    void queue_input_check(const std::string& name) {
        std::string rec = name + ".inputs-written";
        if (inputs.empty()) {
            record(rec, std::vector<long long>(1, 0));
            return;
        }
        if (queued.size() + inputs.size() > DIGEST_SLOTS) settle();
        for (const Input& in : inputs) queue_digest(rec, in.device, in.bytes, true, in.digest);
    }
    void settle() {
        if (queued.empty()) return;
        std::vector<unsigned long long> got(queued.size());
        HANDLE_ERROR(cudaMemcpy(got.data(), sums, got.size() * sizeof(unsigned long long),
                                cudaMemcpyDeviceToHost));
        std::vector<std::pair<std::string, long long>> written;  // in the order queued
        for (const Queued& q : queued) {
            uint64_t h = got[q.slot] ^ q.bytes;  // as device_digest gives it
            if (!q.input) {
                digest_value(q.record, h);
                continue;
            }
            if (written.empty() || written.back().first != q.record)
                written.push_back({q.record, 0});
            written.back().second += h != q.expect;
        }
        for (const auto& w : written) record(w.first, std::vector<long long>(1, w.second));
        queued.clear();
    }

    // The digest of `bytes` bytes (a multiple of 4) of device memory into *sum (then ^ bytes), on
    // the default stream, after the work queued there.
    static void launch_digest(const void* data, size_t bytes, unsigned long long* sum) {
        HANDLE_ERROR(cudaMemsetAsync(sum, 0, sizeof(unsigned long long)));
        lab_digest_words<<<256, 256>>>((const unsigned int*)data, (long long)(bytes / 4), sum);
        HANDLE_ERROR(cudaGetLastError());
    }
    // The digest of `bytes` bytes (a multiple of 4) of device memory, read back at once.
    uint64_t device_digest(const void* data, size_t bytes) {
        unsigned long long* sum;
        HANDLE_ERROR(cudaMalloc(&sum, sizeof(unsigned long long)));
        launch_digest(data, bytes, sum);
        unsigned long long h = 0;
        HANDLE_ERROR(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
        HANDLE_ERROR(cudaFree(sum));
        return h ^ bytes;
    }
    void digest_value(const std::string& name, uint64_t h) {
        std::vector<long long> one(1, (long long)h);
        record(name, one);
    }

    void record(const std::string& name, const char* type, const void* data, size_t count,
                size_t elem_bytes) {
        std::fprintf(out, "rec %s%s %s %zu\n", pass.c_str(), name.c_str(), type, count);
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
        digest_value(name, host_digest(v.data(), v.size() * sizeof(T)));
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
    // A slow launch is timed fewer times: once MIN_TIMED_LAUNCHES ran and the launches, the
    // warm-up's included, add up to TIMED_BUDGET_MS, the loop stops. A kernel a second a launch
    // (one thread doing a ch02 vector's every element: 900 ms on an H200, against 0.08 ms)
    // fails its gate on one launch as surely as on twenty, and the GPU, which a gate holds
    // alone, is free sooner (with three timed launches and the warm-up not counted, such a
    // run's launches took 5.5 to 9.2 s of a gate in command 2 on an H200). An honest
    // submission never comes near it: on an H200 the most a course task's timed launches took
    // together was ch06.1's five schedules at about 18 ms each.
    static constexpr int MIN_TIMED_LAUNCHES = 1;  // labs/grader/verify.py holds the same
    static constexpr float TIMED_BUDGET_MS = 1000.0f;

    // When the last timed_launches began (the launcher's account of where its time went).
    std::chrono::steady_clock::time_point launches_began;

    // At most `repeats` timed launches after one warm-up, each on inputs of its own (drawn
    // afresh or restored: upload_inputs) and outputs poisoned just before it (`poison`, not timed),
    // each one's output and inputs checked after it (`check(name)`, not timed): NAME.warm-up,
    // NAME.0, ... must all match the reference's. Writes "time NAME MS" (the median), NAME.min,
    // NAME.max and NAME.launches (how many were timed); returns the median.
    template <class P, class F, class C>
    float timed_launches(const std::string& name, int repeats, P poison, F launch, C check) {
        launches_began = std::chrono::steady_clock::now();
        std::vector<float> t;
        float spent = 0;
        for (int r = -1; r < repeats; r++) {
            if (r >= MIN_TIMED_LAUNCHES && spent >= TIMED_BUDGET_MS) break;
            std::string run = r < 0 ? name + ".warm-up" : name + "." + std::to_string(r);
            upload_inputs();
            poison();
            HANDLE_ERROR(cudaDeviceSynchronize());
            float ms = time_ms(launch);
            spent += ms;
            if (r >= 0) t.push_back(ms);
            check(run);
            queue_input_check(run);
            settle();  // before the task's code runs again (Queued)
        }
        std::sort(t.begin(), t.end());
        float median = t[t.size() / 2];
        timed(name, median);
        timed(name + ".min", t.front());
        timed(name + ".max", t.back());
        timed(name + ".launches", (float)t.size());
        return median;
    }

    // The command line: --seed, --out (returned), --time, --plan, --wait, --param NAME=V1,...; any
    // other --KEY VALUE is kept in `words` (the launcher's --module and --kernel, a plan's file).
    std::map<std::string, std::string> words;
    const char* parse(int argc, char** argv) {
        const char* path = nullptr;
        for (int i = 1; i < argc; i++) {
            std::string key = argv[i];
            if (key == "--time") {
                time_run = true;
                continue;
            }
            if (key == "--plan") {
                plan_run = true;
                continue;
            }
            if (key == "--wait") {
                wait_run = true;
                continue;
            }
            if (i + 1 >= argc) break;
            std::string value = argv[++i];
            if (key == "--seed")
                rng.state = seed = std::strtoull(value.c_str(), nullptr, 10);
            else if (key == "--out")
                path = argv[i];
            else if (key == "--param") {  // NAME=V1,V2,...
                size_t eq = value.find('=');
                if (eq == std::string::npos) {
                    std::fprintf(stderr, "driver: --param %s: expected NAME=V1,V2,...\n",
                                 value.c_str());
                    std::exit(2);
                }
                std::vector<long long>& values = params[value.substr(0, eq)];
                for (size_t at = eq + 1; at <= value.size();) {
                    size_t comma = value.find(',', at);
                    if (comma == std::string::npos) comma = value.size();
                    values.push_back(
                        std::strtoll(value.substr(at, comma - at).c_str(), nullptr, 10));
                    at = comma + 1;
                }
            } else
                words[key] = value;
        }
        return path;
    }
};

// The launcher (launcher.cu) shares everything above; each driver also has this main().
#ifndef LAB_NO_DRIVER_MAIN
void drive(Driver& d);  // each driver's shapes: one per lab program

int main(int argc, char** argv) {
    Driver d;
    const char* path = d.parse(argc, argv);
    if (!path) {
        std::fprintf(stderr,
                     "usage: driver --seed S --out FILE [--time|--plan --param NAME=V,...]\n");
        return 2;
    }
    d.out = std::fopen(path, "wb");
    if (!d.out) {
        std::perror(path);
        return 1;
    }
    d.memory.init();  // the GPU first: a run that cannot get it exits EXIT_CODE_NO_GPU_NOW
    d.wait_for_go();  // a timed run started ahead of its turn: the GPU is open, nothing has run
    lab_program_memory = &d.memory;
    if (d.timing() || d.planning()) {  // one pass, at the shape the grader drew
        drive(d);
    } else {  // the same shapes twice: buffers at the end of their mappings, then at the start
        drive(d);
        d.rng.state = d.seed;  // the same shapes and inputs again
        d.pass = "start:";
        d.memory.at_start = true;
        drive(d);
    }
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::fprintf(d.out, "end\n");  // a file without it was cut short
    return std::fclose(d.out) == 0 ? 0 : 1;
}
#endif
