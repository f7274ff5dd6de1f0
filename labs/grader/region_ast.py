"""Host regions by whitelist, on clang's own tree.

A token lint cannot make C++ memory-safe: a structured binding over a struct's members, an
integer turned into a pointer and back, a local array's address as the start of a scan each gave
a ch06 schedule the driver's buffers without one banned word. So a host region (code the
program runs on the CPU, beside the driver's data) is read by clang's front end (libclang, the
`libclang` package in .venv/), in its real context: the course's program with the student's
region spliced in, the other regions the course's own. What clang built for the region's lines is
then accepted only when every node is one the task needs (WHITELIST below): the calls of its
task's API with integer arguments, integer locals, loops, conditionals, integer arithmetic and
comparison, and the few names, members, casts and macros labs/labs.json gives the region
("objects", "casts", "sizeof", "macros"). Anything else is refused, whatever its tokens look
like: no pointer, reference, array, union, struct, lambda, cast, address or dereference can
appear, because no node of a pointer type, no declaration but of the integers and no cast but to
the listed enums is on the list.

How it parses. nvcc's host pass sees the program as C++ with the CUDA runtime's declarations; so
does this: `-x c++ -std=c++17`, the CUDA toolkit's headers (cuda_runtime.h,
device_launch_parameters.h) included first and __CUDACC__ defined after them (the course's
headers test it), the host compiler's own builtin headers (stddef.h: the libclang package ships
libclang.so without clang's resource headers), and a kernel launch's `<<<grid, block>>>` blanked
outside the region (nvcc turns it into a call; a host region has none: there it is an error).
The course's programs parse without an error so; any error refuses the region.
Macros: the AST is of the preprocessed text, so the region's macro expansions are refused unless
the region's "macros" lists them (HANDLE_ERROR), and the lint's token rules still guard what
comes before preprocessing (directives, trigraphs, splices, non-ASCII). A node that a listed macro
wrote (its body, in the course's header) is the course's; its arguments are the student's and are
checked like the rest.

The parse runs in a child (clang_child.py) under a time and memory limit. Without libclang the
grader refuses to grade (exit 77, MissingClang): it never falls back to the token lint alone.
A device region is parsed here too, as CUDA device code (parse_many(device=True): DEVICE_ARGS and
DEVICE_PRELUDE below, launches left as they are), and judged by device_ast.py's whitelist.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .labs import REPO, regions

CHILD = Path(__file__).resolve().parent / "clang_child.py"
TIME_LIMIT = 60  # seconds of wall clock for one parse (a course program takes about 1 s)
MEMORY_LIMIT = 2 << 30  # bytes of address space for the parsing child
INTEGER = {"BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG", "CHAR_S", "SCHAR",
           "SHORT", "INT", "LONG", "LONGLONG"}
# The operators of integer arithmetic and comparison (clang's spellings). Not ',' (the comma
# operator), not '.*' or '->*'.
BINARY = {"*", "/", "%", "+", "-", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "^", "|",
          "&&", "||", "=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|="}
UNARY = {"+", "-", "~", "!", "++", "--"}  # not '&' (address-of), not '*' (dereference)
ASSIGNING = {"=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=", "++", "--"}
# Statements a host region may hold.
STATEMENTS = {"COMPOUND_STMT", "DECL_STMT", "FOR_STMT", "WHILE_STMT", "DO_STMT", "IF_STMT",
              "BREAK_STMT", "CONTINUE_STMT", "NULL_STMT"}


class MissingClang(RuntimeError):
    """libclang is not installed: the grader cannot check a host region, and says so."""


def _has_clang(python):
    try:
        return subprocess.run([python, "-c", "import clang.cindex as c; c.Index.create()"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


_python = []


def clang_python():
    """The interpreter that has libclang: this one, or the project's .venv/ (scripts/setup.sh
    installs the `libclang` package there); MissingClang when neither has it."""
    if not _python:
        for py in (sys.executable, str(REPO / ".venv" / "bin" / "python")):
            if os.path.exists(py) and _has_clang(py):
                _python.append(py)
                break
        else:
            raise MissingClang(
                "the region lint needs libclang (the Python package `libclang`, clang's front end) to "
                "check host regions, and neither this Python nor the project's .venv/ has it: run "
                "scripts/setup.sh (or: .venv/bin/pip install -r requirements.txt); the grader does not "
                "grade without it")
    return _python[0]


def _host_include():
    """The host compiler's builtin headers (stddef.h, stdarg.h), which libclang's package lacks."""
    for cc in ("g++", "gcc", "cc"):
        if shutil.which(cc):
            out = subprocess.run([cc, "-print-file-name=include"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
            if out and os.path.isdir(out):
                return out
    return None


def _cuda_include(nvcc=None):
    for cand in ([os.path.realpath(nvcc)] if nvcc and os.path.exists(nvcc) else []) + \
            [shutil.which("nvcc") or "", "/usr/local/cuda/bin/nvcc"]:
        inc = Path(cand).resolve().parent.parent / "include" if cand else None
        if inc and (inc / "cuda_runtime.h").exists():
            return str(inc)
    return "/usr/local/cuda/include"


def _device_prelude():
    """The device parse's own declarations (DEVICE_PRELUDE below)."""
    shuffles = []
    for t in ("int", "unsigned", "long long", "unsigned long long", "float", "double"):
        shuffles += [f"__device__ {t} __shfl_sync(unsigned, {t}, int, int = 32);",
                     f"__device__ {t} __shfl_up_sync(unsigned, {t}, unsigned, int = 32);",
                     f"__device__ {t} __shfl_down_sync(unsigned, {t}, unsigned, int = 32);",
                     f"__device__ {t} __shfl_xor_sync(unsigned, {t}, int, int = 32);",
                     f"__device__ {t} min({t}, {t});", f"__device__ {t} max({t}, {t});",
                     f"__device__ {t} atomicAdd({t}*, {t});", f"__device__ {t} atomicExch({t}*, {t});",
                     f"__device__ {t} __ldg(const {t}*);"]
    return "\n".join([
        "#include <cuda_runtime.h>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "#include <math.h>",
        "#include <time.h>",
        # read without __CUDACC__, the toolkit's headers define these as nothing: clang's attributes
        "#define __global__ __attribute__((global))", "#define __device__ __attribute__((device))",
        "#define __host__ __attribute__((host))", "#define __shared__ __attribute__((shared))",
        "#define __constant__ __attribute__((constant))", "#define __managed__ __attribute__((managed))",
        "extern const __device__ uint3 threadIdx;", "extern const __device__ uint3 blockIdx;",
        "extern const __device__ dim3 blockDim;", "extern const __device__ dim3 gridDim;",
        "extern const __device__ int warpSize;",
        # what a launch becomes in clang (the toolkit's headers no longer declare it)
        'extern "C" int cudaConfigureCall(dim3, dim3, size_t = 0, cudaStream_t = 0);',
        "__device__ void __syncthreads();", "__device__ int __syncthreads_count(int);",
        "__device__ int __syncthreads_and(int);", "__device__ int __syncthreads_or(int);",
        "__device__ void __syncwarp(unsigned = 0xffffffffu);", "__device__ unsigned __activemask();",
        "__device__ unsigned __ballot_sync(unsigned, int);", "__device__ int __any_sync(unsigned, int);",
        "__device__ int __all_sync(unsigned, int);", "__device__ int __popc(unsigned);",
        "__device__ float fminf(float, float);", "__device__ float fmaxf(float, float);",
        "__device__ float fabsf(float);", "__device__ float sqrtf(float);",
        "__device__ float fmaf(float, float, float);", "__device__ float __fmaf_rn(float, float, float);",
        "__device__ float __fadd_rn(float, float);", "__device__ float __fmul_rn(float, float);",
        "__device__ int __float2int_rn(float);", "__device__ __nv_bfloat16 __float2bfloat16_rn(float);",
        "__device__ int atomicCAS(int*, int, int);",
        "__device__ void __threadfence();", "__device__ long long clock64();",
        "__device__ clock_t clock();", "__device__ unsigned long long __globaltimer();",
        "__device__ void __nanosleep(unsigned);"] + shuffles + ["#define __CUDACC__ 1"]) + "\n"


