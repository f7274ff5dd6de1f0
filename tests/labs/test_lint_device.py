#!/usr/bin/env python3
"""The device regions' whitelist on clang's tree (labs/grader/device_ast.py), against a catalogue
of CUDA constructs: each is spliced into a real device region (ch02's grid-stride loop in
VA-GPU-NN.cu, beside the driver's buffers a, b, c; a few into ch03's block sum, ch04's tiles and
ch05's nearest hit, whose entries list more) and must be refused by the tree alone (the token
rules of lint.py are not asked), while every device region of the course's solutions is
accepted and a skeleton's empty region too. Most entries are valid CUDA (clang parses them
without an error), so what refuses them is the whitelist; the test checks that too, and counts
how many the token rules alone let through.

It also plants weakenings of the whitelist (pointers read as numbers, casts of any type, inline
assembly accepted, declarations of any type, any call) and shows the catalogue then fails.
Run: python3 tests/labs/test_lint_device.py (ctest: lab.lint_device, label cpu). Needs the
`libclang` package (scripts/setup.sh puts it in .venv/); without it the test fails under CI=true
and skips elsewhere, saying why."""
import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
from grader import device_ast, labs, lint, region_ast  # noqa: E402
from test_lint_whitelist import HALF_THE_CORES, clang_or_skip, spec_of  # noqa: E402  (one of each for both catalogues)

NN = REPO / "ch02_vector_add" / "VA-GPU-NN.cu"
WARP = REPO / "ch03_dot_product" / "Dot-SM-Warp.cu"
RAY = REPO / "ch05_raytrace" / "ray.cu"
SM = REPO / "ch04_matmul" / "MM-GPU-SM.cu"
GS, BS, NH, TI = "ch02.grid-stride", "ch03.block-sum", "ch05.nearest-hit", "ch04.tiles"
LOOP = "for (long long i = threadIdx.x; i < n; i += blockDim.x) c[i] = a[i] + b[i];"

