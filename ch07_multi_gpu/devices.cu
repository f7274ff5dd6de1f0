// devices.cu -- every visible GPU, and which of them can reach each other (chapter 7).
//
// Before splitting work over GPUs: how many are there, and how are they connected?
// From the CUDA runtime, for every GPU its name, PCI bus id and memory; for every pair
//   cudaDeviceCanAccessPeer       may a kernel on one read the other's memory directly?
//   cudaDevP2PAttrPerformanceRank the driver's relative rank of the link (0 = best)
//   cudaDevP2PAttrNativeAtomicSupported  atomics across the link
// and, from NVML (the library behind nvidia-smi) when the driver has it, the link
// itself, as `nvidia-smi topo -m` prints it: NV (NVLink), or the PCIe path between
// the two (PIX one switch, PXB several, PHB a host bridge, NODE within a NUMA node,
// SYS across the CPUs' interconnect). NVML is opened at run time (dlopen), so this
// program builds without it and says so when it is missing.
// Each pair that claims peer access is then tried: peer access enabled, a kernel on
// one GPU reads a value from the other's memory, and the value is checked.
//
// Source: CUDA by Example (2010), chapter 11; `nvidia-smi topo -m`; NVML's reference,
// "Topology Queries".
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o devices devices.cu -ldl
// Run:
//   ./devices

#include <dlfcn.h>
#include <string>
#include <vector>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h
#include "multi_gpu.h"

// A kernel on one GPU reads n values of another GPU's memory (peer access on) and
// writes them into its own: the proof that the pair can really reach each other.
__global__ void read_peer(const float* theirs, float* mine, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) mine[i] = theirs[i];
}

// NVML, the few calls used here, found at run time. The types are NVML's (nvml.h):
// a device handle, and C enums (int) for results, levels and capabilities.
struct Nvml {
    typedef struct nvmlDevice_st* Device;
    void* library = nullptr;
    int (*init)() = nullptr;
    int (*by_bus_id)(const char*, Device*) = nullptr;
    int (*common_ancestor)(Device, Device, int*) = nullptr;
    int (*p2p_status)(Device, Device, int, int*) = nullptr;
    int (*shutdown)() = nullptr;
    static const int SUCCESS = 0, P2P_CAPS_INDEX_NVLINK = 2, P2P_STATUS_OK = 0;

    bool open() {
        library = dlopen("libnvidia-ml.so.1", RTLD_NOW);
        if (!library) return false;
        init = (int (*)())dlsym(library, "nvmlInit_v2");
        by_bus_id =
            (int (*)(const char*, Device*))dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2");
        common_ancestor =
            (int (*)(Device, Device, int*))dlsym(library, "nvmlDeviceGetTopologyCommonAncestor");
        p2p_status = (int (*)(Device, Device, int, int*))dlsym(library, "nvmlDeviceGetP2PStatus");
        shutdown = (int (*)())dlsym(library, "nvmlShutdown");
        return init && by_bus_id && common_ancestor && p2p_status && shutdown && init() == SUCCESS;
    }
    // What `nvidia-smi topo -m` prints for the pair.
    std::string link(Device a, Device b) const {
        int status = -1, level = -1;
        if (p2p_status(a, b, P2P_CAPS_INDEX_NVLINK, &status) == SUCCESS && status == P2P_STATUS_OK)
            return "NV";
        if (common_ancestor(a, b, &level) != SUCCESS) return "?";
        switch (level) {  // nvmlGpuTopologyLevel_t
            case 0:
                return "SELF";
            case 10:
                return "PIX";
            case 20:
                return "PXB";
            case 30:
                return "PHB";
            case 40:
                return "NODE";
            case 50:
                return "SYS";
            default:
                return "?";
        }
    }
};

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: devices [--json]\n"
    "  --json         (accepted, as by every program: this one measures nothing)\n";

// GPU j holds 256 known values; GPU i reads them through its peer mapping.
// True when every value arrived.
bool reads_across(int i, int j) {
    const int n = 256;
    float *theirs, *mine;
    std::vector<float> got(n);
    HANDLE_ERROR(cudaSetDevice(j));
    HANDLE_ERROR(cudaMalloc(&theirs, n * sizeof(float)));
    launch_fill_eighths(theirs, 0, n, j);
    HANDLE_ERROR(cudaDeviceSynchronize());
    enable_peer_access(std::max(i, j) + 1);
    HANDLE_ERROR(cudaSetDevice(i));
    HANDLE_ERROR(cudaMalloc(&mine, n * sizeof(float)));
    HANDLE_ERROR(cudaMemset(mine, 0xFF, n * sizeof(float)));  // poison
    read_peer<<<1, n>>>(theirs, mine, n);
    CHECK_LAUNCH_SYNC();
    HANDLE_ERROR(cudaMemcpy(got.data(), mine, n * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int v = 0; v < n; ++v) ok = ok && got[v] == eighth(v, j);
    HANDLE_ERROR(cudaFree(mine));
    HANDLE_ERROR(cudaSetDevice(j));
    HANDLE_ERROR(cudaFree(theirs));
    return ok;
}

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    Report report(args, 1);
    report.start(0, 0);
    int k = use_gpus(args.program(), 0);
    report.size("gpus", (long long)k);

    Nvml nvml;
    bool have_nvml = nvml.open();
    std::vector<Nvml::Device> handles(k, nullptr);
    std::vector<std::string> bus(k);
    for (int g = 0; g < k; ++g) {
        DeviceInfo d = query_device(g);
        char id[32];
        HANDLE_ERROR(cudaDeviceGetPCIBusId(id, sizeof id, g));
        bus[g] = id;
        if (have_nvml && nvml.by_bus_id(id, &handles[g]) != Nvml::SUCCESS) have_nvml = false;
        std::printf("  GPU %d: %s, PCI %s, %d SMs, %.0f GB, memory %.0f GB/s\n", g, d.name.c_str(),
                    id, d.sm_count, d.total_bytes / 1e9, d.peak_bandwidth_gbs());
    }
    std::printf("  links (NVML): %s\n", have_nvml ? "found" : "libnvidia-ml not available");

    // The pairs: what the runtime says, what NVML says, and a real read across.
    long long failed = 0;
    std::printf("  %-8s %-6s %-6s %-6s %-8s %s\n", "pair", "peer", "rank", "atomic", "link",
                "read across");
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
            if (i == j) continue;
            int can = 0, rank = -1, atomic = 0;
            HANDLE_ERROR(cudaDeviceCanAccessPeer(&can, i, j));
            HANDLE_ERROR(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
            HANDLE_ERROR(
                cudaDeviceGetP2PAttribute(&atomic, cudaDevP2PAttrNativeAtomicSupported, i, j));
            std::string link = have_nvml ? nvml.link(handles[i], handles[j]) : "-";
            const char* read = "-";
            if (can) {
                bool ok = reads_across(i, j);
                failed += !ok;
                read = ok ? "ok" : "WRONG";
            }
            std::printf("  %d -> %d   %-6s %-6d %-6s %-8s %s\n", i, j, can ? "yes" : "no", rank,
                        atomic ? "yes" : "no", link.c_str(), read);
        }
    if (k == 1) std::printf("  one GPU: no pairs\n");
    if (have_nvml) nvml.shutdown();
    return report.verdict(failed == 0,
                          "%d GPU%s; %lld pair%s that claim peer access failed to read across", k,
                          k > 1 ? "s" : "", failed, failed == 1 ? "" : "s");
}
#endif
