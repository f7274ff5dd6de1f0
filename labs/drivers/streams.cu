// The grading driver of labs ch06.1 and ch06.2 (labs/drivers/driver.h): run_mode(p, mode) on a
// Pipeline of n words in `chunks` chunks over `streams` streams, every mode.
//
// The program's own cudaMalloc and cudaFree become the driver's guarded memory.
#include "lab_program_memory.h"
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

// ch06.1's speed gate is two runs (driver.h). The plan run (--plan), of the student's build and
// of the reference's: run_mode(p, DEPTH_FIRST) once at the drawn shape, and the operations it
// queued, as ScheduleCheck kept them, in the record "depth-first.plan". The timed run (--time),
// of the reference's build only: a plan the grader checked and wrote to a file (--run-plan),
// carried out by this driver through the course's run_op and timed with its own events. So the
// student's code chooses the order, and only course code touches the data and the clock.

// A plan file: one operation a line, "op chunk stream synchronous". The grader wrote it after
// checking every value (labs/grader/verify.py, read_plan); anything else is the grader's own
// mistake, not the student's: exit 2, bad usage.
std::vector<int> read_plan(const std::string& path, int chunks) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) {
        std::perror(path.c_str());
        std::exit(2);
    }
    std::vector<int> plan;
    int v[4], got;
    while ((got = std::fscanf(f, "%d %d %d %d", &v[0], &v[1], &v[2], &v[3])) == 4) {
        // The op and the flag must be checked before (Op) and bool see them; chunk and stream
        // are run_op's own check, and the order too (ScheduleCheck).
        if (v[0] < H2D || v[0] > D2H || v[3] < 0 || v[3] > 1 || plan.size() >= 12u * chunks) {
            std::fprintf(stderr, "driver: %s is not a plan of %d chunks\n", path.c_str(), chunks);
            std::exit(2);
        }
        plan.insert(plan.end(), v, v + 4);
    }
    std::fclose(f);
    if (got != EOF) {  // a word that is not a number, or a line cut short
        std::fprintf(stderr, "driver: %s: expected lines 'op chunk stream synchronous'\n",
                     path.c_str());
        std::exit(2);
    }
    return plan;
}

// A plan carried out as run_mode would queue it: start_mode, every operation through run_op,
// finish_mode. So ScheduleCheck refuses an operation that does not exist, one out of order, two
// streams on one pair of buffers or a chunk left unfinished, with its message (exit 1).
void run_plan(Pipeline& p, const std::vector<int>& plan) {
    p.schedule.start_mode();
    for (size_t i = 0; i + 3 < plan.size(); i += 4)
        run_op(p, (Op)plan[i], plan[i + 1], plan[i + 2], plan[i + 3] == 1);
    p.schedule.finish_mode();
}

void drive(Driver& d) {
    if (d.planning() || d.timing()) {  // the speed gate, at the drawn shape
        long long n = d.param("n");
        int chunks = (int)d.param("chunks"), streams = (int)d.param("streams");
        Pipeline p(n, chunks, streams, 1024);
        p.steps = 64;
        if (d.planning()) {  // the schedule once, for real; what it queued, in order
            run_mode(p, DEPTH_FIRST);
            HANDLE_ERROR(cudaDeviceSynchronize());
            const std::vector<int>& queued = p.schedule.queued;
            d.record("depth-first.plan", std::vector<long long>(queued.begin(), queued.end()));
            return;
        }
        if (!d.words.count("--run-plan")) {
            std::fprintf(stderr, "driver: a timed run carries out a plan: --run-plan FILE\n");
            std::exit(2);
        }
        std::vector<int> plan = read_plan(d.words["--run-plan"], chunks);
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
            [&] { run_plan(p, plan); },
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
