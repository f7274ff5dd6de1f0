#!/usr/bin/env python3
"""Every rate's numerator against the hardware's own counters.

A program reports a rate: the bytes or flops it says its kernel moved or did, over the kernel's
time. A check here runs the program once under Nsight Compute (ncu), which profiles ONE launch of
the timed kernel and reads the GPU's counters for it: the bytes that reached DRAM, the FMA
instructions that executed, the Tensor Cores' operations, the bytes read over the host link.
The claim is taken from the program's own JSON record (its rate times its median time: the
numerator the program divided), never from a copy here, and compared with the count within a
tolerance that COUNTS below justifies, kind by kind.

    counters.py run NAME --program BINARY [--result FILE]   one check of checks.json
    counters.py list                                         the checks' names
    counters.py table BUILD_DIR [--json FILE] [--markdown FILE]
                                                             claimed against counted, from a run

Exit codes follow the suite's: 0 the counts agree, 1 they do not (or the run failed), 2 a bad
command line, 77 skipped: no GPU, no ncu, or profiling not permitted to this user (say which).
CUDA_EXAMPLES_REQUIRE_COUNTERS=1 turns the last two skips into failures (a runner that should
profile), and CUDA_EXAMPLES_REQUIRE_GPU=1 the first (as everywhere in the suite).
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from tour import parse_records  # noqa: E402  (the tour's reader of a program's JSON records)

HERE = Path(__file__).resolve().parent
CHECKS_FILE = HERE / "checks.json"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 77
MIB = 1 << 20

# Tolerances, each from what the counter counts (the figures measured on an H200 are in
# docs/runs/h200/side/counters.md).
#  * DRAM bytes (dram__bytes_read.sum + dram__bytes_write.sum). ncu empties the caches before the
#    profiled launch (--cache-control all, its default), so every byte the kernel reads comes from
#    DRAM, once: a kernel that reads a tile or a halo again gets it from L2, and the count does not
#    grow. What it writes goes to L2 first; lines still dirty in L2 when the kernel ends reach DRAM
#    after it, uncounted: a kernel that writes may count up to the L2's size short (H200: 60 MB;
#    H100: 50 MB; 64 MiB allowed). Around that: 2% of the claim, and 4 MiB for the few writes a
#    read-only kernel shows (2.3 to 2.6 MB measured on the H200: lines left dirty before it, we
#    think). A check may allow more above its claim (`over` in checks.json, with the reason): the
#    one thread of VA-GPU-11 is counted 7.6% above it.
#  * FP32 flops: 2 x FFMA + FADD + FMUL, thread instructions that executed with their predicate
#    on (sm__sass_thread_inst_executed_op_*_pred_on.sum): an FFMA is a multiply and an add. A
#    matrix product does W^3 FFMAs; an epilogue (cuBLAS's alpha and beta) adds W^2, 1/W of it. 1%.
#  * Tensor Core flops: sm__ops_path_tensor_src_{bf16,tf32}_dst_fp32.sum, the operations the
#    Tensor Cores did with those inputs, whichever instruction issued them (mma.sync: HMMA, or
#    wgmma: HGMMA). ncu counts a multiply-add as 2 operations: 2 W^3 exactly for every kernel here.
#    The instruction counts (sm__inst_executed_pipe_tensor_op_hmma/gmma) would need each
#    instruction's shape, which the compiler and cuBLAS choose. 1%.
#  * Host link: the sectors the SMs read from host memory through L2
#    (lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum x 32 bytes), the zero-copy kernel's
#    reads, each crossing the link once; 2% and 4 MiB. The link's own counter, pcie__read_bytes.sum,
#    counts more than the payload (9.4% more on the H200): it is shown, and must lie between the
#    claim and 1.15 times it.
#  * Global-memory bytes the kernel's instructions asked for
#    (smsp__sass_data_bytes_mem_global_op_ld.sum + _op_st.sum): what each thread's loads and
#    stores name, before any cache. For VA-GPU-11 (one thread), whose DRAM traffic is 7.6% above
#    the claim while the SMs' own requests to L2 are the claim exactly (checks.json says why):
#    1%.
REL = {"dram": 0.02, "fp32": 0.01, "tensor-bf16": 0.01, "tensor-tf32": 0.01, "link": 0.02,
       "global": 0.01}
L2_ALLOWANCE = 64 * MIB
SLACK_BYTES = 4 * MIB
LINK_OVERHEAD_MAX = 1.15

COUNTS = {
    "dram": ["dram__bytes_read.sum", "dram__bytes_write.sum"],
    "fp32": ["sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
             "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
             "sm__sass_thread_inst_executed_op_fmul_pred_on.sum"],
    "tensor-bf16": ["sm__ops_path_tensor_src_bf16_dst_fp32.sum"],
    "tensor-tf32": ["sm__ops_path_tensor_src_tf32_dst_fp32.sum"],
    "link": ["lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum", "pcie__read_bytes.sum"],
    "global": ["smsp__sass_data_bytes_mem_global_op_ld.sum",
               "smsp__sass_data_bytes_mem_global_op_st.sum", "dram__bytes_read.sum",
               "dram__bytes_write.sum"],
}
ALWAYS = ["gpu__time_duration.sum"]
UNITS = {"dram": "bytes", "link": "bytes", "global": "bytes"}  # the others: flops

PERMISSION_HELP = (
    "profiling is not permitted to this user: ncu said ERR_NVGPUCTRPERM (the driver lets only "
    "administrators read the GPU's performance counters). To allow it: run the tests as root, or "
    "have an administrator set the nvidia kernel module option NVreg_RestrictProfilingToAdminUsers=0 "
    "(a line 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file under "
    "/etc/modprobe.d/, then reload the driver or reboot; in a container, on the host); "
    "see https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def load_checks():
    return json.loads(CHECKS_FILE.read_text())


def find_check(name):
    for c in load_checks()["checks"]:
        if c["name"] == name:
            return c
    return None


def required(variable):
    return os.environ.get(variable, "0") not in ("", "0")


def skip_or_fail(reason, variable):
    """Exit code and message for a check that cannot run here: skipped, or failed where the
    variable says this machine must run it."""
    if required(variable):
        print(f"FAILED: {reason} ({variable}=1: this runner must run the counters checks)")
        return EXIT_FAILED
    print(f"skipped: {reason}")
    return EXIT_NO_DEVICE


def gpu_visible(smi):
    """(True, '') when nvidia-smi lists a GPU; (False, why) otherwise."""
    smi = smi or shutil.which("nvidia-smi")
    if not smi:
        return False, "no usable CUDA device: nvidia-smi not found (is there an NVIDIA GPU and driver?)"
    try:
        r = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"no usable CUDA device: nvidia-smi failed ({e})"
    if r.returncode != 0 or not re.search(r"^GPU \d+:", r.stdout, re.M):
        return False, f"no usable CUDA device: nvidia-smi lists none ({r.stdout.strip()[:120]})"
    return True, ""


def number(text):
    """ncu's CSV value ('536,897,792' with --print-units base) as a float, or None."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_ncu_csv(text):
    """{metric: value} of the one profiled launch, and the kernel's name; ({}, None) if none."""
    lines = [line for line in text.split("\n") if line.startswith('"')]
    metrics, kernel = {}, None
    for row in csv.DictReader(lines):
        kernel = row.get("Kernel Name")
        value = number(row.get("Metric Value", ""))
        if value is not None:
            metrics[row["Metric Name"]] = value
    return metrics, kernel