# The device parse (a device region's): the language is CUDA and the code the device's
# (--cuda-device-only: __global__, __device__, __shared__ are clang's own CUDA attributes, and a
# device function that calls a host one does not compile), while the toolkit's headers are read as
# in nvcc's host pass (__CUDA_ARCH__ and __CUDA__ undefined): their device paths call nvcc's
# built-in declarations, which clang 18 does not have, and clang's own CUDA headers are not in the
# libclang package (-nocudainc). DEVICE_PRELUDE declares instead what a device region may call or
# name: the built-in index variables (the toolkit's device_launch_parameters.h), barriers,
# shuffles, min/max and the float functions of lint.py's DEVICE_CALLS (and the bfloat16
# conversion ch04's tensor_inputs.h calls in a kernel), and, so that refusing them is the
# whitelist's work and not a compile error, atomics, clocks and __ldg. The course's programs
# parse so without an error, but Dot-SM-Warp.cu: CUB's device code needs nvcc's built-ins
# (device_ast.py says how a region there is judged).
DEVICE_PRELUDE = _device_prelude()
DEVICE_ARGS = ["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_90", "-nocudainc", "-nocudalib",
               "-U__CUDA_ARCH__", "-U__CUDA__", "-std=c++17", "-Wno-unknown-attributes", "-ferror-limit=0"]

