// A machine with little memory, for the usage tests of check_fits_on_host()
// (common/args.h): preloaded into a program (LD_PRELOAD), this sysconf()
// answers _SC_PHYS_PAGES as if the machine had CUDA_EXAMPLES_FAKE_HOST_MB
// megabytes of RAM; every other question goes to the C library's sysconf.
// So "a large --dim exits with 2 and a message" can be tested on any machine,
// without allocating the memory that would get a real run OOM-killed.
#include <dlfcn.h>
#include <unistd.h>
#include <cstdlib>

extern "C" long sysconf(int name) noexcept {
    using Sysconf = long (*)(int);
    static Sysconf real = (Sysconf)dlsym(RTLD_NEXT, "sysconf");
    const char* megabytes = std::getenv("CUDA_EXAMPLES_FAKE_HOST_MB");
    if (name == _SC_PHYS_PAGES && megabytes)
        return std::atol(megabytes) * (1 << 20) / real(_SC_PAGE_SIZE);
    return real(name);
}