# (name, lines, valid CUDA). Every one must be refused. valid: clang parses it without an error.
CATALOGUE = [
    # issue 42's device class: writing where the region should only read
    ("cast away const to write the input", ["((elem_t*)a)[0] = 1;", LOOP], True),
    ("const_cast to write the input", ["const_cast<elem_t*>(a)[0] = 1;", LOOP], True),
    ("a pointer to the input, cast", ["elem_t* q = (elem_t*)a;", "q[0] = 1;", LOOP], True),
    # declarations of every form
    ("pointer local", ["const elem_t* q = a;", LOOP], True),
    ("pointer local, auto", ["auto q = a + 1;", LOOP], True),
    ("pointer to pointer", ["const elem_t* const* q = &a;", LOOP], True),
    ("reference", ["elem_t& q = c[0];", "q = 1;", LOOP], True),
    ("const reference", ["const elem_t& q = a[0];", LOOP], True),
    ("rvalue reference", ["long long&& q = 1;", LOOP], True),
    ("reference to a pointer", ["elem_t*& q = c;", LOOP], True),
    ("decltype of a pointer", ["decltype(a) q = a;", LOOP], True),
    ("local array", ["long long t[4] = {0, 0, 0, 0};", LOOP], True),
    ("local array, read past its end", ["long long t[1] = {0};", "c[0] = t[5];", LOOP], True),
    ("__shared__ array where not listed", ["__shared__ float t[32];", LOOP], True),
    ("__shared__ scalar", ["__shared__ float t;", LOOP], True),
    ("extern __shared__ array", ["extern __shared__ float t[];", LOOP], True),
    ("static local", ["static int k = 0;", "k++;", LOOP], True),
    ("static const local", ["static const int k = 1;", LOOP], True),
    # state that outlives a launch would tell the timed launch from the warm-up (driver.h times
    # a slow kernel once) or keep an answer between launches: none may be declared
    ("thread_local", ["thread_local int k = 0;", "k++;", LOOP], True),
    ("a static __device__ variable", ["static __device__ int k;", "k++;", LOOP], True),
    ("__device__ local", ["__device__ int k;", LOOP], False),
    ("__constant__ local", ["__constant__ int k;", LOOP], False),
    ("extern declaration", ["extern int forged;", LOOP], True),
    ("extern __device__ declaration", ["extern __device__ int forged;", LOOP], True),
    ("volatile local", ["volatile int k = 0;", LOOP], True),
    ("volatile pointer", ["volatile elem_t* q = c;", LOOP], True),
    ("restrict pointer", ["elem_t* __restrict__ q = c;", LOOP], True),
    ("a struct local", ["struct S { long long x; } s0;", LOOP], True),
    ("a union for punning", ["union U { long long i; elem_t* p; } u;", "u.i = 0;", LOOP], True),
    ("a class local", ["class C { public: int x; } c0;", LOOP], True),
    ("an enum local", ["enum E { A, B } e = A;", LOOP], True),
    ("typedef of a pointer", ["typedef elem_t* P;", LOOP], True),
    ("using alias", ["using P = elem_t*;", LOOP], True),
    ("a uint3 local", ["uint3 t = threadIdx;", LOOP], True),
    ("a dim3 local", ["dim3 g(1, 1);", LOOP], True),
    ("a vector type local", ["float4 f;", "f.x = 1;", LOOP], True),
    ("a half local", ["__half h;", LOOP], True),
    ("attribute", ["[[maybe_unused]] int k = 0;", LOOP], True),
    ("alignas", ["alignas(16) int k = 0;", LOOP], True),
    ("register", ["register int k = 0;", LOOP], False),
    ("a function declared in the region", ["void forged();", LOOP], True),
    ("a template local", ["auto f = [](auto x) { return x; };", LOOP], True),
    # addresses and pointers, every way
    ("address-of a parameter's element", ["long long k = (long long)&c[0];", LOOP], True),
    ("address-of a local", ["int k = 0;", "long long q = (long long)&k;", LOOP], True),
    ("address of a parameter", ["const elem_t* const* q = &a;", LOOP], True),
    ("dereference", ["c[0] = *a;", LOOP], True),
    ("dereference of pointer arithmetic", ["c[0] = *(a + 1);", LOOP], True),
    ("pointer arithmetic compared", ["if (a + n > c) c[0] = 1;", LOOP], True),
    ("pointer comparison", ["if (a == c) c[0] = 1;", LOOP], True),
    ("pointer difference", ["long long d = c - a;", LOOP], True),
    ("pointer in a condition", ["if (a) c[0] = 1;", LOOP], True),
    ("pointer negated", ["if (!a) return;", LOOP], True),
    ("index of pointer arithmetic", ["c[0] = (a + n)[0];", LOOP], True),
    ("index reversed", ["c[0] = 0[a];", LOOP], True),
    ("index by a float", ["c[0] = a[1.0f];", LOOP], False),
    ("pointer conditional", ["c[0] = (n > 0 ? a : b)[0];", LOOP], True),
    ("pointer assigned to a parameter", ["c = (elem_t*)b;", LOOP], True),
    ("parameter pointer incremented", ["a++;", LOOP], True),
    ("pointer to integer", ["unsigned long long k = (unsigned long long)a;", LOOP], True),
    ("integer to pointer", ["((elem_t*)(unsigned long long)n)[0] = 1;", LOOP], True),
    ("reinterpret_cast", ["long long k = reinterpret_cast<long long>(a);", LOOP], True),
    ("static_cast of a pointer", ["const void* q = static_cast<const void*>(a);", LOOP], True),
    ("__builtin_bit_cast", ["double d = __builtin_bit_cast(double, n);", LOOP], True),
    ("a pointer passed to a device function", ["long long k = max(a, b) == c;", LOOP], False),
    ("__ldg of an address", ["c[0] = __ldg(&a[0]);", LOOP], True),
    ("atomicAdd where not listed", ["atomicAdd(&c[0], 1LL);", LOOP], True),
    ("atomicExch where not listed", ["atomicExch(&c[0], 1LL);", LOOP], True),
    ("atomicCAS where not listed", ["int k = 0;", "atomicCAS(&k, 0, 1);", LOOP], True),
    ("pointer to member", ["int k = &uint3::x == nullptr;", LOOP], True),
    ("nullptr", ["bool k = nullptr == nullptr;", LOOP], True),
    ("a string", ["const char* s0 = \"x\";", LOOP], True),
    ("a string indexed", ["int k = \"abc\"[1];", LOOP], True),
    ("address of a builtin variable", ["long long k = (long long)&threadIdx;", LOOP], True),
    ("a builtin variable whole", ["uint3 t = blockIdx;", LOOP], True),
    ("a member of a builtin not x, y, z", ["dim3 t = blockDim;", LOOP], True),
    # inline PTX and the machine
    ("asm", ["asm(\"exit;\");", LOOP], True),
    ("asm volatile", ["asm volatile(\"trap;\");", LOOP], True),
    ("asm with operands", ["unsigned r0;", "asm(\"mov.u32 %0, %%clock;\" : \"=r\"(r0));", LOOP], True),
    ("__asm__", ["__asm__(\"exit;\");", LOOP], True),
    ("globaltimer through asm",
     ["unsigned long long t;", "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));", LOOP], True),
    ("clock", ["long long t = clock();", LOOP], True),
    ("clock64", ["long long t = clock64();", LOOP], True),
    ("__globaltimer", ["unsigned long long t = __globaltimer();", LOOP], True),
    ("__nanosleep", ["__nanosleep(100);", LOOP], True),
    ("printf", ["printf(\"x\");", LOOP], False),
    ("__threadfence", ["__threadfence();", LOOP], True),
    ("clock through an NVVM builtin", ["long long t = __nvvm_read_ptx_sreg_clock64();", LOOP], True),
    ("globaltimer through an NVVM builtin", ["long long t = __nvvm_read_ptx_sreg_globaltimer();", LOOP], False),
    ("__builtin_readcyclecounter", ["unsigned long long t = __builtin_readcyclecounter();", LOOP], True),
    ("__builtin_LINE", ["long long k = __builtin_LINE();", LOOP], True),
    ("a value-initialized temporary", ["long long k = int();", LOOP], True),
    ("__builtin_trap", ["__builtin_trap();", LOOP], True),
    ("__builtin_assume", ["__builtin_assume(n > 0);", LOOP], True),
    ("malloc", ["void* q = malloc(8);", LOOP], False),
    ("new", ["long long* q = new long long(1);", LOOP], True),
    ("delete", ["delete c;", LOOP], True),
    ("placement new", ["new (c) long long(1);", LOOP], False),
    ("a kernel launch from the kernel", ["add<<<1, 1>>>(a, b, c, n);", LOOP], False),
    # control and calls
    ("goto and label", ["again: goto again;", LOOP], True),
    ("a label", ["here: ;", LOOP], True),
    ("switch", ["switch (n) { case 1: break; default: break; }", LOOP], True),
    ("lambda", ["auto f = [&] { return a[0]; };", LOOP], True),
    ("lambda called at once", ["[&] { c[0] = 0; }();", LOOP], True),
    ("a call not listed", ["add(a, b, c, n);", LOOP], False),
    ("recursion through a listed name's neighbour", ["fill_inputs(c, c, n);", LOOP], False),
    ("a call through a function pointer", ["void (*f)() = __syncthreads;", "f();", LOOP], False),
    ("a call through a parenthesized name", ["(__syncthreads)();", LOOP], True),
    ("a call through *&", ["(*&__syncthreads)();", LOOP], False),
    ("a call of a function in std", ["c[0] = std::min(a[0], b[0]);", LOOP], True),
    ("sizeof", ["long long k = sizeof(elem_t);", LOOP], True),
    ("sizeof of an expression", ["long long k = sizeof a;", LOOP], True),
    ("alignof", ["long long k = alignof(elem_t);", LOOP], True),
    ("__builtin_offsetof", ["long long k = __builtin_offsetof(uint3, y);", LOOP], True),
    ("comma operator", ["long long k = (c[0] = 1, 2);", LOOP], True),
    ("statement expression", ["long long k = ({ long long j = 1; j; });", LOOP], True),
    ("compound literal", ["long long k = ((long long[]){1, 2})[1];", LOOP], True),
    ("initializer list", ["long long k{a[0]};", "int j = {1};", "c[0] = (long long)sizeof(int[2]{1, 2});", LOOP],
     False),
    ("a macro of the course", ["HANDLE_ERROR(cudaSuccess);", LOOP], False),
    ("a macro not listed: INT_MAX", ["long long k = INT_MAX;", LOOP], True),
    ("a global of the program that is not const", ["c[0] = forged_global;", LOOP], False),
    ("a std function", ["long long k = std::max(1LL, n);", LOOP], True),
    ("a template call", ["long long k = max<long long>(1, n);", LOOP], False),
    ("a throw", ["throw 1;", LOOP], False),
    ("a try", ["try { c[0] = 1; } catch (...) {}", LOOP], False),
    ("this", ["bool k = this == nullptr;", LOOP], False),
    ("a static_assert", ["static_assert(sizeof(int) == 4, \"\");", LOOP], True),
    ("a using directive", ["using namespace std;", LOOP], True),
    ("a namespace alias", ["namespace q = std;", LOOP], True),
]
BLOCK = ["v = warp_sum(v);", "return v;"]
CATALOGUE_BS = [  # ch03's block sum: __shared__ arrays listed, warp_sum listed
    ("__shared__ array of pointers", ["__shared__ float* t[32];", *BLOCK], True),
    ("__shared__ array of structs", ["__shared__ uint3 t[32];", *BLOCK], True),
    ("__shared__ volatile array", ["__shared__ volatile float t[32];", *BLOCK], True),
    ("__shared__ array's address", ["__shared__ float t[32];", "long long k = (long long)t;", *BLOCK], True),
    ("__shared__ array whole, decayed", ["__shared__ float t[32];", "float* q = t;", *BLOCK], True),
    ("__shared__ array indexed past its end by pointer arithmetic", ["__shared__ float t[32];", "v = *(t + 40);",
                                                                    *BLOCK], True),
    ("a listed call with an address", ["float k = 0;", "v = warp_sum(&k);", *BLOCK], False),
    ("a listed call through a pointer", ["float (*f)(float) = warp_sum;", "v = f(v);", *BLOCK], True),
    ("a shuffle of a pointer", ["__shared__ float t[32];", "v = __shfl_down_sync(0xffffffffu, t, 1);", *BLOCK], False),
]
HIT = ["float n;", "float t = s[0].hit(ox, oy, &n);", "if (t > maxz) { r = s[0].r * n; maxz = t; }"]
CATALOGUE_NH = [  # ch05's nearest hit: s and its members r, g, b, .hit listed
    ("a listed object's member not listed", ["float k = s[0].radius;", *HIT], True),
    ("a listed object whole", ["Sphere q = s[0];", *HIT], True),
    ("a listed object's address", ["const Sphere* q = &s[0];", *HIT], True),
    ("a listed object written", ["s[0].r = 1;", *HIT], True),
    ("a listed object by pointer arithmetic", ["float k = (s + 1)->r;", *HIT], True),
    ("the listed call handed a parameter's address", ["float u = s[0].hit(ox, oy, &maxz);", *HIT], True),
    ("the listed call handed an element's address", ["float u = s[0].hit(ox, oy, (float*)&ptr[0]);", *HIT], True),
    ("the listed call on a local copy", ["Sphere q = s[0];", "float u = q.hit(ox, oy, &r);", *HIT], True),
    ("the output pointer by pointer arithmetic", ["*(ptr + 1) = 0;", *HIT], True),
]
CATALOGUE_TI = [  # ch04's tiles: TILE_WIDTH listed
    ("a __shared__ tile's row as a pointer", ["float* row = Ms[ty];", "sum += row[0];"], True),
    ("a macro not listed", ["sum += INF;"], False),
    ("a cast of the input to write it", ["((float*)M)[0] = sum;"], True),
]
SETS = ((NN, GS, CATALOGUE), (WARP, BS, CATALOGUE_BS), (RAY, NH, CATALOGUE_NH), (SM, TI, CATALOGUE_TI))