def claim_of(record, count):
    """The numerator the program divided: its rate times its median time. GB/s x ms x 1e6 =
    bytes; GFLOP/s x ms x 1e6 = flops. None when the record has no such rate."""
    rate = record.get("gbps") if UNITS.get(count) == "bytes" else record.get("gflops")
    median = (record.get("time_ms") or {}).get("median")
    if rate is None or median is None:
        return None
    return rate * median * 1e6


def counted_of(count, metrics):
    """(the count to compare, {detail}) from ncu's metrics."""
    m = metrics
    if count == "dram":
        r, w = m["dram__bytes_read.sum"], m["dram__bytes_write.sum"]
        return r + w, {"dram_read": r, "dram_write": w}
    if count == "fp32":
        ffma = m["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"]
        fadd = m["sm__sass_thread_inst_executed_op_fadd_pred_on.sum"]
        fmul = m["sm__sass_thread_inst_executed_op_fmul_pred_on.sum"]
        return 2 * ffma + fadd + fmul, {"ffma": ffma, "fadd": fadd, "fmul": fmul}
    if count.startswith("tensor-"):
        name = COUNTS[count][0]
        return m[name], {name.split(".")[0]: m[name]}
    if count == "global":
        ld, st = m["smsp__sass_data_bytes_mem_global_op_ld.sum"], m["smsp__sass_data_bytes_mem_global_op_st.sum"]
        return ld + st, {"global_load": ld, "global_store": st, "dram_read": m["dram__bytes_read.sum"],
                         "dram_write": m["dram__bytes_write.sum"]}
    if count == "link":
        sectors = m["lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum"]
        return 32 * sectors, {"sysmem_read_sectors": sectors, "pcie_read": m["pcie__read_bytes.sum"]}
    raise KeyError(count)