LAUNCH = re.compile(r"<<<[^;]*?>>>")
PRELUDE = ("#include <cuda_runtime.h>\n#include <device_launch_parameters.h>\n"
           "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#define __CUDACC__ 1\n")


def blank_launches(text):
    return LAUNCH.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def context(program, body, region, blank=True):
    """(text, first, last): the course's program with `body` in place of the region's lines
    (1-based, inclusive; last < first for an empty region) and, for the host pass (blank),
    kernel launches blanked outside."""
    text = Path(program).read_text()
    found = regions(text, str(program))
    open_, close, _ = found[region]
    lines = text.split("\n")
    keep = blank_launches if blank else (lambda t: t)
    before = keep("\n".join(lines[:open_ + 1]))
    after = keep("\n".join(lines[close:]))
    whole = before + "\n" + "\n".join(body) + ("\n" if body else "") + after
    return whole, open_ + 2, open_ + 1 + len(body)


def parse(program, body, region, nvcc=None, device=False):
    """The child's answer for the region (clang_child.py's docstring)."""
    return parse_many(program, [body], region, nvcc, device)[0]


_cache = {}


def parse_many(program, bodies, region, nvcc=None, device=False):
    """The child's answers for several bodies of one region of one program, in one child (the
    preamble parsed once). Answers are kept: a grade-class or self-test sees the same region in
    many folders. device: parsed as device code (DEVICE_ARGS), else as the host pass."""
    program = Path(program).resolve()
    keys = [(str(program), region, tuple(b), device) for b in bodies]
    todo = [(k, b) for k, b in zip(keys, bodies) if k not in _cache]
    if todo:
        python = clang_python()
        jobs = []
        for _, body in todo:
            text, first, last = context(program, body, region, blank=not device)
            jobs.append({"text": text, "first": first, "last": last})
        folder = program.parent
        unsaved = {}
        for d in (folder, folder.parent / "common"):
            for h in sorted(d.glob("*.h")) + sorted(d.glob("*.cuh")):
                t = h.read_text(errors="replace")
                if "<<<" in t and not device:
                    unsaved[str(h.resolve())] = blank_launches(t)
        prelude = str(folder / "__lab_region_prelude.h")
        unsaved[prelude] = DEVICE_PRELUDE if device else PRELUDE
        cuda = _cuda_include(nvcc)
        if device:
            args = DEVICE_ARGS + ["-I", cuda, "-I", str(Path(cuda) / "cccl"), "-include", prelude]
        else:
            args = ["-x", "c++", "-std=c++17", "-I", cuda, "-include", prelude,
                    "-Wno-unknown-attributes", "-ferror-limit=50"]
        inc = _host_include()
        if inc:
            args += ["-isystem", inc]
        req = json.dumps({"main": str(program), "unsaved": unsaved, "args": args, "jobs": jobs})
        limit_s = TIME_LIMIT + 2 * len(jobs)
        try:  # the child limits its own memory and CPU time before it reads the request
            p = subprocess.run([python, str(CHILD), str(MEMORY_LIMIT), str(limit_s)], input=req,
                               capture_output=True, text=True, timeout=limit_s, cwd=str(folder))
            if p.returncode != 0:
                answers = [{"failed": f"clang's parse of the region failed (exit {p.returncode}): "
                                      f"{(p.stderr or p.stdout).strip()[-300:]}"}] * len(jobs)
            else:
                answers = json.loads(p.stdout)
        except subprocess.TimeoutExpired:
            answers = [{"failed": f"clang did not finish parsing the region in {limit_s} s"}] * len(jobs)
        for (k, _), a in zip(todo, answers):
            _cache[k] = a
    return [_cache[k] for k in keys]