def verdicts(program, region, entries, check=device_ast.DeviceCheck):
    """[(name, problems, answer)]: the whitelist's verdict on each entry, tree alone."""
    own = labs.region_body(program.read_text(), region, program.name)[0]
    answers = region_ast.parse_many(program, [lines for _, lines, _ in entries] + [own], region, device=True)
    baseline = answers[-1]
    return [(name, check(spec_of(region)).region(a, baseline), a) for (name, _, _), a in zip(entries, answers)]


def planted_bug_folders(d):
    """[(lab, folder)]: lab.py selftest's planted bugs and hanging kernel, made in folder d."""
    from grader import kit
    data, out = labs.load_labs(), []
    for lab in data["labs"]:
        st = data.get("selftest", {}).get(lab["chapter"], {})
        for name in st.get("mutants", []) + (["hang"] if "hang" in st else []):
            folder = Path(d) / lab["chapter"] / name
            if name == "hang":
                h = st["hang"]
                kit.cmd_make(lab["chapter"], folder, solution=True)
                path = folder / lab["folder"] / h["file"]
                text = path.read_text()
                first, last, indent = labs.regions(text, h["file"])[h["region"]]
                lines = text.split("\n")
                lines[first + 1:last] = [indent + c for c in h["code"]]
                path.write_text("\n".join(lines))
            else:
                kit.mutated_folder(lab, name, folder)
            out.append((lab, name, folder))
    return out