def bounds(check, claim):
    """(lowest, highest) count that agrees with the claim (the tolerances above)."""
    count = check["count"]
    rel = REL[count]
    # `pad`: a tiled product at a Width that is no multiple of its tile does the padded work,
    # 2 Wp^3 with Wp the Width rounded up to the tile (checks.json's pad_why says why).
    claim *= check.get("pad_factor", 1)
    low, high = claim * (1 - rel), claim * (1 + rel + check.get("over", 0))
    if count in ("dram", "link"):
        high += SLACK_BYTES
        low -= SLACK_BYTES if count == "link" else 0
    if count == "dram" and check.get("writes"):
        low -= L2_ALLOWANCE
    return low, high


def compare(check, claim, metrics):
    """The comparison's result: a dict with ok, the figures and one line that says it."""
    counted, detail = counted_of(check["count"], metrics)
    seconds = metrics.get("gpu__time_duration.sum", 0) * 1e-9  # ncu: nanoseconds
    low, high = bounds(check, claim)
    ok = low <= counted <= high
    unit = "bytes" if UNITS.get(check["count"]) == "bytes" else "flops"
    ratio = counted / claim if claim else float("inf")
    line = (f"{check['count']}: the program claims {claim:.6g} {unit}, the counters say {counted:.6g} "
            f"(x{ratio:.4f}); agreed range {low:.6g} .. {high:.6g}")
    if check["count"] == "link":
        pcie = detail["pcie_read"]
        link_ok = claim * (1 - REL["link"]) <= pcie <= claim * LINK_OVERHEAD_MAX + SLACK_BYTES
        line += (f"; the link's own counter pcie__read_bytes {pcie:.6g} (x{pcie / claim:.4f}, "
                 f"allowed x{1 - REL['link']:.2f} .. x{LINK_OVERHEAD_MAX:.2f})")
        ok = ok and link_ok
    return {"ok": ok, "claimed": claim, "counted": counted, "ratio": ratio, "low": low,
            "high": high, "unit": unit, "kernel_seconds": seconds, "detail": detail, "line": line}


