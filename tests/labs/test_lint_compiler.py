#!/usr/bin/env python3
"""The region lint (labs/grader/lint.py) against the compilers: the same regions go to the lint
and to the compilers, and the test fails where they disagree on a region the lint accepts.

  tokens  clang's lexer (clang -cc1 -dump-raw-tokens, the same C++17 lexing rules GCC's cpp
          follows) must give the lint's tokens, spelling by spelling, comments dropped;
  end     g++ (nvcc's host compiler) compiles the region as the body of a function followed by a
          sentinel definition: the object must define that function and the sentinel and nothing
          else (no code at file scope), and hold no static initializer (.init_array, .ctors);
  calls   every function the object refers to (nm -u) must be one the lint read as called.

The corpus: every trick of the kind that beat the hand-written scanner (the alternative tokens
and or not bitand bitor xor compl and_eq or_eq xor_eq not_eq, digraphs, '$' in names, raw
strings, line splices, #line, _Pragma, every kind of literal, pp-numbers with separators), each
with the lint's verdict it must reach, honest regions that must be accepted, and every region of
the labs' solutions and of the cheats (tokens only: their context is the lab's program).
Run: python3 tests/labs/test_lint_compiler.py (ctest: lab.lint_compiler, label cpu). Needs clang
and g++ (CI's machine has both: scripts/setup.sh); without them it fails under CI=true and skips
elsewhere, saying why."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
from grader import kit, labs, lint  # noqa: E402

CLANG = os.environ.get("CLANG") or shutil.which("clang") or shutil.which("clang-14")
GXX = os.environ.get("CXX_FOR_LINT_TEST") or shutil.which("g++")

# What a probe's region may use: the names of the labs' regions and of the tricks below.
PRELUDE = """
struct uint3 { unsigned x, y, z; };
extern const uint3 threadIdx, blockIdx, blockDim, gridDim;
void __syncthreads();
float __shfl_down_sync(unsigned, float, int);
int ceil_div(int, int);
extern "C" int system(const char*);
extern "C" int printf(const char*, ...);
extern "C" int puts(const char*);
int forged(int);
struct Box { int a, b; long long* data; };
"""
FUNCTIONS = {"__syncthreads", "__shfl_down_sync", "ceil_div", "system", "printf", "puts", "forged"}
SIGNATURE = "void lab_probe(long long n, long long* a, long long* b, long long* c, Box& p)"

# (name, lines, "accept" or "refuse").
CORPUS = [
    ("honest grid-stride", ["long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
                            "for (; i < n; i += (long long)gridDim.x * blockDim.x) c[i] = a[i] + b[i];"],
     "accept"),
    ("honest barrier and literals", ["float v = 0.5f + 1e-3f + 2.0 + .25 + 1'000 + 0x1Fu + 07 + 0b101;",
                                     "char q = '\\'', r = 'x'; const char* s = \"a\\\"b // not a comment\";",
                                     "v = __shfl_down_sync(0xFFFFFFFFu, v, 16); __syncthreads();",
                                     "c[0] = (long long)v + q + r + (s[0] == 'a');"], "accept"),
    ("honest prefixed literals", ["const char* s = u8\"x\"; const wchar_t* w = L\"y\";",
                                  "char16_t u16 = u'z'; char32_t u32 = U'z'; wchar_t wc = L'w';",
                                  "c[0] = s[0] + w[0] + u16 + u32 + wc;"], "accept"),
    ("every plain literal", ["char e = '\\x41', o = '\\101', q = '\\\\', z = '\\0';",
                             "const char* s = \"tab\\t \\u0041 \\\"q\\\" 'single' /* no comment */\";",
                             "double d = 1.5e+3 + 2.5E-2 + 1e3 + 3.f + 0.0L + .5f;",
                             "unsigned long long u = 0X1Full + 0xabcLLU + 1'000'000u + 0b1'0 + 017l;",
                             "c[0] = e + o + q + z + s[0] + (long long)d + (long long)u;"], "accept"),
    ("separator pairs GCC and clang read apart", ["c[0] = 1''2;"], "refuse"),
    ("honest comments", ["/* a comment with } and { and \" and ' */ c[0] = 1; // and ) too",
                         "c[1] = 2 /* / * */ / 1;"], "accept"),
    ("honest grid", ["dim3 threads(16, 16);"], "accept"),  # g++ does not know dim3: tokens only
    ("alternative or before a call", ["c[0] = 0 or forged(1);"], "refuse"),
    ("alternative and before a call", ["if (n and system(\"true\")) c[0] = 1;"], "refuse"),
    ("every alternative token", ["long long x = 1; x and_eq 3; x or_eq 4; x xor_eq 5;",
                                 "c[0] = (x bitand 1) bitor (x xor 2) bitor compl x;",
                                 "c[1] = not x; c[2] = x not_eq 2;"], "refuse"),
    ("digraphs close the function", ["%>", "int forged_total = forged(18);", "void again() <%"], "refuse"),
    ("digraph brackets", ["c<:0:> = 1;"], "refuse"),
    ("'<::' is '<' '::'", ["c[0] = n <::n;"], "refuse"),  # n is not qualified: refused as '::n'
    ("dollar name moves a char literal", ["long long a$ = 1; c[0] = a$ + 'x';"], "refuse"),
    ("dollar after a prefix", ["long long L$ = 1; c[0] = L$'}'; int forged_value = 2;"], "refuse"),
    ("digit separator eats a letter", ["c[0] = 1'a' + 1;"], "refuse"),  # pp-number 1'a, then "' + 1;"
    ("raw string hides code", ["const char* s = R\"x(", "}", "int forged_total = forged(1);",
                               "void again() {", ")x\";"], "refuse"),
    ("raw string with a prefix", ["const char* s = u8R\"(})\";"], "refuse"),
    ("line splice in a comment", ["// harmless \\", "} int forged_total = forged(1); void g() {"],
     "refuse"),
    ("line splice with a space after it", ["// harmless \\ ", "c[0] = forged(1);"], "refuse"),
    ("line splice inside a string", ["const char* s = \"a\\", "\"; c[0] = forged(1);"], "refuse"),
    ("#line directive", ["#line 1 \"other.cu\"", "c[0] = 1;"], "refuse"),
    ("directive after a comment", ["/* */ #define forged(x) x", "c[0] = 1;"], "refuse"),
    ("digraph directive", ["%:define X 1", "c[0] = X;"], "refuse"),
    ("_Pragma operator", ["_Pragma(\"GCC diagnostic ignored \\\"-Wall\\\"\") c[0] = 1;"], "refuse"),
    ("trigraph", ["c[0] = 1; ??>", "void again() ??<"], "refuse"),
    ("user-defined literal", ["c[0] = \"x\"_forged;"], "refuse"),
    ("universal character name", ["long long \\u0061b = 1; c[0] = \\u0061b;"], "refuse"),
    ("unterminated char literal", ["c[0] = 'a;", "c[1] = 2;"], "refuse"),
    ("unterminated block comment", ["c[0] = 1; /* the rest"], "refuse"),
    ("file-scope constructor through braces", ["}", "struct Early { Early() { system(\"x\"); } } early;",
                                                "void again() {"], "refuse"),
    ("call through a parenthesized name", ["(system)(\"true\");"], "refuse"),
    ("lambda called at once", ["[&] { system(\"true\"); }();"], "refuse"),
    ("a local function declaration then a call", ["int puts(const char*);", "c[0] = 0 || puts(\"x\");"],
     "refuse"),
    ("brace construction of a class", ["c[0] = Box{1, 2, nullptr}.a;"], "refuse"),
    ("cast through a member's address", ["long long* q = *(long long**)((char*)&p.a + 8);", "c[0] = q[0];"],
     "refuse"),
    ("static_cast to a pointer", ["c[0] = *static_cast<long long*>(p.data);"], "refuse"),
    ("hex float and malformed numbers", ["double d = 0x1p3; c[0] = (long long)d;"], "refuse"),
    ("a number that eats a quote", ["c[0] = 0x1'2'3; c[1] = 1'2;"], "accept"),
    ("predefined macro", ["c[0] = __COUNTER__;"], "refuse"),
    ("any reserved __name__", ["const char* t = __TIMESTAMP__; c[0] = t[0] + __INCLUDE_LEVEL__;"], "refuse"),
    ("stringizing in a literal", ["const char* s = \"#\"; c[0] = s[0];"], "refuse"),
    ("tab and form feed", ["c[0] =\t1;"], "accept"),
    ("non-ASCII", ["c[0] = 1; // \u00e9"], "refuse"),
]


def clang_tokens(text):
    """[spelling] of clang's raw lexer, whitespace and comments dropped."""
    with tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([CLANG, "-cc1", "-dump-raw-tokens", "-std=c++17", f.name], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    out = []
    for kind, spelling in re.findall(r"^(\w+) '(.*?)'\t(?: \[[^\]]*\])?\tLoc=<", r.stdout, re.M | re.S):
        if kind == "comment" or (kind == "unknown" and not spelling.strip()):
            continue
        out.append(spelling)
    return out


def gxx_probe(lines):
    """(defined, undefined, has_initializer) of g++'s object for the region as a function body;
    None when it does not compile."""
    text = PRELUDE + SIGNATURE + " {\n" + "\n".join(lines) + "\n}\nint lab_probe_end;\n"
    with tempfile.TemporaryDirectory() as d:
        src, obj = Path(d) / "probe.cc", Path(d) / "probe.o"
        src.write_text(text)
        r = subprocess.run([GXX, "-std=c++17", "-O0", "-w", "-c", str(src), "-o", str(obj)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if r.returncode != 0:
            return None
        nm = subprocess.run(["nm", "-C", str(obj)], stdout=subprocess.PIPE, text=True, check=True).stdout
        sections = subprocess.run(["objdump", "-h", str(obj)], stdout=subprocess.PIPE, text=True,
                                  check=True).stdout
    defined, undefined = set(), set()
    for line in nm.split("\n"):
        m = re.match(r"^(?:[0-9a-f]+)?\s+([A-Za-z])\s+(.+)$", line)
        if not m:
            continue
        kind, name = m.groups()
        if kind == "U":
            undefined.add(re.sub(r"\(.*$", "", name))
        elif kind.isupper() and kind not in "WV":
            defined.add(re.sub(r"\(.*$", "", name))
    return defined, undefined, bool(re.search(r"\.(init_array|ctors)\b", sections))


def accepted(lines, kind="device", calls=()):
    return lint.lint_region(list(lines), 1, {"kind": kind, "calls": list(calls)}, "probe.cu", "probe") == []


def every_real_region():
    """(where, lines, spec) of every region of the labs' solutions and of the cheats."""
    import cheats  # noqa: E402  (tests/labs/cheats/cheats.py)
    found = []
    for lab in labs.load_labs()["labs"]:
        for task in lab["tasks"]:
            text = (REPO / lab["folder"] / task["file"]).read_text()
            for name, spec in task["regions"].items():
                found.append((f"solution {name}", labs.region_body(text, name, task["file"])[0], spec))
    with tempfile.TemporaryDirectory() as d:
        for k, c in enumerate(cheats.CHEATS):
            lab = labs.find_lab(c["lab"])[0]
            folder = Path(d) / str(k)
            kit.cmd_make(c["lab"], folder, solution=True)
            try:
                c["make"](folder, lab)
            except Exception:  # noqa: BLE001  (a cheat on the files themselves)
                continue
            for task in lab["tasks"]:
                p = folder / lab["folder"] / task["file"]
                if p.is_symlink() or not p.is_file():
                    continue
                try:
                    text = p.read_text()
                    for name, spec in task["regions"].items():
                        found.append((f"cheat {c['name']} {name}", labs.region_body(text, name, task["file"])[0], spec))
                except (UnicodeDecodeError, labs.LabError):
                    continue
    return found


class LintAgainstCompilers(unittest.TestCase):
    def setUp(self):
        missing = [n for n, p in (("clang", CLANG), ("g++", GXX), ("nm", shutil.which("nm")),
                                  ("objdump", shutil.which("objdump"))) if not p]
        if missing:
            why = f"{', '.join(missing)} not found (Debian: apt install clang g++ binutils)"
            if os.environ.get("CI", "") not in ("", "0", "false"):
                self.fail(why)
            self.skipTest(why)

    def check_agrees(self, where, lines, compile_it):
        toks, problems = lint.tokens("\n".join(lines), 1)
        self.assertEqual([t.spelling for t in toks], clang_tokens("\n".join(lines) + "\n"),
                         f"{where}: the lint's tokens are not clang's")
        if not compile_it:
            return
        got = gxx_probe(lines)
        if got is None:
            return  # the compiler refuses it too: nothing of it is built
        defined, undefined, init = got
        self.assertEqual(defined, {"lab_probe", "lab_probe_end"},
                         f"{where}: g++ defines more than the function: the region's code ends elsewhere")
        self.assertFalse(init, f"{where}: g++ emits a static initializer")
        seen = lint.callees(toks)
        self.assertLessEqual(undefined & FUNCTIONS, seen, f"{where}: g++ calls what the lint did not see called")

    def test_corpus_verdicts_and_agreement(self):
        for name, lines, verdict in CORPUS:
            with self.subTest(name):
                self.assertEqual(accepted(lines), verdict == "accept",
                                 f"{name}: {lint.lint_region(lines, 1, {}, 'probe.cu', 'probe')}")
                if verdict == "accept":
                    self.check_agrees(name, lines, compile_it=True)

    def test_refused_tricks_really_escape_or_call(self):
        """The tricks are real: compiled, each of these defines code outside the function or
        calls what the region may not (so the lint's refusal is not of a harmless spelling)."""
        for name in ("alternative or before a call", "digraphs close the function",
                     "file-scope constructor through braces",
                     "a local function declaration then a call"):
            lines = next(l for n, l, _ in CORPUS if n == name)
            got = gxx_probe(lines)
            self.assertIsNotNone(got, f"{name}: does not compile, so it proves nothing")
            defined, undefined, init = got
            self.assertTrue(defined != {"lab_probe", "lab_probe_end"} or init or undefined & {"system", "puts", "forged"},
                            f"{name}: compiled, it is harmless: {got}")

    def test_every_region_the_lint_accepts_tokenizes_as_clang(self):
        for where, lines, spec in every_real_region():
            if lint.lint_region(lines, 1, spec, "f.cu", "r"):
                continue
            with self.subTest(where):
                self.check_agrees(where, lines, compile_it=False)


if __name__ == "__main__":
    unittest.main(verbosity=1)