def regions_of(lab, folder, kind=None):
    """[(program, body, first, spec, region)]: the folder's regions (of one kind), as
    lint.check_region takes them (program: the course's copy)."""
    out = []
    for task in lab["tasks"]:
        text = (folder / lab["folder"] / task["file"]).read_text()
        for region, spec in task["regions"].items():
            if kind is None or spec.get("kind") == kind:
                body, first = labs.region_body(text, region, task["file"])
                out.append((REPO / lab["folder"] / task["file"], body, first, spec, region))
    return out


def setUpModule():
    """Every region the tests ask clang about, parsed first, side by side (region_ast.warm: a
    child a core; one child after another, this test took 5 minutes of command 2 on a 16-core
    H200 machine). The tests then read the kept answers; what they check is unchanged."""
    try:
        region_ast.clang_python()
    except region_ast.MissingClang:
        return  # each test says so (clang_or_skip)
    requests = [(program, region, lines, True) for program, region, entries in SETS for _, lines, _ in entries]
    requests += [(program, region, device_ast.own_body(program, region), True) for program, region, _ in SETS]
    todo = [r for lab in labs.load_labs()["labs"] for r in regions_of(lab, REPO, "device")]
    todo += [(program, list(spec["stub"]), first, spec, region) for program, _, first, spec, region in todo]
    with tempfile.TemporaryDirectory() as d:
        for lab, _, folder in planted_bug_folders(d):
            todo += regions_of(lab, folder)
        region_ast.warm(requests + lint.parse_requests(todo), HALF_THE_CORES)


