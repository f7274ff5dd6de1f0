// allreduce_nccl.cu -- the all-reduce through NCCL, and a dot product that uses it (chapter 7).
//
// ring_allreduce does by hand what NCCL (the NVIDIA Collective Communications Library)
// does for a living: it picks rings or trees over NVLink, PCIe or the network, splits
// the data into pipelined pieces, and runs the copies and the additions in its own
// kernels. Here:
//  1. ncclAllReduce for sizes from 4 KiB to 1 GiB, each checked, with the algorithm
//     bandwidth (bytes / time) and the bus bandwidth as nccl-tests defines it
//     (algorithm x 2(K-1)/K: what each GPU sends and receives, comparable with a link);
//  2. chapter 7's dot product once more: each GPU computes its slice's partial sum and
//     one ncclAllReduce of a single float combines them -- on every GPU at once.
//
// Two ways to run it. Built plainly, ONE process drives all K GPUs (ncclCommInitAll).
// Built with -DWITH_MPI (the allreduce_nccl_mpi target, when CMake finds MPI), it is
// ONE PROCESS PER GPU: rank 0 creates an ncclUniqueId, MPI broadcasts it, and every
// rank joins with ncclCommInitRank. The code that calls NCCL is the same; that is how
// the same program runs across several machines (docs/ch07_multi_gpu.md).
//
// Source: NCCL's documentation, "Examples" (single process, multiple devices; one device
// per process or thread) and nccl-tests' PERFORMANCE.md for the bus bandwidth.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o allreduce_nccl allreduce_nccl.cu -lnccl
// With MPI (one process per GPU):
//   nvcc -std=c++17 -O2 -DWITH_MPI -ccbin mpicxx -o allreduce_nccl_mpi allreduce_nccl.cu -lnccl
//   mpirun -np 2 -x NCCL_NVLS_ENABLE=0 ./allreduce_nccl_mpi
// Run:
//   ./allreduce_nccl                    4 KiB .. 1 GiB on every visible GPU, then the dot product
//   ./allreduce_nccl --max-mb 16        the sweep up to 16 MiB only

#include <string>
#include <thread>
#include <vector>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h
#include "multi_gpu.h"
#include "nccl_check.h"
#ifdef WITH_MPI
#include <mpi.h>
#endif

// The GPUs this process drives: all K of them in one process, its own one under MPI.
// rank: the GPU's place among all of them (its communicator rank), nranks: how many.
struct Member {
    int device = 0, rank = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    float *send = nullptr, *recv = nullptr;
};

// Each member's stream and its send and recv buffers of `bytes`, on its own GPU; and
// their release, with the communicators.
void allocate_members(std::vector<Member>& members, size_t bytes) {
    for (Member& m : members) {
        HANDLE_ERROR(cudaSetDevice(m.device));
        HANDLE_ERROR(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking));
        HANDLE_ERROR(cudaMalloc(&m.send, bytes));
        HANDLE_ERROR(cudaMalloc(&m.recv, bytes));
    }
}

void free_members(std::vector<Member>& members) {
    for (Member& m : members) {
        HANDLE_ERROR(cudaSetDevice(m.device));
        HANDLE_ERROR(cudaFree(m.send));
        HANDLE_ERROR(cudaFree(m.recv));
        HANDLE_ERROR(cudaStreamDestroy(m.stream));
        HANDLE_NCCL(ncclCommDestroy(m.comm));
    }
}

// The all-reduce of `count` floats: send -> recv on every member, queued on its stream.
// Several members in one process must be a group: ncclAllReduce may wait for the other
// ranks, and one thread could not otherwise call it for each of its GPUs in turn.
void nccl_allreduce(std::vector<Member>& members, long long count) {
    HANDLE_NCCL(ncclGroupStart());
    for (Member& m : members)
        HANDLE_NCCL(ncclAllReduce(m.send, m.recv, count, ncclFloat, ncclSum, m.comm, m.stream));
    HANDLE_NCCL(ncclGroupEnd());
}

// Fresh inputs (member of rank g: eighth(i, g)), a poisoned output, one all-reduce,
// then the output compared with the sum over all nranks, exactly. Returns the wrong count.
long long check_allreduce(std::vector<Member>& members, long long count, int nranks) {
    for (Member& m : members) {
        HANDLE_ERROR(cudaSetDevice(m.device));
        launch_fill_eighths(m.send, 0, count, m.rank, m.stream);
        HANDLE_ERROR(cudaMemsetAsync(m.recv, 0xFF, count * sizeof(float), m.stream));
    }
    nccl_allreduce(members, count);
    std::vector<float> expected = allreduce_expected_host(count, nranks), host(count);
    long long wrong = 0;
    for (Member& m : members) {
        HANDLE_ERROR(cudaSetDevice(m.device));
        HANDLE_ERROR(cudaMemcpyAsync(host.data(), m.recv, count * sizeof(float),
                                     cudaMemcpyDeviceToHost, m.stream));
        HANDLE_ERROR(cudaStreamSynchronize(m.stream));
        wrong += count_wrong(host.data(), expected, count);
    }
    return wrong;
}

