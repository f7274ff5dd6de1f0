// common/args.h -- a small, strict command-line parser shared by every program.
//
// Options look like `--n 1000` or `--n=1000`; flags like `--json`. Every
// number is checked: non-numeric text, a sign, zero where zero means nothing,
// and values too large are each refused with one clear message, followed by
// the usage, and exit code 2. Numbers may be written as powers of two: 2^20.
//
//   Args args(argc, argv, USAGE);   // USAGE starts "usage: VA-GPU-NN ...": the name
//   long long n = args.integer("--n", 1 << 20, 1, max_n);
//   bool json   = args.flag("--json");
//   args.done();   // refuses anything left over (typos, unknown options)
#pragma once

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>
#include "handle_error.h"

// Parses a whole decimal integer or 2^K. Returns false and sets *why on error.
inline bool parse_integer(const std::string& text, long long* out, std::string* why) {
    if (text.empty()) {
        *why = "is empty";
        return false;
    }
    if (text[0] == '-') {
        *why = "must not be negative";
        return false;
    }
    size_t caret = text.find('^');
    if (caret != std::string::npos) {
        long long base = 0, exponent = 0;
        // Exactly one caret, digits on both sides: "2^2^3" is refused, not read as 2^(2^3).
        std::string left = text.substr(0, caret), right = text.substr(caret + 1);
        if (right.find('^') != std::string::npos || !parse_integer(left, &base, why) ||
            !parse_integer(right, &exponent, why)) {
            *why = "is not a number (expected digits or a power like 2^20)";
            return false;
        }
        if (base != 2 || exponent > 62) {
            *why = "is out of range (powers 2^0 to 2^62)";
            return false;
        }
        *out = 1LL << exponent;
        return true;
    }
    for (char c : text) {
        if (!std::isdigit((unsigned char)c)) {
            *why = "is not a whole number (expected digits or a power like 2^20)";
            return false;
        }
    }
    errno = 0;
    long long value = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) {
        *why = "is too large";
        return false;
    }
    *out = value;
    return true;
}

class Args {
public:
    // The program's name is the word after "usage: ", so it is typed once.
    Args(int argc, char** argv, const char* usage) : Args(argc, argv, name_in(usage), usage) {}

    Args(int argc, char** argv, const std::string& program, const char* usage)
        : program_(program), usage_(usage) {
        for (int i = 1; i < argc; ++i) words_.push_back(argv[i]);
        used_.assign(words_.size(), false);
        for (const std::string& w : words_) {
            if (w == "--help" || w == "-h") {
                std::printf("%s", usage_);
                std::exit(EXIT_CODE_OK);
            }
        }
    }

    // Prints "program: error: message", then the usage, and exits with code 2.
    [[noreturn]] void fail(const std::string& message) const {
        std::fprintf(stderr, "%s: error: %s\n\n%s", program(), message.c_str(), usage_);
        std::exit(EXIT_CODE_USAGE);
    }

    bool flag(const char* name) {
        bool seen = false;
        for (size_t i = 0; i < words_.size(); ++i) {
            if (used_[i]) continue;
            if (words_[i] == name) {
                if (seen) fail(std::string(name) + " is given twice");
                used_[i] = seen = true;
            } else if (words_[i].rfind(std::string(name) + "=", 0) == 0) {
                fail(std::string(name) + " is a flag and takes no value");
            }
        }
        return seen;
    }

    // The option's text, or `fallback` when it is absent. A value that is
    // given but empty (--scene '') is refused: it never means "not given".
    std::string text(const char* name, const char* fallback) {
        std::string value;
        if (!find(name, &value)) return std::string(fallback);
        if (value.empty())
            fail(std::string(name) + " is empty (give a value, or leave the option out)");
        return value;
    }

    // Was the option (or flag) on the command line? Does not consume it, so
    // the value is still read with text() or integer() afterwards.
    bool given(const char* name) const {
        std::string with_equals = std::string(name) + "=";
        for (size_t i = 0; i < words_.size(); ++i)
            if (words_[i] == name || words_[i].rfind(with_equals, 0) == 0) return true;
        return false;
    }

    // An integer option in [min, max], or `fallback` when it is absent.
    long long integer(const char* name, long long fallback, long long min, long long max) {
        std::string value;
        if (!find(name, &value)) return fallback;
        return to_integer(name, value, min, max);
    }

    long long to_integer(const char* name, const std::string& value, long long min, long long max) {
        long long result = 0;
        std::string why;
        if (!parse_integer(value, &result, &why))
            fail(std::string(name) + " '" + value + "' " + why);
        if (result < min) {
            fail(std::string(name) + " '" + value + "' " +
                 (result == 0 ? "must not be zero"
                              : "is too small (at least " + std::to_string(min) + ")"));
        }
        if (result > max)
            fail(std::string(name) + " '" + value + "' is too large (at most " +
                 std::to_string(max) + ")");
        return result;
    }