def through(check=device_ast.DeviceCheck):
    return [name for program, region, entries in SETS
            for name, problems, _ in verdicts(program, region, entries, check) if not problems]


class Catalogue(unittest.TestCase):
    def setUp(self):
        clang_or_skip(self)

    def test_every_solution_device_region_is_accepted(self):
        seen = 0
        for lab in labs.load_labs()["labs"]:
            for task in lab["tasks"]:
                program = REPO / lab["folder"] / task["file"]
                for name, spec in task["regions"].items():
                    if spec.get("kind") != "device":
                        continue
                    body, first = labs.region_body(program.read_text(), name, task["file"])
                    self.assertEqual(lint.check_region(body, first, spec, task["file"], name, program), [], name)
                    # the skeleton's region: its stub (an empty region, `return v;`) is accepted too
                    self.assertEqual(device_ast.check_region(program, list(spec["stub"]), first, spec, task["file"],
                                                             name), [], name)
                    seen += 1
        self.assertEqual(seen, 9)

    def test_the_planted_bugs_pass_the_lint(self):
        """lab.py selftest's planted bugs (labs.json "selftest", tests/mutants) and its hanging
        kernel lose their points in the tests: the lint accepts them."""
        with tempfile.TemporaryDirectory() as d:
            for lab, name, folder in planted_bug_folders(d):
                with self.subTest(name):
                    for program, body, first, spec, region in regions_of(lab, folder):
                        self.assertEqual(lint.check_region(body, first, spec, program.name, region, program), [],
                                         region)

    def test_atomics_only_where_listed(self):
        """No task lists an atomic; where one would, its first argument is an indexed element's
        address and nothing else."""
        spec = dict(spec_of(GS), calls=["atomicAdd"])
        entries = [("listed", ["atomicAdd(&c[0], a[0]);", LOOP], True),
                   ("a local's address", ["long long k = 0;", "atomicAdd(&k, 1LL);", LOOP], True),
                   ("an address computed", ["atomicAdd(c + 1, 1LL);", LOOP], True),
                   ("not listed", ["atomicExch(&c[0], 1LL);", LOOP], True)]
        own = labs.region_body(NN.read_text(), GS, NN.name)[0]
        answers = region_ast.parse_many(NN, [lines for _, lines, _ in entries] + [own], GS, device=True)
        got = {name: device_ast.DeviceCheck(spec).region(a, answers[-1]) for (name, _, _), a in zip(entries, answers)}
        self.assertEqual(got.pop("listed"), [])
        for name, problems in got.items():
            self.assertTrue(problems, name)

    def test_honest_variations_are_accepted(self):
        honest = [["long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;",
                   "const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;",
                   "for (; i < n; i += stride) { if (i < 0) break; c[i] = a[i] + b[i]; }"],
                  ["int k = 0;", "do { k++; } while (k < 2 && warpSize > 0);",
                   "for (long long i = threadIdx.x; i < n; i++) { c[i] = max(a[i], b[i]) + min(a[i], b[i]); }",
                   "if (n == 0) return;"]]
        for name, problems, a in verdicts(NN, GS, [(f"honest {i}", h, True) for i, h in enumerate(honest)]):
            self.assertEqual(problems, [], (name, a.get("errors")))

    def test_every_construct_is_refused(self):
        total = valid = 0
        for program, region, entries in SETS:
            for (name, problems, a), (_, lines, ok) in zip(verdicts(program, region, entries), entries):
                total += 1
                with self.subTest(name):
                    self.assertTrue(problems, f"{name}: accepted: {lines}")
                    if ok:  # refused by the whitelist, not because clang could not parse it
                        valid += 1
                        self.assertFalse([p for p in problems if p[1] == "does not compile"],
                                         f"{name}: not valid CUDA here: {problems}")
        self.assertGreaterEqual(total, 140)
        print(f"\ncatalogue: {total} device constructs, {valid} of them valid CUDA, each refused by the tree")

    def test_the_tokens_alone_let_many_through(self):
        """The token rules alone (lint.lint_region) accept a good share of the catalogue: the tree
        is what refuses them."""
        passed = []
        for program, region, entries in SETS:
            for name, lines, _ in entries:
                if not lint.lint_region(lines, 1, spec_of(region), program.name, region):
                    passed.append(name)
        print(f"\nthe token rules alone accept {len(passed)} of the catalogue: {', '.join(passed)}")
        self.assertGreaterEqual(len(passed), 40)

    def test_a_weakened_whitelist_fails_the_catalogue(self):
        """Planted weakenings: each lets some entry of the catalogue through."""
        class AnyCast(device_ast.DeviceCheck):  # casts of any type
            def expr(self, n, value=True, arg=False):
                if n["kind"] in device_ast.CASTS:
                    return
                return super().expr(n, value, arg)

        class Asm(device_ast.DeviceCheck):  # inline assembly accepted
            def stmt(self, n):
                if n["kind"] in ("ASM_STMT", "GCC_ASM_STMT"):
                    return
                return super().stmt(n)

        class AnyDecl(device_ast.DeviceCheck):  # declarations of every type
            def decl(self, n):
                return

        class AnyCall(device_ast.DeviceCheck):  # every named function, its arguments still checked
            def call(self, n):
                for a in n["children"][1:]:
                    self.expr(a)

        class AnyUnary(device_ast.DeviceCheck):  # '&' and '*' accepted
            def expr(self, n, value=True, arg=False):
                if n["kind"] == "UNARY_OPERATOR":
                    return self.each(n)
                return super().expr(n, value, arg)

        arithmetic = device_ast.arithmetic
        with mock.patch.object(device_ast, "arithmetic", lambda t: arithmetic(t) or t["canon"] == "POINTER"):
            self.assertTrue(through(), "pointers read as numbers: the catalogue did not notice")
        for weak in (AnyCast, Asm, AnyDecl, AnyCall, AnyUnary):
            self.assertTrue(through(weak), f"{weak.__name__}: the catalogue did not notice")