// The dot product of eighth(i, 1) and eighth(i, 2), i < n: each member its slice, then
// one float all-reduced. Returns the answer as GPU `members[0]` holds it.
float nccl_dot(std::vector<Member>& members, long long n, int nranks) {
    std::vector<float*> partial(members.size());
    for (size_t j = 0; j < members.size(); ++j) {
        Member& m = members[j];
        Slice s = slice_of(n, nranks, m.rank);
        HANDLE_ERROR(cudaSetDevice(m.device));
        float* a = m.send;  // the sweep's buffers: a and b side by side
        float* b = m.send + s.count;
        launch_fill_eighths(a, s.begin, s.count, 1, m.stream);
        launch_fill_eighths(b, s.begin, s.count, 2, m.stream);
        int blocks = dot_blocks(s.count);
        HANDLE_ERROR(cudaMalloc(&partial[j], blocks * sizeof(float)));
        HANDLE_ERROR(cudaMemsetAsync(m.recv, 0xFF, sizeof(float), m.stream));  // poison
        launch_dot(a, b, partial[j], m.recv, s.count, blocks, m.stream);
    }
    // The partial sums, one float per GPU, added by NCCL in place: every GPU gets the total.
    HANDLE_NCCL(ncclGroupStart());
    for (Member& m : members)
        HANDLE_NCCL(ncclAllReduce(m.recv, m.recv, 1, ncclFloat, ncclSum, m.comm, m.stream));
    HANDLE_NCCL(ncclGroupEnd());
    float total = 0;
    HANDLE_ERROR(cudaSetDevice(members[0].device));
    HANDLE_ERROR(cudaMemcpyAsync(&total, members[0].recv, sizeof(float), cudaMemcpyDeviceToHost,
                                 members[0].stream));
    for (size_t j = 0; j < members.size(); ++j) {
        HANDLE_ERROR(cudaSetDevice(members[j].device));
        HANDLE_ERROR(cudaStreamSynchronize(members[j].stream));
        HANDLE_ERROR(cudaFree(partial[j]));
    }
    return total;
}

// "4 KiB", "256 MiB", "1 GiB".
std::string size_text(long long bytes) {
    if (bytes >= (1LL << 30)) return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (1LL << 20)) return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes >> 10) + " KiB";
}

#ifndef CUDA_EXAMPLES_NO_MAIN
#ifdef WITH_MPI
#define PROGRAM_NAME "allreduce_nccl_mpi"
#else
#define PROGRAM_NAME "allreduce_nccl"
#endif
const char* USAGE =
    "usage: " PROGRAM_NAME
    " [--max-mb M] [--dot-n N] [--gpus K] [--repeats R] [--json]\n"
    "  --max-mb M     the sweep's largest all-reduce, in MiB (default 1024; from 4 KiB, x4)\n"
    "  --dot-n N      elements per vector of the dot product (default 2^24)\n"
    "  --gpus K       use the first K GPUs (default: all visible; more than visible: skipped;\n"
    "                 with MPI: one GPU per rank, the rank's place on its node)\n"
    "  --repeats R    timed all-reduces per size after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

// The communicator's members, one per GPU. One process: ncclCommInitAll over
// GPUs 0 .. K-1. With MPI: one GPU per process, the rank's place among the ranks
// of its own node picking it, and the communicator's id invented by rank 0 and
// handed to all by MPI. *nranks gets the communicator's size.
std::vector<Member> make_members(const Args& args, int requested, int* nranks) {
    std::vector<Member> members;
#ifdef WITH_MPI
    int rank = 0, node_rank = 0, node_size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    use_gpus(args.program(), std::max(node_size, requested));  // exit 77 when too few
    ncclUniqueId id;
    if (rank == 0) HANDLE_NCCL(ncclGetUniqueId(&id));        // rank 0 invents the communicator's id
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);  // ... and MPI hands it to all
    members.resize(1);
    members[0].device = node_rank;
    members[0].rank = rank;
    HANDLE_ERROR(cudaSetDevice(node_rank));
    HANDLE_NCCL(ncclCommInitRank(&members[0].comm, *nranks, id, rank));