    // Call once every option has been read: anything left over is an error.
    void done() {
        for (size_t i = 0; i < words_.size(); ++i)
            if (!used_[i]) fail("unknown option '" + words_[i] + "'");
    }

    const char* program() const { return program_.c_str(); }

private:
    static std::string name_in(const char* usage) {
        std::string text = usage, prefix = "usage: ";
        if (text.rfind(prefix, 0) != 0) return "program";
        return text.substr(prefix.size(), text.find_first_of(" \n", prefix.size()) - prefix.size());
    }

    bool find(const char* name, std::string* value) {
        bool seen = false;
        std::string with_equals = std::string(name) + "=";
        for (size_t i = 0; i < words_.size(); ++i) {
            if (used_[i]) continue;
            std::string candidate;
            if (words_[i] == name) {
                if (i + 1 >= words_.size()) fail(std::string(name) + " needs a value");
                candidate = words_[i + 1];
                used_[i] = used_[i + 1] = true;
                ++i;
            } else if (words_[i].rfind(with_equals, 0) == 0) {
                candidate = words_[i].substr(with_equals.size());
                used_[i] = true;
            } else {
                continue;
            }
            if (seen) fail(std::string(name) + " is given twice");
            seen = true;
            *value = candidate;
        }
        return seen;
    }

    std::string program_;
    const char* usage_;
    std::vector<std::string> words_;
    std::vector<bool> used_;
};

// Multiplies count x element size x arrays, refusing a result that overflows.
inline size_t checked_bytes(const Args& args, long long count, size_t element_bytes, int arrays) {
    unsigned long long bytes = 0;
    if (__builtin_mul_overflow((unsigned long long)count, (unsigned long long)element_bytes,
                               &bytes) ||
        __builtin_mul_overflow(bytes, (unsigned long long)arrays, &bytes) || bytes > SIZE_MAX)
        args.fail("the requested size overflows a byte count");
    return (size_t)bytes;
}

// Refuses a request larger than the device memory that is free right now.
inline void check_fits_on_device(const Args& args, size_t bytes_needed) {
    size_t free_bytes = 0, total_bytes = 0;
    HANDLE_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes_needed > free_bytes) {
        char message[200];
        std::snprintf(
            message, sizeof message,
            "this size needs %.2f GB of device memory, but only %.2f GB of %.2f GB are free",
            bytes_needed / 1e9, free_bytes / 1e9, total_bytes / 1e9);
        args.fail(message);
    }
}

// The RAM the operating system reports, in bytes; 0 when it cannot say.
// (On a virtual machine whose memory grows on demand this can be less than
// the machine would give; the check below is then on the careful side.)
inline unsigned long long host_physical_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return (unsigned long long)pages * (unsigned long long)page_size;
}

// Refuses a request for more than half of the host's RAM, with exit 2 rather
// than a visit from the out-of-memory killer half-way through the run. Half,
// because the machine must stay usable, and pinned memory (chapter 6) can
// never be paged out at all.
inline void check_fits_on_host(const Args& args, size_t bytes_needed) {
    unsigned long long total = host_physical_bytes();
    if (total != 0 && bytes_needed > total / 2) {
        char message[240];
        std::snprintf(message, sizeof message,
                      "this size needs %.2f GB of host memory, more than half of the %.2f GB this "
                      "machine has (this program keeps to half, so the machine stays usable)",
                      bytes_needed / 1e9, total / 1e9);
        args.fail(message);
    }
}

// A run that will take a long time says so before it starts, so nobody
// mistakes it for a hang: "note: this run will take about 40 s (...)".
inline void announce_long_run(double estimated_seconds, const char* why) {
    if (estimated_seconds < 10) return;
    if (estimated_seconds < 120)
        std::printf("note: this run will take about %.0f s (%s)\n", estimated_seconds, why);
    else if (estimated_seconds < 7200)
        std::printf("note: this run will take about %.0f minutes (%s)\n", estimated_seconds / 60,
                    why);
    else
        std::printf("note: this run will take about %.1f hours (%s)\n", estimated_seconds / 3600,
                    why);
    std::fflush(stdout);
}

// A run estimated at more than this starts only when its program's flag asks for it.
const double LONG_RUN_SECONDS = 300;

// "this run would take about 148.2 hours (...): add --long-run to start it anyway".
inline std::string long_run_refusal(double estimated_seconds, const char* flag) {
    char text[200];
    if (estimated_seconds < 7200)
        std::snprintf(text, sizeof text, "this run would take about %.0f minutes",
                      estimated_seconds / 60);
    else
        std::snprintf(text, sizeof text, "this run would take about %.1f hours",
                      estimated_seconds / 3600);
    return std::string(text) + " (estimated from 64 elements of the product timed here): add " +
           flag + " to start it anyway, or choose a smaller size";
}

// malloc that refuses, with a clear message, a request the host cannot meet.
inline void* host_alloc(const Args& args, size_t bytes) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) {
        char message[120];
        std::snprintf(message, sizeof message, "cannot allocate %.2f GB of host memory",
                      bytes / 1e9);
        args.fail(message);
    }
    return p;
}
