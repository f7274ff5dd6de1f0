// common/report.h -- how every program reports what it measured.
//
// A program prints a readable report and ends with one verdict line:
//   Verdict: PASS (GPU result matches the CPU reference: ...)
// With --json it also prints one JSON object per measurement, each on its own
// line starting with {"schema":1, so a script (scripts/tour.py) can pick them
// out of the output. Every record has the same core fields:
//   schema, program, variant, device, cc, size{...}, launch{...},
//   time_ms{median,min,max,repeats}, gbps, gflops, pct_peak, peak, verdict
// plus any extra fields the program adds. null means "does not apply".
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include "device_info.h"
#include "timer.h"

class JsonRecord {
public:
    JsonRecord& add(const std::string& key, const std::string& value) { return raw(key, quote(value)); }
    JsonRecord& add(const std::string& key, const char* value) { return raw(key, quote(value)); }
    JsonRecord& add(const std::string& key, long long value) { return raw(key, std::to_string(value)); }
    JsonRecord& add(const std::string& key, int value) { return raw(key, std::to_string(value)); }
    JsonRecord& add(const std::string& key, bool value) { return raw(key, value ? "true" : "false"); }
    JsonRecord& add(const std::string& key, double value) {
        if (!std::isfinite(value)) return raw(key, "null");
        char text[64];
        std::snprintf(text, sizeof text, "%.6g", value);
        return raw(key, text);
    }
    JsonRecord& add(const std::string& key, const JsonRecord& object) { return raw(key, object.str()); }
    JsonRecord& null(const std::string& key) { return raw(key, "null"); }
    JsonRecord& raw(const std::string& key, const std::string& json_value) {
        body_ += (body_.empty() ? "" : ",") + quote(key) + ":" + json_value;
        return *this;
    }
    std::string str() const { return "{" + body_ + "}"; }

    static std::string quote(const std::string& s) {
        std::string out = "\"";
        for (unsigned char c : s) {
            if (c == '"' || c == '\\') { out += '\\'; out += (char)c; }
            else if (c == '\n') out += "\\n";
            else if (c < 0x20) { char u[8]; std::snprintf(u, sizeof u, "\\u%04x", c); out += u; }
            else out += (char)c;
        }
        return out + "\"";
    }

private:
    std::string body_;
};

// The fields every measurement shares, measured against a limit the caller
// names: pct_peak = pct_of_limit and peak = limit (NAN / nullptr: null). Used
// directly where the limit is not the device's, e.g. chapter 6's PCIe link
// (which CUDA does not report) or a stream schedule's ideal overlap.
inline JsonRecord measurement_against(const char* program, const char* variant, const DeviceInfo& dev,
                                      const TimingStats& t, double gbps, double gflops,
                                      double pct_of_limit, const char* limit, const char* verdict) {
    JsonRecord time;
    time.add("median", t.median_ms).add("min", t.min_ms).add("max", t.max_ms).add("repeats", t.repeats);
    JsonRecord r;
    r.add("schema", 1).add("program", program).add("variant", variant).add("device", dev.name)
        .add("cc", dev.compute_capability()).add("time_ms", time).add("gbps", gbps).add("gflops", gflops);
    if (std::isfinite(pct_of_limit) && limit) {
        r.add("pct_peak", pct_of_limit).add("peak", limit);
    } else {
        r.null("pct_peak").null("peak");
    }
    return r.add("verdict", verdict);
}

// The usual case: a rate measured against the device's theoretical peak,
// "dram" (memory bandwidth) for GB/s or "fp32" (FP32 rate) for GFLOP/s.
// A rate that does not apply is passed as NAN.
inline JsonRecord measurement(const char* program, const char* variant, const DeviceInfo& dev,
                              const TimingStats& t, double gbps, double gflops, const char* verdict) {
    if (std::isfinite(gbps))
        return measurement_against(program, variant, dev, t, gbps, gflops,
                                   100.0 * gbps / dev.peak_bandwidth_gbs(), "dram", verdict);
    if (std::isfinite(gflops))
        return measurement_against(program, variant, dev, t, gbps, gflops,
                                   100.0 * gflops / dev.peak_fp32_gflops(), "fp32", verdict);
    return measurement_against(program, variant, dev, t, gbps, gflops, NAN, nullptr, verdict);
}

inline void print_json(bool enabled, const JsonRecord& record) {
    if (enabled) std::printf("%s\n", record.str().c_str());
}

// One readable line: label, median (min..max) and, when given, a rate.
inline void print_timing(const char* label, const TimingStats& t, double gbps, double pct_of_peak) {
    std::printf("  %-34s median %9.4f ms  (min %.4f, max %.4f, %d runs)", label, t.median_ms, t.min_ms,
                t.max_ms, t.repeats);
    if (std::isfinite(gbps)) std::printf("  %8.1f GB/s = %5.1f%% of peak", gbps, pct_of_peak);
    std::printf("\n");
}

// The last line of every report. Returns the program's exit code.
inline int verdict(bool pass, const std::string& detail) {
    std::printf("Verdict: %s (%s)\n", pass ? "PASS" : "FAIL", detail.c_str());
    std::fflush(stdout);
    return pass ? EXIT_CODE_OK : EXIT_CODE_FAILED;
}