#else
    *nranks = use_gpus(args.program(), requested);
    members.resize(*nranks);
    std::vector<ncclComm_t> comms(*nranks);
    HANDLE_NCCL(ncclCommInitAll(comms.data(), *nranks, nullptr));  // GPUs 0 .. K-1, one process
    for (int g = 0; g < *nranks; ++g) {
        members[g].device = members[g].rank = g;
        members[g].comm = comms[g];
    }
#endif
    char version[32];
    nccl_version_text(version, sizeof version);
    std::printf("  NCCL %s, %d ranks (%s), NCCL_NVLS_ENABLE=%s\n", version, *nranks,
#ifdef WITH_MPI
                "one process per GPU, MPI",
#else
                "one process",
#endif
                std::getenv("NCCL_NVLS_ENABLE"));
    return members;
}

// The sweep: 4 KiB, 16 KiB, ..., max_mb MiB, each size checked, then timed and
// recorded as bus bandwidth. Returns the wrong values over all sizes.
long long sweep(Report& report, std::vector<Member>& members, long long max_mb, int nranks) {
    std::vector<cudaStream_t> streams;  // streams[j] belongs to GPU devices[j]
    std::vector<int> devices;
    for (Member& m : members) {
        streams.push_back(m.stream);
        devices.push_back(m.device);
    }
    long long wrong = 0;
    for (long long size = 4096; size <= (max_mb << 20); size *= 4) {
        long long count = size / sizeof(float);
        wrong += check_allreduce(members, count, nranks);
        TimingStats t = time_on_gpus(
            streams, [&] { nccl_allreduce(members, count); }, report.repeats(), 2, devices);
        double bus = bus_bandwidth_gbs(size, nranks, t.median_ms);
        // Its ceiling: every byte a GPU sends or receives is read or written in its DRAM.
        report.record("allreduce", ("ncclAllReduce " + size_text(size) + ", bus").c_str(), t, bus,
                      NAN, NAN, nullptr, "dram");
        report.size_of_last("bytes", size);
        report.extra("algbw_gbs", size / (t.median_ms * 1e6));
        report.extra("busbw_gbs", bus);
    }
    return wrong;
}

// With MPI every rank checked its own GPU: the verdict is everyone's. Without,
// the values stay as they are.
void agree_on_verdict(bool* pass, long long* wrong) {
#ifdef WITH_MPI
    int mine = *pass ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    long long all_wrong = 0;
    MPI_Allreduce(wrong, &all_wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    *pass = all == 1;
    *wrong = all_wrong;
#else
    (void)pass, (void)wrong;
#endif
}

int main(int argc, char** argv) {
#ifdef WITH_MPI
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0 && !std::freopen("/dev/null", "w", stdout))  // rank 0 reports for everyone
        std::perror("/dev/null");
#endif
    Args args(argc, argv, USAGE);
    long long max_mb = args.integer("--max-mb", 1024, 1, 16384);
    long long dot_n = args.integer("--dot-n", 1LL << 24, 1, 1LL << 28);
    int requested = read_gpus(args);
    Report report(args, 20);
    long long max_count = std::max(max_mb << 18, 2 * dot_n);  // floats; the dot's a and b too
    size_t bytes = checked_bytes(args, max_count, sizeof(float), 1);
    report.start(2 * bytes, bytes);
    nvls_off_unless_set();  // before the first communicator (multi_gpu.h says why)

    int nranks = 0;
    std::vector<Member> members = make_members(args, requested, &nranks);
    report.size("gpus", (long long)nranks);
    allocate_members(members, bytes);

    // 1. The sweep: 4 KiB, 16 KiB, ..., max-mb MiB.
    long long wrong = sweep(report, members, max_mb, nranks);

    // 2. The dot product whose partial sums NCCL combines.
    float dot = nccl_dot(members, dot_n, nranks);
    std::vector<float> a(dot_n), b(dot_n);
    fill_eighths_host(a.data(), dot_n, 1);
    fill_eighths_host(b.data(), dot_n, 2);
    double reference = dot_reference(a.data(), b.data(), dot_n);
    std::printf("  dot product, partial sums combined by NCCL: %.9e, CPU reference %.9e\n",
                (double)dot, reference);
    bool pass = wrong == 0 && (double)dot == reference;

    free_members(members);
    agree_on_verdict(&pass, &wrong);
    return report.verdict(pass, "%lld values wrong over all sizes and GPUs; dot product %s", wrong,
                          (double)dot == reference ? "exact" : "WRONG");
}
#endif