def warm(requests, workers):
    """Parse many regions at once, so that check_region finds their answers kept: requests are
    (program, region, body, device); the bodies not parsed yet, each once, are shared out over
    at most `workers` children that run side by side (a grade-class or self-test lints every
    submission before its builds start: one child after another, a 49-submission ch02 self-test
    spent minutes here)."""
    groups = {}
    for program, region, body, device in requests:
        key = (str(Path(program).resolve()), region, device)
        if (key[0], region, tuple(body), device) not in _cache:
            groups.setdefault(key, {})[tuple(body)] = list(body)
    total = sum(len(g) for g in groups.values())
    if not total:
        return
    chunks = []  # each child parses its program's preamble once, then one body after another
    for (program, region, device), bodies in groups.items():
        bodies = list(bodies.values())
        share = max(1, min(len(bodies), round(workers * len(bodies) / total)))
        for i in range(share):
            chunks.append((program, bodies[i::share], region, device))
    with concurrent.futures.ThreadPoolExecutor(max(1, min(workers, len(chunks)))) as pool:
        list(pool.map(lambda c: parse_many(c[0], c[1], c[2], device=c[3]), chunks))


def _integer(t):
    return t["canon"] in INTEGER or t["canon"] == "ENUM"


class Check:
    """The whitelist, node by node. spec: the region's entry of labs/labs.json."""
    statements = STATEMENTS  # the statements a region may hold (a device region: return too)
    kind = "host"  # what its messages call the region

    def __init__(self, spec):
        self.calls = set(spec.get("calls", []))
        self.casts = set(spec.get("casts", []))
        self.objects = spec.get("objects", {})  # name -> the members it may read or call
        self.sizeof = set(spec.get("sizeof", []))
        self.macros = spec.get("macros", {})  # macro -> the function it calls (its first argument ours)
        self.macro_spans = {}
        self.types = set(spec.get("types", []))  # records it may declare (dim3)
        self.forbidden = set(spec.get("forbidden_names", []))
        self.problems = []

    def bad(self, n, rule, what):
        self.problems.append((n["line"], rule, what))

    def region(self, answer, baseline=None):
        """The problems of one region (clang_child.py's answer). baseline: the answer for the
        course's own region, whose errors are the context's (device_ast.py: CUB's headers)."""
        if "failed" in answer:
            self.problems.append((0, "not parsed", answer["failed"]))
            return self.problems
        known = set(baseline.get("errors", [])) if baseline else set()
        for e in [e for e in answer["errors"] if e not in known][:3]:
            self.problems.append((0, "does not compile", f"clang: {e}"))
        self.macro_spans = {tuple(span): name for name, line, span in answer["macros"]}
        for name, line, span in answer["macros"]:
            self.macro(name, line)
        for spelling, line in answer["loose"]:
            self.problems.append((line, "outside a statement", f"'{spelling}' is not part of a statement"))
        for root in answer["roots"]:
            self.stmt(root)
        return self.problems

    def macro(self, name, line):
        if name not in self.macros:
            self.problems.append((line, "macro", f"'{name}' is a macro: a region uses none"
                                  + (f" but {', '.join(sorted(self.macros))}" if self.macros else "")))

    def outside(self, n):
        """A node the region did not write: a listed macro's expansion (HANDLE_ERROR), trusted."""
        return not n["here"] and n["kind"] != "DECL_STMT"

    # Statements -----------------------------------------------------------------------------
    def stmt(self, n):
        k = n["kind"]
        if self.outside(n):
            return self.trusted(n)
        if k == "DECL_STMT":
            for d in n["children"]:
                self.decl(d)
        elif k in self.statements:
            kids = n["children"]
            for c in kids:
                if c["kind"] in self.statements or c["kind"] == "DECL_STMT":
                    self.stmt(c)
                elif c["kind"] == "VAR_DECL":  # for (int i = 0; ...), if (int x = ...)
                    self.decl(c)
                else:
                    self.expr(c, value=True)
        elif k.endswith("_STMT") or k.endswith("_DECL") or k in ("LAMBDA_EXPR",):
            self.bad(n, "not allowed", self.describe(n))
        else:
            self.expr(n, value=False)

    def decl(self, n):
        if n["kind"] != "VAR_DECL":
            return self.bad(n, "declaration", f"{self.describe(n)}: a host region declares only integer "
                            "variables")
        t = n["type"]
        if n.get("storage") not in ("NONE", None) or n.get("tls") not in ("NONE", None):
            return self.bad(n, "declaration", f"'{n['spelling']}': static, extern or thread_local")
        if t["kind"] in INTEGER:
            kids = [c for c in n["children"] if c["kind"] != "TYPE_REF"]
            if any(c["kind"] == "TYPE_REF" for c in n["children"]):
                return self.bad(n, "declaration", f"'{n['spelling']}': an integer spelled through a type name")
            for c in kids:
                self.expr(c, value=True)
            return
        if t["canon_spelling"] in self.types and t["canon"] == "RECORD" and t["kind"] in ("ELABORATED", "RECORD"):
            for c in n["children"]:
                if c["kind"] == "TYPE_REF" and c.get("ref", {}).get("name") in self.types:
                    continue
                if c["kind"] in ("CALL_EXPR", "UNEXPOSED_EXPR") and c["type"]["canon_spelling"] in self.types \
                        and c.get("ref", {}).get("kind") == "CONSTRUCTOR":
                    for a in c["children"]:
                        self.expr(a, value=True)
                    continue
                self.bad(c, "declaration", f"'{n['spelling']}' is made from {self.describe(c)}")
            return
        self.bad(n, "declaration", f"'{n['spelling']}' has type '{t['spelling']}': a host region declares "
                 "only integer variables" + (f" and {', '.join(sorted(self.types))}" if self.types else ""))

    # Expressions ----------------------------------------------------------------------------
    def expr(self, n, value=True, arg=False):
        """value: an integer is wanted; arg: the argument of a listed call (a listed object may
        stand there whole)."""
        k, t = n["kind"], n["type"]
        if not n["here"]:
            return self.trusted(n)
        if arg and self.object_arg(n):
            return
        if k in ("INTEGER_LITERAL", "CXX_BOOL_LITERAL_EXPR"):
            return
        if k == "PAREN_EXPR":
            return self.each(n, value, arg)
        if k == "UNEXPOSED_EXPR":  # an implicit conversion, or a temporary: of an integer only
            if not _integer(t):
                return self.bad(n, "not an integer", f"a value of type '{t['spelling']}'")
            return self.each(n, value, arg)
        if k == "CALL_EXPR":
            return self.call(n)
        if k == "DECL_REF_EXPR":
            return self.ref(n)
        if k == "MEMBER_REF_EXPR":
            return self.member(n)
        if not _integer(t):
            return self.bad(n, "not an integer", f"{self.describe(n)} of type '{t['spelling']}'")
        if self.operator(n):
            return
        if k == "CSTYLE_CAST_EXPR":
            target = t["canon_spelling"]
            if t["canon"] != "ENUM" or target not in self.casts:
                return self.bad(n, "cast", f"a cast to '{t['spelling']}' (this region may cast an integer to "
                                + (", ".join(sorted(self.casts)) or "nothing") + ")")
            for c in n["children"]:
                if c["kind"] == "TYPE_REF":
                    continue
                if not _integer(c["type"]):
                    self.bad(c, "cast", "a cast of a value that is not an integer")
                self.expr(c)
            return
        if k == "CXX_UNARY_EXPR":
            kids = n["children"]
            # sizeof (or alignof) of a listed type: an integer constant
            if len(kids) == 1 and kids[0]["kind"] == "TYPE_REF" and \
                    kids[0].get("ref", {}).get("name") in self.sizeof:
                return
            return self.bad(n, "sizeof", "sizeof of " + (
                "an expression" if not kids or kids[0]["kind"] != "TYPE_REF" else f"'{kids[0]['spelling']}'")
                + " (this region may take sizeof of " + (", ".join(sorted(self.sizeof)) or "nothing") + ")")
        self.bad(n, "not allowed", self.describe(n))

    def operator(self, n):
        """True when n is an operator (binary, compound assignment, unary, ?:), which it then
        checks: the operator itself, what it assigns (assigned()), its operands. Both
        whitelists' expr() call it after they have checked the operator's type."""
        k = n["kind"]
        if k in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            if n.get("op") not in BINARY:
                self.bad(n, "operator", f"'{n.get('op')}'")
                return True
            if n["op"] in ASSIGNING:
                self.assigned(n["children"][0])
        elif k == "UNARY_OPERATOR":
            op = n.get("op", "")
            if op.replace("post", "").replace("pre", "") not in UNARY:
                self.bad(n, "operator", f"a unary '{op}': a {self.kind} region takes no address and "
                         "follows no pointer")
                return True
            if "++" in op or "--" in op:
                self.assigned(n["children"][0])
        elif k != "CONDITIONAL_OPERATOR":
            return False
        self.each(n)
        return True

    def each(self, n, value=True, arg=False):
        for c in n["children"]:
            self.expr(c, value, arg)

    def assigned(self, n):
        """What an assignment or ++/-- changes: an integer the region itself declared."""
        while n["kind"] in ("PAREN_EXPR", "UNEXPOSED_EXPR") and n["children"]:
            n = n["children"][0]
        if n["kind"] == "DECL_REF_EXPR" and n.get("ref", {}).get("local") and n["ref"]["kind"] == "VAR_DECL":
            return
        self.bad(n, "assignment", f"{self.describe(n)}: a host region changes only the integers it declared")

    def ref(self, n):
        r = n.get("ref") or {}
        name = r.get("name", n["spelling"])
        if name in self.forbidden:
            return self.bad(n, "name not allowed", f"'{name}': this region schedules the GPU's work; it may "
                            "not touch the data itself")
        if r.get("kind") == "ENUM_CONSTANT_DECL":
            return
        if r.get("kind") in ("VAR_DECL", "PARM_DECL") and _integer(r["type"]) and _integer(n["type"]) \
                and r["type"]["kind"] != "LVALUEREFERENCE":
            return
        self.bad(n, "name not allowed", f"'{name}' ({self.describe(n, r)}): a host region names integers, "
                 "its task's calls" + (" and " + ", ".join(sorted(self.objects)) if self.objects else ""))

    def member(self, n):
        base = n["children"][0] if n["children"] else None
        while base is not None and base["kind"] == "UNEXPOSED_EXPR" and base["children"]:
            base = base["children"][0]
        owner = base.get("ref", {}).get("name") if base is not None and base["kind"] == "DECL_REF_EXPR" else None
        if owner in self.objects and n["spelling"] in self.objects[owner] and _integer(n["type"]) and \
                base["here"]:
            return
        self.bad(n, "member", f"'.{n['spelling']}'" + (f" of '{owner}'" if owner else "")
                 + ": not a member this region may read (" + (", ".join(
                     f"{o}.{m}" for o, ms in sorted(self.objects.items()) for m in ms) or "none") + ")")

    def callee_name(self, n):
        """The qualified name of what a CALL_EXPR calls, or None when it is not a named function."""
        r = n.get("ref") or {}
        if r.get("kind") in ("FUNCTION_DECL", "FUNCTION_TEMPLATE"):
            return r["qualified"]
        if r.get("kind") == "CXX_METHOD":
            return "." + r["name"]
        return None

    def call(self, n):
        name = self.callee_name(n)
        kids = n["children"]
        macro = self.macro_spans.get(tuple(n.get("span", ())))
        if macro in self.macros and name == self.macros[macro] and len(kids) >= 2 and \
                self.is_callee(kids[0], n):
            # the call a listed macro makes: its first argument is the student's, the rest
            # (the call's text, __FILE__, __LINE__) the macro writes
            self.expr(kids[1], value=True, arg=True)
            for a in kids[2:]:
                while a["kind"] == "UNEXPOSED_EXPR" and a["children"]:
                    a = a["children"][0]
                if a["kind"] not in ("STRING_LITERAL", "INTEGER_LITERAL"):
                    self.bad(a, "macro", f"{self.describe(a)} in what {macro} writes")
            return
        if name is None or (name not in self.calls and name.split("::")[-1] not in self.calls) \
                or name.startswith("."):
            return self.bad(n, "call not allowed", f"'{n['spelling'] or '?'}' (this region may call "
                            + (", ".join(sorted(self.calls)) or "nothing") + ")")
        # the callee: a name (and its implicit decay to a function pointer), nothing computed
        callee, args = kids[0] if kids else None, kids[1:]
        if callee is None or not self.is_callee(callee, n):
            return self.bad(n, "call not allowed", "a call through an expression")
        if not n["here"]:
            return
        for a in args:
            self.expr(a, value=True, arg=True)

    def is_callee(self, c, call):
        while c["kind"] in ("UNEXPOSED_EXPR", "PAREN_EXPR") and c["children"] and c["type"]["canon"] in (
                "POINTER", "FUNCTIONPROTO"):
            if c["kind"] == "PAREN_EXPR":
                return False
            c = c["children"][0]
        r = c.get("ref") or {}
        return c["kind"] == "DECL_REF_EXPR" and r.get("qualified") == call["ref"]["qualified"] and all(
            k["kind"] in ("NAMESPACE_REF", "TYPE_REF") for k in c["children"])

    def object_arg(self, n):
        """A listed object passed whole to a listed call (run_op(p, ...)), or a listed member
        call of it (spheres.data())."""
        c = n
        while c["kind"] == "UNEXPOSED_EXPR" and c["children"]:
            c = c["children"][0]
        if c["kind"] == "DECL_REF_EXPR" and (c.get("ref") or {}).get("name") in self.objects and \
                c.get("ref", {}).get("kind") in ("VAR_DECL", "PARM_DECL") and not c.get("ref", {}).get("local"):
            return True
        if c["kind"] == "CALL_EXPR" and (c.get("ref") or {}).get("kind") == "CXX_METHOD" and \
                len(c["children"]) == 1 and c["children"][0]["kind"] == "MEMBER_REF_EXPR":
            m = c["children"][0]
            base = m["children"][0] if m["children"] else None
            while base is not None and base["kind"] == "UNEXPOSED_EXPR" and base["children"]:
                base = base["children"][0]
            owner = base.get("ref", {}).get("name") if base is not None and base["kind"] == "DECL_REF_EXPR" else None
            return owner in self.objects and "." + m["spelling"] in self.objects[owner] and \
                not base.get("ref", {}).get("local")
        return False

    def trusted(self, n):
        """A node a listed macro wrote (its spelling lies in the course's header), or a default
        argument of a listed call: the course's code. Its children that the student wrote (a
        macro's arguments) are checked."""
        for c in n["children"]:
            if c["here"]:
                if c["kind"] in self.statements or c["kind"] == "DECL_STMT":
                    self.stmt(c)
                else:
                    self.expr(c, value=True, arg=True)
            else:
                self.trusted(c)

    @staticmethod
    def describe(n, r=None):
        names = {"LAMBDA_EXPR": "a lambda", "CXX_NEW_EXPR": "a new", "CXX_DELETE_EXPR": "a delete",
                 "CXX_THROW_EXPR": "a throw", "CXX_TRY_STMT": "a try", "GOTO_STMT": "a goto",
                 "LABEL_STMT": "a label", "ASM_STMT": "inline assembly", "GCC_ASM_STMT": "inline assembly",
                 "MS_ASM_STMT": "inline assembly", "RETURN_STMT": "a return", "SWITCH_STMT": "a switch",
                 "ARRAY_SUBSCRIPT_EXPR": "an index", "STRING_LITERAL": "a string",
                 "CXX_STATIC_CAST_EXPR": "a static_cast", "CXX_REINTERPRET_CAST_EXPR": "a reinterpret_cast",
                 "CXX_CONST_CAST_EXPR": "a const_cast", "CXX_DYNAMIC_CAST_EXPR": "a dynamic_cast",
                 "CXX_FUNCTIONAL_CAST_EXPR": "a functional cast", "CSTYLE_CAST_EXPR": "a cast",
                 "STRUCT_DECL": "a struct", "UNION_DECL": "a union", "CLASS_DECL": "a class",
                 "ENUM_DECL": "an enum", "TYPEDEF_DECL": "a typedef", "TYPE_ALIAS_DECL": "a using alias",
                 "STMT_EXPR": "a statement expression", "INIT_LIST_EXPR": "an initializer list",
                 "COMPOUND_LITERAL_EXPR": "a compound literal", "FLOATING_LITERAL": "a floating literal"}
        what = names.get(n["kind"], n["kind"].lower().replace("_", " "))
        if r:
            return f"{r.get('kind', '?').lower().replace('_', ' ')} of type '{r.get('type', {}).get('spelling', '?')}'"
        return what


def check_region(program, body, first_line, spec, where, region, nvcc=None):
    """[message] for a host region, in lint.py's form (FILE:LINE: region R: rule: what).
    program: the course's copy of the region's program (its context); first_line: the
    student's line number of the region's first line."""
    answer = parse(program, body, region, nvcc)
    return messages(program, region, Check(spec).region(answer), first_line, where)


def messages(program, region, problems, first_line, where):
    """The whitelist's problems [(line in the context, rule, what)] as lint.py's lines, at the
    student's line numbers."""
    start = context_first(program, region)
    # clang names the course's copy by its path on the grading machine: a report says
    # ch06_streams/streams.cu, never where the course lives.
    roots = {str(Path(program).parent.parent) + "/", str(Path(program).resolve().parent.parent) + "/"}
    out = []
    for line, rule, what in problems:
        for root in roots:
            what = what.replace(root, "")
        shown = first_line + (line - start) if line else first_line
        out.append(f"{where}:{shown}: region {region}: {rule}: {what}")
    return list(dict.fromkeys(out))


def context_first(program, region):
    found = regions(Path(program).read_text(), str(program))
    return found[region][0] + 2