class Cheats(unittest.TestCase):
    def setUp(self):
        clang_or_skip(self)

    def test_device_cheats_that_passed_the_tokens_are_refused(self):
        """Two cheats of tests/labs/cheats/truth_cheats.py passed the token rules and now fail
        the tree (they keep "lint": False, so that lab.py selftest still proves their run-time
        defence)."""
        import tempfile
        sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
        import cheats
        from grader.kit import cmd_make
        names = {"matmul-keeps-its-product-in-its-input": "ch04.3",
                 "reads-past-the-end-only-when-buffers-lie-close": "ch02.1"}
        for c in [c for c in cheats.CHEATS if c["name"] in names]:
            with self.subTest(c["name"]), tempfile.TemporaryDirectory() as d:
                lab = labs.find_lab(c["lab"])[0]
                folder = Path(d) / "s"
                cmd_make(c["lab"], folder, True)
                c["make"](folder, lab)
                task = next(t for t in lab["tasks"] if t["id"] == names[c["name"]])
                text = (folder / lab["folder"] / task["file"]).read_text()
                for name, spec in task["regions"].items():
                    body, first = labs.region_body(text, name, task["file"])
                    if body == labs.region_body((REPO / lab["folder"] / task["file"]).read_text(), name, "")[0]:
                        continue
                    self.assertEqual(lint.lint_region(body, first, spec, task["file"], name), [], name)
                    self.assertTrue(lint.check_region(body, first, spec, task["file"], name,
                                                      REPO / lab["folder"] / task["file"]), name)


class WithoutClang(unittest.TestCase):
    def test_no_libclang_refuses_a_device_region(self):
        with mock.patch.object(region_ast, "_python", []), mock.patch.object(region_ast, "_cache", {}), \
                mock.patch.object(region_ast, "_has_clang", lambda py: False):
            body, first = labs.region_body(NN.read_text(), GS, NN.name)
            with self.assertRaises(region_ast.MissingClang):
                lint.check_region(body, first, spec_of(GS), NN.name, GS, NN)


if __name__ == "__main__":
    unittest.main(verbosity=1)