def cmd_run(args):
    check = find_check(args.name)
    if check is None:
        print(f"counters.py: no check named {args.name!r} in {CHECKS_FILE}")
        return EXIT_USAGE
    ok, why = gpu_visible(args.nvidia_smi)
    if not ok:
        return skip_or_fail(why, "CUDA_EXAMPLES_REQUIRE_GPU")
    ncu = args.ncu or shutil.which("ncu")
    if not ncu:
        cuda = Path("/usr/local/cuda/bin/ncu")
        ncu = str(cuda) if cuda.is_file() else None
    if not ncu:
        return skip_or_fail("Nsight Compute (ncu) was not found: it comes with the CUDA Toolkit "
                            "(/usr/local/cuda/bin/ncu); put it on PATH", "CUDA_EXAMPLES_REQUIRE_COUNTERS")
    metrics = COUNTS[check["count"]] + ALWAYS
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        # --clock-control none: the GPU's clocks are left as they are (a count does not depend
        # on them). One launch of one kernel, only the metrics needed: one replay pass.
        words = [ncu, "--clock-control", "none", "--metrics", ",".join(metrics),
                 "-k", check["kernel"], "--launch-skip", str(check["skip"]), "--launch-count", "1",
                 "--csv", "--print-units", "base", "--log-file", str(log),
                 args.program, *check["args"], "--repeats", "1", "--json"]
        # The program's lessons are timings, meaningless under a profiler: reported, not enforced.
        env = dict(os.environ, CUDA_EXAMPLES_LESSONS="report")
        print("$ " + " ".join(words))
        start = time.monotonic()
        try:
            r = subprocess.run(words, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=args.timeout, env=env)
        except subprocess.TimeoutExpired:
            print(f"FAILED: the run under ncu did not end within {args.timeout} s")
            return EXIT_FAILED
        took = time.monotonic() - start
        log_text = log.read_text(errors="replace") if log.is_file() else ""
    said = r.stdout + "\n" + log_text
    if "ERR_NVGPUCTRPERM" in said:
        return skip_or_fail(PERMISSION_HELP, "CUDA_EXAMPLES_REQUIRE_COUNTERS")
    if r.returncode == EXIT_NO_DEVICE:
        last = [line for line in r.stdout.split("\n") if line.strip()]
        return skip_or_fail(last[-1] if last else "the program found no GPU (exit 77)",
                            "CUDA_EXAMPLES_REQUIRE_GPU")
    tail = "\n".join("    " + line for line in said.strip().split("\n")[-12:])
    if r.returncode != 0:
        print(f"FAILED: the program under ncu exited {r.returncode}:\n{tail}")
        return EXIT_FAILED
    counted, kernel = parse_ncu_csv(log_text)
    missing = [m for m in metrics if m not in counted]
    if kernel is None:
        print(f"FAILED: ncu profiled no launch of {check['kernel']} (after skipping {check['skip']}):"
              f" the kernel was renamed, or launched fewer times\n{tail}")
        return EXIT_FAILED
    if missing:
        print(f"FAILED: ncu did not report {', '.join(missing)} for {kernel}\n{tail}")
        return EXIT_FAILED
    mine = [x for x in parse_records(r.stdout) if x.get("variant") == check["record"]]
    if len(mine) != 1:
        print(f"FAILED: the program printed {len(mine)} JSON records of variant "
              f"{check['record']!r} (one expected)\n{tail}")
        return EXIT_FAILED
    claim = claim_of(mine[0], check["count"])
    if check.get("pad"):
        width = ((mine[0].get("size") or {}).get("width")) or 0
        padded = -(-width // check["pad"]) * check["pad"]
        check = dict(check, pad_factor=(padded / width) ** 3 if width else 1)
    if not claim:
        print(f"FAILED: the record {check['record']!r} has no {UNITS.get(check['count'], 'flops')} "
              f"rate to check: {json.dumps(mine[0])[:300]}")
        return EXIT_FAILED
    result = compare(check, claim, counted)
    print(f"kernel: {kernel}")
    print(f"  {check['why']}")
    print(f"  {result['line']}")
    print(f"  (the run under ncu took {took:.1f} s)")
    if args.result:
        record = {"name": check["name"], "program": check["program"], "args": check["args"],
                  "record": check["record"], "count": check["count"], "kernel": kernel,
                  "device": mine[0].get("device"), "seconds_under_ncu": round(took, 2),
                  **{k: v for k, v in result.items() if k != "line"}}
        Path(args.result).parent.mkdir(parents=True, exist_ok=True)
        Path(args.result).write_text(json.dumps(record, indent=1))
    if result["ok"]:
        print(f"counters: {check['name']}: the claim agrees with the counters")
        return EXIT_OK
    print(f"COUNTED OTHERWISE: {check['name']}: the program's {result['unit']} are not what the "
          f"hardware counted: its rate's numerator is wrong")
    return EXIT_FAILED


def cmd_table(args):
    rows = []
    for path in sorted(Path(args.target).glob("counters/*.json")):
        rows.append(json.loads(path.read_text()))
    order = {c["name"]: i for i, c in enumerate(load_checks()["checks"])}
    rows.sort(key=lambda r: order.get(r["name"], 1e9))
    lines = ["| check | kernel | compared | claimed | counted | counted / claimed | agreed range | ok |",
             "|---|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        kernel = re.sub(r"\(.*$", "", r["kernel"]).replace("void ", "").replace("|", "\\|")
        lines.append(f"| {r['name']} | `{kernel[:48]}` | {r['count']} | {r['claimed']:.4g} | "
                     f"{r['counted']:.4g} | {r['ratio']:.4f} | {r['low'] / r['claimed']:.3f} .. "
                     f"{r['high'] / r['claimed']:.3f} | {'yes' if r['ok'] else '**NO**'} |")
    text = "\n".join(lines)
    if args.json:
        Path(args.json).write_text(json.dumps({"checks": rows}, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    print(text)
    print(f"\n{len(rows)} checks with results under {args.target}/counters")
    return EXIT_OK if rows and all(r["ok"] for r in rows) else EXIT_FAILED


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("run", "list", "table"))
    p.add_argument("target", nargs="?", help="(run) a check's name; (table) the build directory")
    p.add_argument("--program", help="(run) the program's binary")
    p.add_argument("--result", help="(run) where the comparison goes, as JSON (read by 'table')")
    p.add_argument("--ncu", help="(run) the ncu binary (default: ncu on PATH, or the toolkit's)")
    p.add_argument("--nvidia-smi", help="(run) nvidia-smi (default: on PATH)")
    p.add_argument("--timeout", type=int, default=300, help="(run) seconds for the run under ncu")
    p.add_argument("--json", help="(table) write the rows as JSON")
    p.add_argument("--markdown", help="(table) write the table as Markdown")
    args = p.parse_args()
    if args.command == "list":
        print("\n".join(c["name"] for c in load_checks()["checks"]))
        return EXIT_OK
    if not args.target:
        p.error(f"{args.command} needs a {'check name' if args.command == 'run' else 'build directory'}")
    if args.command == "table":
        return cmd_table(args)
    if not args.program:
        p.error("run needs --program BINARY")
    args.name = args.target
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
