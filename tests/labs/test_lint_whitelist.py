#!/usr/bin/env python3
"""The host regions' whitelist on clang's tree (labs/grader/region_ast.py), against a catalogue of
C++ constructs: each is spliced into a real host region (ch06's breadth-first schedule in
streams.cu, the region beside the driver's buffers; a few into ch05's constant copy) and must be
refused by the tree alone (the token rules of lint.py are not asked), while every host region of
the course's solutions is accepted. Most entries are valid C++ (clang parses them without an
error), so what refuses them is the whitelist, not a compile error; the test checks that too.

It also plants weakenings of the whitelist (a DeclRefExpr to a pointer accepted, casts to any
type, every member readable) and shows the catalogue then fails: the test can fail.
Run: python3 tests/labs/test_lint_whitelist.py (ctest: lab.lint_whitelist, label cpu). Needs the
`libclang` package (scripts/setup.sh puts it in .venv/); without it the test fails under CI=true
and skips elsewhere, saying why."""
import os
import sys
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
from grader import labs, lint, region_ast  # noqa: E402

# The clang children side by side: half the cores, at least two (command 2 runs the lab
# self-tests beside this test, and they wait for CPU while every core parses).
HALF_THE_CORES = max(2, (os.cpu_count() or 2) // 2)

STREAMS = REPO / "ch06_streams" / "streams.cu"
RAY = REPO / "ch05_raytrace" / "ray.cu"
BF = "ch06.breadth-first"
CC = "ch05.constant-copy"
SCHEDULE = "run_op(p, H2D, 0, 0, false);"

# (name, lines, valid C++). Every one must be refused. valid: clang parses it without an error.
CATALOGUE = [
    # the three attack classes of issue 42
    ("structured binding of a struct's members",
     ["auto& [n, chunks, streams, max_blocks, steps, hi, ho, st, di, dout, g, ev, rec] = p;", SCHEDULE], False),
    ("structured binding of a local struct", ["struct Q { int a, b; } q{1, 2};", "auto [a, b] = q;", SCHEDULE], True),
    ("integer reinterpreted as a pointer and back",
     ["unsigned long long at = reinterpret_cast<unsigned long long>(&p);",
      "long long* q = reinterpret_cast<long long*>(at);", "q[4] = 0;", SCHEDULE], True),
    ("a local array's address as a scan start",
     ["int probe[1] = {0};", "int k = 0;", "while (probe[k] != 12345) k++;", SCHEDULE], True),
    ("a local's address as a scan start", ["int probe = 0;", "int* q = &probe;", "q[-8] = 1;", SCHEDULE], True),
    # declarations of every form
    ("auto", ["auto k = 1;", SCHEDULE], True),
    ("auto of a member", ["auto q = p.host_in;", SCHEDULE], True),
    ("decltype", ["decltype(p.chunks) k = 1;", SCHEDULE], True),
    ("decltype(auto)", ["decltype(auto) k = (p.chunks);", SCHEDULE], True),
    ("reference", ["int& k = p.chunks;", "k = 1;", SCHEDULE], True),
    ("rvalue reference", ["int&& k = 1;", SCHEDULE], True),
    ("reference to the whole", ["Pipeline& q = p;", SCHEDULE], True),
    ("const reference", ["const long long& k = p.guard;", SCHEDULE], True),
    ("pointer", ["Pipeline* q = nullptr;", SCHEDULE], True),
    ("pointer to an integer", ["int* q = nullptr;", SCHEDULE], True),
    ("pointer to pointer", ["word_t** q = nullptr;", SCHEDULE], True),
    ("array", ["int a[4] = {1, 2, 3, 4};", SCHEDULE], True),
    ("array of unknown bound", ["int a[] = {1, 2};", SCHEDULE], True),
    ("variable length array", ["int a[p.chunks];", SCHEDULE], True),
    ("local union", ["union U { long long i; word_t* q; } u;", "u.i = 0;", SCHEDULE], True),
    ("union for punning", ["union U { long long i; double d; };", "U u{1};", SCHEDULE], True),
    ("local struct", ["struct S { int a; } s1{1};", SCHEDULE], True),
    ("local class", ["class C { public: int a; } c1;", SCHEDULE], True),
    ("local enum", ["enum E { A, B } e1 = A;", SCHEDULE], True),
    ("enum class", ["enum class E : int { A } e1 = E::A;", SCHEDULE], True),
    ("typedef", ["typedef long long* P;", SCHEDULE], True),
    ("using alias", ["using P = long long*;", SCHEDULE], True),
    ("integer through a typedef", ["typedef int I;", "I k = 1;", SCHEDULE], True),
    ("static local", ["static int k = 0;", "k++;", SCHEDULE], True),
    ("thread_local", ["thread_local int k = 0;", SCHEDULE], True),
    ("extern", ["extern int forged;", SCHEDULE], True),
    ("register", ["register int k = 0;", SCHEDULE], False),
    ("volatile pointer", ["volatile int* q = nullptr;", SCHEDULE], True),
    ("constexpr pointer", ["constexpr int* q = nullptr;", SCHEDULE], True),
    ("floating local", ["double d = 1.5;", SCHEDULE], True),
    ("float local", ["float f = 1;", SCHEDULE], True),
    ("a std::vector", ["std::vector<int> v(4);", SCHEDULE], True),
    ("an object of the program's type", ["Segment e{};", SCHEDULE], True),
    ("a global pointer compared", ["bool b = environ != environ;", SCHEDULE], True),
    ("cudaStream_t local", ["cudaStream_t s0 = 0;", SCHEDULE], True),
    ("dim3 where it is not listed", ["dim3 g(1, 1);", SCHEDULE], True),
    ("lambda", ["auto f = [&] { return p.host_in[0]; };", SCHEDULE], True),
    ("lambda called at once", ["[&] { p.host_out[0] = 0; }();", SCHEDULE], True),
    ("function pointer", ["void (*f)(Pipeline&, Op, int, int, bool) = run_op;", "f(p, H2D, 0, 0, false);"], True),
    ("call through a function reference", ["(run_op)(p, H2D, 0, 0, false);"], True),
    ("call through *&", ["(*&run_op)(p, H2D, 0, 0, false);"], True),
    ("goto and label", ["again: goto again;", SCHEDULE], True),
    ("new", ["int* q = new int(1);", SCHEDULE], True),
    ("new discarded", ["new int[4];", SCHEDULE], True),
    ("delete", ["delete p.host_in;", SCHEDULE], True),
    ("placement new", ["int k = 0;", "new (&k) int(1);", SCHEDULE], False),
    ("throw", ["throw 1;"], True),
    ("try", ["try { run_op(p, H2D, 0, 0, false); } catch (...) {}"], True),
    ("return", ["return;"], True),
    ("switch", ["switch (p.chunks) { case 1: break; default: break; }", SCHEDULE], True),
    ("sizeof of an object", ["int k = sizeof(p);", SCHEDULE], True),
    ("sizeof of a member", ["int k = sizeof p.host_in;", SCHEDULE], True),
    ("sizeof of a type not listed", ["int k = sizeof(Pipeline);", SCHEDULE], True),
    ("alignof", ["int k = alignof(Pipeline);", SCHEDULE], True),
    ("offsetof", ["int k = __builtin_offsetof(Pipeline, host_in);", SCHEDULE], True),
    ("__builtin_memcpy", ["long long k = 0;", "__builtin_memcpy(&k, &p, 8);", SCHEDULE], True),
    ("__builtin_frame_address", ["long long k = (long long)__builtin_frame_address(0);", SCHEDULE], True),
    ("__builtin_bit_cast", ["long long k = __builtin_bit_cast(long long, 1.0);", SCHEDULE], True),
    ("inline asm", ["asm(\"nop\");", SCHEDULE], True),
    ("GNU asm statement", ["__asm__ volatile(\"\" ::: \"memory\");", SCHEDULE], True),
    ("attribute", ["[[maybe_unused]] int k = 0;", SCHEDULE], True),
    ("GNU attribute", ["int k __attribute__((unused)) = 0;", SCHEDULE], True),
    ("alignas", ["alignas(64) int k = 0;", SCHEDULE], True),
    # casts of every kind
    ("C-style cast to an integer", ["long long k = (long long)p.chunks;", SCHEDULE], True),
    ("C-style cast of a pointer", ["long long k = (long long)p.host_in;", SCHEDULE], True),
    ("C-style cast to a pointer", ["int k = 0;", "int t = *(int*)k;", SCHEDULE], True),
    ("C-style cast to an enum not listed", ["int k = (Mode)0;", SCHEDULE], True),
    ("C-style cast of a pointer to a listed enum", ["int k = (Op)(long long)&p;", SCHEDULE], True),
    ("functional cast", ["long long k = (long long)(1) + int(p.chunks);", SCHEDULE], True),
    ("functional cast to a listed enum", ["Op o = Op(1);", SCHEDULE], True),
    ("brace construction", ["int k = int{1};", SCHEDULE], True),
    ("static_cast", ["int k = static_cast<int>(p.chunks);", SCHEDULE], True),
    ("static_cast to a listed enum", ["run_op(p, static_cast<Op>(1), 0, 0, false);"], True),
    ("reinterpret_cast", ["long long k = reinterpret_cast<long long>(p.host_in);", SCHEDULE], True),
    ("const_cast", ["const int c0 = 1;", "int& k = const_cast<int&>(c0);", SCHEDULE], True),
    ("dynamic_cast", ["void* q = dynamic_cast<void*>(&p);", SCHEDULE], False),
    ("bit_cast", ["long long k = __builtin_bit_cast(long long, p.host_in);", SCHEDULE], True),
    ("memcpy", ["long long k = 0;", "memcpy(&k, &p, 8);", SCHEDULE], True),
    ("std::memcpy", ["long long k = 0;", "std::memcpy(&k, &p, 8);", SCHEDULE], True),
    ("pointer to member", ["auto m = &Pipeline::host_in;", SCHEDULE], True),
    ("pointer to member applied", ["int Pipeline::*m = &Pipeline::chunks;", "int k = p.*m;", SCHEDULE], True),
    # addresses, dereferences, members
    ("address-of", ["long long k = 0;", "if (&p) k = 1;", SCHEDULE], True),
    ("dereference", ["int k = *p.host_in;", SCHEDULE], True),
    ("dereference of an address", ["int k = 0;", "int j = *&k;", SCHEDULE], True),
    ("index of a member pointer", ["long long k = p.host_in[0];", SCHEDULE], True),
    ("index of a vector", ["run_op(p, H2D, 0, 0, p.dev_in[0] == 0);"], True),
    ("member not listed", ["long long k = p.n;", SCHEDULE], True),
    ("member not listed: guard", ["long long k = p.guard;", SCHEDULE], True),
    ("member written", ["p.chunks = 1;", SCHEDULE], True),
    ("member incremented", ["p.streams++;", SCHEDULE], True),
    ("member function", ["int k = p.stream.size();", SCHEDULE], True),
    ("arrow", ["int k = (&p)->chunks;", SCHEDULE], True),
    ("this", ["int k = this != nullptr;", SCHEDULE], False),
    ("global written", ["LCG_A2 = 1;", SCHEDULE], False),
    ("forbidden name", ["long long k = LCG_A;", SCHEDULE], True),
    ("forbidden member name", ["long long k = p.host_in != nullptr;", SCHEDULE], True),
    ("parameter of another type", ["int k = mode;", "Pipeline* q = &p;", SCHEDULE], True),
    ("a string", ["const char* s0 = \"x\";", SCHEDULE], True),
    ("a string in a call", ["puts(\"x\");", SCHEDULE], True),
    ("a character pointer from a literal", ["int k = \"abc\"[1];", SCHEDULE], True),
    # operators and expressions
    ("comma operator", ["int k = (run_op(p, H2D, 0, 0, false), 1);"], True),
    ("comma operator in a for", ["for (int i = 0, j = 0; i < 1; i++, j++) run_op(p, H2D, i, j, false);"], True),
    ("operator overloading call", ["int k = p.stream.operator[](0) == 0;", SCHEDULE], True),
    ("vector's operator[]", ["bool b = p.stream[0] == 0;", SCHEDULE], True),
    ("initializer list", ["std::initializer_list<int> l = {1, 2};", SCHEDULE], True),
    ("designated initializer", ["struct D { int a; } d{.a = 1};", SCHEDULE], True),
    ("compound literal", ["int k = ((int[]){1, 2})[1];", SCHEDULE], True),
    ("statement expression", ["int k = ({ int j = 1; j; });", SCHEDULE], True),
    ("__typeof__", ["__typeof__(p.host_in) q = 0;", SCHEDULE], True),
    ("_Generic", ["int k = _Generic(1, int: 1, default: 0);", SCHEDULE], True),
    ("a call not listed", ["chunk_size(p.n, 1, 0);", SCHEDULE], True),
    ("a libc call", ["system(\"true\");", SCHEDULE], True),
    ("a CUDA call not listed", ["cudaDeviceSynchronize();", SCHEDULE], True),
    ("std::min where not listed (depth-first lists no std::min)", ["int k = std::max(1, 2);", SCHEDULE], True),
    ("a member call of a listed call's result", ["run_op(p, H2D, 0, 0, false == (p.host_in == 0));"], True),
    ("a call with a pointer argument", ["run_op(p, H2D, 0, 0, p.host_in);"], True),
    ("a call with a floating argument", ["run_op(p, H2D, 1.5, 0, false);"], True),
    ("conditional of pointers", ["bool b = (p.chunks ? p.host_in : p.host_out) == 0;", SCHEDULE], True),
    ("a macro of the course", ["HANDLE_ERROR(cudaDeviceSynchronize());", SCHEDULE], True),
    ("a macro of the course, no call", ["int k = NUM_STREAMS_MAX;", SCHEDULE], False),
    ("CHECK_LAUNCH", ["CHECK_LAUNCH();", SCHEDULE], True),
    ("a floating literal", ["int k = 1.5;", SCHEDULE], True),
    ("a nested function's scope", ["{ struct L { static void f() {} }; L::f(); }", SCHEDULE], True),
    ("a block scope lambda via auto", ["auto k = [] { return 1; }();", SCHEDULE], True),
    ("a template call", ["int k = std::min<int>(1, p.chunks) + std::max<int>(0, 1);", SCHEDULE], True),
    ("a nullptr", ["bool b = nullptr == nullptr;", SCHEDULE], True),
    ("an empty region, but a declaration of a function", ["void forged();", SCHEDULE], True),
    ("a using directive", ["using namespace std;", SCHEDULE], True),
    ("a namespace alias", ["namespace q = std;", SCHEDULE], True),
    ("static_assert", ["static_assert(sizeof(int) == 4, \"\");", SCHEDULE], True),
]
# ch05's constant copy: its listed objects and macro, misused.
COPY = "if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data(), sizeof(Sphere) * count));"
CATALOGUE_CC = [
    ("the listed object indexed", ["if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data() + 1, 0));"], True),
    ("a listed object outside a listed call", ["Sphere t = spheres[0];", COPY], True),
    ("a listed object's pointer kept", ["const Sphere* q = spheres.data();", COPY], True),
    ("the listed macro around a call not listed", ["HANDLE_ERROR(cudaMemset(nullptr, 0, 8));", COPY], True),
    ("the listed macro's function called by hand", ["handle_error(cudaSuccess, \"x\", \"y\", 1);", COPY], True),
    ("the listed macro's function with a pointer argument", [
        "handle_error(cudaMemcpyToSymbol(s, spheres.data(), 8), \"x\", \"y\", 1);", COPY], True),
    ("sizeof of an object", ["if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data(), sizeof(s)));"], True),
    ("a listed object, another member", ["int k = spheres.capacity();", COPY], True),
]


# Schedules a student may write: accepted.
HONEST_BODIES = [
    ["for (int first = 0; first < p.chunks; first += p.streams) {",
     "    int last = std::min(first + p.streams, p.chunks);",
     "    for (int op = H2D; op <= D2H; op++)",
     "        for (int c = first; c < last; c++) run_op(p, (Op)op, c, c % p.streams, false);", "}"],
    ["int c = 0;", "while (c < p.chunks) {", "    if (c % 2 == 0 && c >= 0) run_op(p, H2D, c, 0, false);",
     "    else { run_op(p, KERNEL, c, 1 - 1, !true); }", "    c += 1;", "}"],
    ["bool last = false;", "do { run_op(p, D2H, 0, -1 + 1, last); last = !last; } while (last);"]]
HONEST = [(f"honest {i}", h, True) for i, h in enumerate(HONEST_BODIES)]


def setUpModule():
    """Every region the catalogue tests ask clang about, parsed first, side by side
    (region_ast.warm: a child a core); the tests then read the kept answers."""
    try:
        region_ast.clang_python()
    except region_ast.MissingClang:
        return  # each test says so (clang_or_skip)
    requests = [(program, region, lines, False) for program, region, entries
                in ((STREAMS, BF, CATALOGUE + HONEST), (RAY, CC, CATALOGUE_CC)) for _, lines, _ in entries]
    for lab in labs.load_labs()["labs"]:
        for task in lab["tasks"]:
            program = REPO / lab["folder"] / task["file"]
            for name, spec in task["regions"].items():
                if spec.get("kind") == "host":
                    requests.append((program, name, labs.region_body(program.read_text(), name, task["file"])[0], False))
    region_ast.warm(requests, HALF_THE_CORES)


def clang_or_skip(test):
    try:
        region_ast.clang_python()
    except region_ast.MissingClang as e:
        if os.environ.get("CI") == "true":
            test.fail(str(e))
        test.skipTest(str(e))


def spec_of(region):
    for lab in labs.load_labs()["labs"]:
        for task in lab["tasks"]:
            if region in task["regions"]:
                return task["regions"][region]
    raise KeyError(region)


def verdicts(program, region, entries, check=region_ast.Check):
    """[(name, problems, answer)]: the whitelist's verdict on each entry, tree alone."""
    answers = region_ast.parse_many(program, [lines for _, lines, _ in entries], region)
    return [(name, check(spec_of(region)).region(a), a) for (name, _, _), a in zip(entries, answers)]


class Catalogue(unittest.TestCase):
    def setUp(self):
        clang_or_skip(self)

    def test_every_solution_host_region_is_accepted(self):
        seen = 0
        for lab in labs.load_labs()["labs"]:
            for task in lab["tasks"]:
                program = REPO / lab["folder"] / task["file"]
                for name, spec in task["regions"].items():
                    if spec.get("kind") != "host":
                        continue
                    body, first = labs.region_body(program.read_text(), name, task["file"])
                    self.assertEqual(region_ast.check_region(program, body, first, spec, task["file"], name), [],
                                     name)
                    self.assertEqual(lint.check_region(body, first, spec, task["file"], name, program), [], name)
                    seen += 1
        self.assertGreaterEqual(seen, 4)

    def test_honest_variations_are_accepted(self):
        for (name, problems, a) in verdicts(STREAMS, BF, HONEST):
            self.assertEqual(problems, [], (name, a.get("errors")))

    def test_every_construct_is_refused(self):
        for program, region, entries in ((STREAMS, BF, CATALOGUE), (RAY, CC, CATALOGUE_CC)):
            for (name, problems, a), (_, lines, valid) in zip(verdicts(program, region, entries), entries):
                with self.subTest(name):
                    self.assertTrue(problems, f"{name}: accepted: {lines}")
                    if valid:  # refused by the whitelist, not because clang could not parse it
                        self.assertEqual(a.get("errors"), [], f"{name}: not valid C++ here: {lines}")
                        self.assertTrue([p for p in problems if p[1] != "does not compile"], name)

    def test_a_message_names_no_path_of_the_grading_machine(self):
        """clang names the course's copy of the program by its path; a report to a student says
        ch06_streams/streams.cu, never the folder the course lives in (on an H200 at 735bd12 a
        refused structured binding's message named /work/...)."""
        spec = spec_of(BF)
        body = ["auto [a, b] = p;  // a structured binding of a type with more members"]
        said = region_ast.check_region(STREAMS, body, 100, spec, "ch06_streams/streams.cu", BF)
        self.assertTrue(said)
        self.assertTrue(any("does not compile" in m and "streams.cu" in m.split("clang: ", 1)[-1] for m in said), said)
        for m in said:
            self.assertNotIn(str(REPO), m)
            self.assertNotIn(str(REPO.resolve()), m)

    def test_a_weakened_whitelist_fails_the_catalogue(self):
        """Planted weakenings: each lets some entry of the catalogue through."""
        class AnyCast(region_ast.Check):  # C-style casts to any type
            def expr(self, n, value=True, arg=False):
                if n["kind"] == "CSTYLE_CAST_EXPR":
                    return
                return super().expr(n, value, arg)

        class AnyMember(region_ast.Check):  # every member readable
            def member(self, n):
                return

        class AnyDecl(region_ast.Check):  # declarations of every type
            def decl(self, n):
                return

        # a DeclRefExpr to a pointer accepted (pointers read as integers)
        integer = region_ast._integer
        with mock.patch.object(region_ast, "_integer", lambda t: integer(t) or t["canon"] == "POINTER"):
            through = [name for name, problems, _ in verdicts(STREAMS, BF, CATALOGUE) if not problems]
        self.assertTrue(through, "pointers read as integers: the catalogue did not notice")
        for weak in (AnyCast, AnyMember, AnyDecl):
            through = [name for name, problems, _ in verdicts(STREAMS, BF, CATALOGUE, check=weak) if not problems]
            self.assertTrue(through, f"{weak.__name__}: the catalogue did not notice")

    def test_a_region_that_hangs_or_explodes_the_parser_is_stopped(self):
        nest = ["int k = " + "(" * 3000 + "1" + ")" * 3000 + ";", SCHEDULE]
        with mock.patch.object(region_ast, "TIME_LIMIT", 20):
            (name, problems, a), = verdicts(STREAMS, BF, [("deep nesting", nest, False)])
        self.assertTrue(problems)


class Cheats(unittest.TestCase):
    def setUp(self):
        clang_or_skip(self)

    def test_the_cheats_pass_the_tokens_and_not_the_tree(self):
        """tests/labs/cheats/whitelist_cheats.py: lint-clean for the token rules (the lint of issue
        42's start), refused by the whitelist on clang's tree."""
        import tempfile
        sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
        import cheats  # noqa: F401  (first: whitelist_cheats imports from it)
        import whitelist_cheats
        from grader.kit import cmd_make
        self.assertGreaterEqual(len(whitelist_cheats.CHEATS), 3)
        for c in whitelist_cheats.CHEATS:
            with self.subTest(c["name"]), tempfile.TemporaryDirectory() as d:
                lab = labs.find_lab(c["lab"])[0]
                folder = Path(d) / "s"
                cmd_make(c["lab"], folder, True)
                c["make"](folder, lab)
                for task in lab["tasks"]:
                    text = (folder / lab["folder"] / task["file"]).read_text()
                    for name, spec in task["regions"].items():
                        body, first = labs.region_body(text, name, task["file"])
                        program = REPO / lab["folder"] / task["file"]
                        found = lint.check_region(body, first, spec, task["file"], name, program)
                        if task["id"] in c["zero"]:
                            self.assertEqual(lint.lint_region(body, first, spec, task["file"], name), [], name)
                            self.assertTrue(found, name)
                        else:
                            self.assertEqual(found, [], name)


class WithoutClang(unittest.TestCase):
    def test_no_libclang_refuses_to_grade(self):
        """Without libclang the grader says so and exits 77 (it never grades with the tokens alone)."""
        from grader import cli
        with mock.patch.object(region_ast, "_python", []), mock.patch.object(region_ast, "_cache", {}), \
                mock.patch.object(region_ast, "_has_clang", lambda py: False):
            with self.assertRaises(region_ast.MissingClang):
                lint.check_region([SCHEDULE], 1, spec_of(BF), "streams.cu", BF, STREAMS)
            import io
            from contextlib import redirect_stdout
            import tempfile
            with tempfile.TemporaryDirectory() as d:  # the lab's solution folder, by lab.py lint
                from grader.kit import cmd_make
                cmd_make("ch06", Path(d) / "s", True)
                out = io.StringIO()
                with redirect_stdout(out):
                    rc = cli.run(cli.__doc__ or "", ["lint", str(Path(d) / "s"), "--lab", "ch06"])
            self.assertEqual(rc, labs.EXIT_CANNOT, out.getvalue())
            self.assertIn("libclang", out.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=1)
