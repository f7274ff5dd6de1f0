"""Device regions by whitelist, on clang's own tree.

A device region is kernel code: it runs on the GPU beside the grading driver's buffers, and a
token lint cannot make it safe (a cast of a `const float*` lets a kernel write its own input; an
address and a little arithmetic reach any buffer). So, like a host region (region_ast.py, whose
parse this module uses: the same child process, limits and MissingClang), a device region is
read by clang's front end in its real context, the course's program with the student's region
spliced in, parsed as CUDA device code (region_ast.DEVICE_ARGS and DEVICE_PRELUDE say how and
why), and accepted only when every node of the region is one a device region needs:
  - declarations of locals of arithmetic type (the integers, float, double, bool), and, where the
    region's entry in labs/labs.json says "shared_arrays", `__shared__` arrays of those with a
    constant size; nothing static, extern, volatile or with any other attribute;
  - names of the function's arithmetic locals and parameters and of arithmetic constants (const
    globals: WARP_SIZE, scene.h's INF, warpSize); the members x, y, z of threadIdx,
    blockIdx, blockDim and gridDim;
  - an index of a parameter that points to numbers, of a `__shared__` array, or of a name listed
    in the region's "objects" (ch05's spheres in constant memory, whose listed members it may
    read): a pointer or an array is named only there, so no pointer value, pointer arithmetic
    or address exists outside an index;
  - arithmetic, comparison, assignment to the function's locals and parameters and to indexed
    elements (never a listed object's), ?:, casts between arithmetic types, loops, if,
    break, continue, return;
  - calls of the device functions below (barriers, shuffles, min, max, float functions) and of
    the region's "calls" (the course's own functions, warp_sum, and members, .hit), with
    arithmetic arguments; a listed call of the course may also be handed the address of an
    arithmetic local the region declared (ch05's s[i].hit(ox, oy, &n) writes n): that address
    goes to the course's code, not into a value the region can use; atomics only where "calls"
    lists them, with the address of an indexed element as their first argument.
Everything else is refused whatever its tokens: inline PTX (asm), pointers and references,
addresses and dereferences, casts to or from anything but numbers, unions, structs, lambdas,
goto and labels, switch, new and delete, sizeof, printf, clocks, static locals, __device__ or
__constant__ declarations, templates. Macros too, but those the region's "constants" lists
(TILE_WIDTH), whose expansion is then checked like the rest.
The course's program must parse: a region is refused on any error clang reports that the course's
own program (its own region in place) does not. The programs with device regions parse without an error but
Dot-SM-Warp.cu, which includes CUB: clang 18 reads CUB's device code in CUDA 13's headers with
186 errors, all in CUB's headers, for want of nvcc's built-ins. Those are the context's, the
same with any region; a region that adds one is refused.
"""
from . import region_ast
from .labs import region_body
from pathlib import Path

ARITHMETIC = region_ast.INTEGER | {"FLOAT", "DOUBLE"}
# What any device region may call (a subset of lint.py's DEVICE_CALLS, which also lets __ldg and
# atomicAdd through the tokens: their argument is an address, refused here).
DEVICE_FUNCTIONS = {"__syncthreads", "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                    "__shfl_xor_sync", "min", "max", "fminf", "fmaxf", "fabsf", "sqrtf", "fmaf",
                    "__fmaf_rn", "__fadd_rn", "__fmul_rn", "__float2int_rn", "__ballot_sync",
                    "__any_sync", "__all_sync", "__activemask", "__popc", "__syncthreads_count",
                    "__syncthreads_or", "__syncthreads_and"}
ATOMICS = {"atomicAdd", "atomicExch", "atomicCAS"}  # only where the region's "calls" lists them
INDEX_VARIABLES = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
STATEMENTS = region_ast.STATEMENTS | {"RETURN_STMT"}
CASTS = {"CSTYLE_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR", "CXX_STATIC_CAST_EXPR"}
LITERALS = {"INTEGER_LITERAL", "FLOATING_LITERAL", "CXX_BOOL_LITERAL_EXPR"}
FUNCTION_SCOPES = {"FUNCTION_DECL", "CXX_METHOD", "FUNCTION_TEMPLATE"}


def arithmetic(t):
    return t["canon"] in ARITHMETIC


def numbers_array(t):
    """A constant-size array (of arrays) of arithmetic elements."""
    while t["canon"] == "CONSTANTARRAY" and "element" in t:
        t = t["element"]
    return arithmetic(t) and not t.get("volatile")


def strip(n):
    """Through the implicit conversions clang puts around a name (decay, load)."""
    while n["kind"] in ("UNEXPOSED_EXPR", "PAREN_EXPR") and len(n["children"]) == 1:
        n = n["children"][0]
    return n


class DeviceCheck(region_ast.Check):
    """The whitelist, node by node. spec: the region's entry of labs/labs.json."""
    statements = STATEMENTS
    kind = "device"

    def __init__(self, spec):
        super().__init__(spec)
        self.constants = set(spec.get("constants", []))
        self.shared = bool(spec.get("shared_arrays"))

    def macro(self, name, line):
        if name not in self.constants and name != "__shared__":  # the declaration judges __shared__
            self.problems.append((line, "macro", f"'{name}' is a macro: a device region uses none"
                                  + (f" but {', '.join(sorted(self.constants))}" if self.constants else "")))

    def outside(self, n):
        """Nothing: a device region trusts no macro (its listed constants' expansions are checked
        like the rest)."""
        return False

    # Statements (region_ast.Check.stmt) -------------------------------------------------------
    def decl(self, n):
        if n["kind"] != "VAR_DECL":
            return self.bad(n, "declaration", f"{self.describe(n)}: a device region declares only "
                            "variables of arithmetic type")
        t, name = n["type"], n["spelling"]
        attrs = [c["kind"] for c in n["children"] if c["kind"].endswith("_ATTR")]
        shared = attrs == ["CUDASHARED_ATTR"]  # clang gives it static storage: a block's, not the program's
        if n.get("storage") not in (("NONE", None, "STATIC") if shared else ("NONE", None)) or \
                n.get("tls") not in ("NONE", None):
            return self.bad(n, "declaration", f"'{name}': static, extern, register or thread_local")
        if t.get("volatile") or (t.get("element") or {}).get("volatile"):
            return self.bad(n, "declaration", f"'{name}' is volatile")
        rest = [c for c in n["children"] if not c["kind"].endswith("_ATTR") and c["kind"] != "TYPE_REF"]
        if shared and t["canon"] == "CONSTANTARRAY" and numbers_array(t):
            if not self.shared:
                return self.bad(n, "declaration", f"'{name}': this region declares no __shared__ array")
        elif attrs:
            return self.bad(n, "declaration", f"'{name}' has an attribute ("
                            + ", ".join(a.lower().replace("_attr", "") for a in attrs) + ")")
        elif not arithmetic(t):
            return self.bad(n, "declaration", f"'{name}' has type '{t['spelling']}': a device region "
                            "declares only variables of arithmetic type"
                            + (" and __shared__ arrays of them" if self.shared else ""))
        for c in rest:  # the initializer, an array's size
            self.expr(c)

    # Expressions ----------------------------------------------------------------------------
    def expr(self, n, value=True, arg=False):
        k, t = n["kind"], n["type"]
        if k in LITERALS:
            return
        if k == "UNEXPOSED_EXPR" and not n["children"]:
            if not n["here"] and arithmetic(t):
                return  # a default argument of a device function (a shuffle's width)
            return self.bad(n, "not allowed", "an expression clang does not expose (__builtin_LINE, T())")
        if not n["here"]:
            return self.bad(n, "not allowed", f"{self.describe(n)} written outside the region")
        if k == "PAREN_EXPR":
            return self.each(n)
        if k == "DECL_REF_EXPR":
            return self.ref(n)
        if k == "MEMBER_REF_EXPR":
            return self.member(n)
        if k == "CALL_EXPR":
            return self.call(n)
        if not arithmetic(t) or t.get("volatile"):
            return self.bad(n, "not a number", f"{self.describe(n)} of type '{t['spelling']}': a device "
                            "region names pointers and arrays only to index them")
        if k == "ARRAY_SUBSCRIPT_EXPR":
            return self.index(n)
        if k == "UNEXPOSED_EXPR":  # an implicit conversion between numbers
            return self.each(n)
        if self.operator(n):
            return
        if k in CASTS:  # a conversion between numbers: the target is one (above), so must the operand be
            for c in n["children"]:
                if c["kind"] != "TYPE_REF":
                    self.expr(c)
            return
        self.bad(n, "not allowed", self.describe(n))

    def ref(self, n):
        r = n.get("ref") or {}
        name = r.get("name", n["spelling"])
        if r.get("kind") == "ENUM_CONSTANT_DECL":
            return
        if r.get("kind") in ("VAR_DECL", "PARM_DECL") and arithmetic(n["type"]) and arithmetic(r["type"]) \
                and not r["type"].get("volatile"):
            if r["kind"] == "PARM_DECL" or r.get("scope") in FUNCTION_SCOPES and not r.get("attrs"):
                return  # the function's own parameter or local
            if r.get("scope") not in FUNCTION_SCOPES and r["type"].get("const"):
                return  # a constant: the program's (WARP_SIZE, scene.h's INF) or warpSize
        self.bad(n, "name not allowed", f"'{name}' ({self.describe(n, r)}): a device region names the "
                 "function's numbers, the program's constants, and pointers or arrays only to index them")

    def builtin(self, base):
        r = base.get("ref") or {}
        return base["kind"] == "DECL_REF_EXPR" and r.get("name") in INDEX_VARIABLES and r.get("kind") == \
            "VAR_DECL" and not r.get("in_main") and r.get("scope") not in FUNCTION_SCOPES

    def member(self, n):
        base = strip(n["children"][0]) if n["children"] else None
        if base is not None and self.builtin(base) and n["spelling"] in ("x", "y", "z"):
            return
        if base is not None and base["kind"] == "ARRAY_SUBSCRIPT_EXPR" and arithmetic(n["type"]):
            owner = self.index(base, whole=True)
            if owner is None:
                return  # index() said why
            if owner in self.objects and n["spelling"] in self.objects[owner]:
                return
        self.bad(n, "member", f"'.{n['spelling']}': not a member this region may read (threadIdx, blockIdx, "
                 "blockDim, gridDim .x .y .z" + "".join(f", {o}[i].{m}" for o, ms in sorted(self.objects.items())
                                                        for m in ms if not m.startswith(".")) + ")")

    def index(self, n, whole=False):
        """An index: of a parameter that points to numbers, of a __shared__ array of numbers, or
        (whole: its element is a record, for member() and call()) of a listed object, by an
        integer. Returns the listed object's name when it is one, "" for a buffer or an array of
        numbers, None when it refused the index."""
        kids = n["children"]
        if len(kids) != 2:
            return self.bad(n, "index", "an index clang did not build")
        base, at = strip(kids[0]), kids[1]
        if not region_ast._integer(at["type"]):
            return self.bad(at, "index", f"an index of type '{at['type']['spelling']}'")
        self.expr(at)
        if base["kind"] == "ARRAY_SUBSCRIPT_EXPR" and base["type"]["canon"] == "CONSTANTARRAY":
            return self.index(base, whole=True)  # Ms[ty][tx]: "" or None
        r = base.get("ref") or {}
        rt = r.get("type") or {}
        if base["kind"] == "DECL_REF_EXPR":
            if r.get("kind") == "PARM_DECL" and rt.get("canon") == "POINTER" and \
                    arithmetic(rt.get("pointee", {})) and not rt["pointee"].get("volatile"):
                return ""
            if r.get("kind") == "VAR_DECL" and r.get("scope") in FUNCTION_SCOPES and \
                    r.get("attrs") == ["CUDASHARED_ATTR"] and numbers_array(rt):
                return ""
            if r.get("kind") == "VAR_DECL" and r.get("name") in self.objects and r.get("scope") not in \
                    FUNCTION_SCOPES and r.get("in_main") and whole:
                return r["name"]
        self.bad(n, "index", f"an index of {self.describe(base, r if r else None)}: a device region indexes "
                 "the kernel's pointer parameters and __shared__ arrays"
                 + "".join(f", {o}" for o in sorted(self.objects)))
        return None

    def assigned(self, n):
        """What an assignment or ++/-- changes: the function's locals and parameters, or an
        element of a parameter's buffer or a __shared__ array."""
        n = strip(n)
        r = n.get("ref") or {}
        if n["kind"] == "DECL_REF_EXPR" and (r.get("kind") == "PARM_DECL" or (
                r.get("kind") == "VAR_DECL" and r.get("scope") in FUNCTION_SCOPES and not r.get("attrs"))):
            return
        if n["kind"] == "ARRAY_SUBSCRIPT_EXPR":
            root = n
            while root["kind"] == "ARRAY_SUBSCRIPT_EXPR" and root["children"]:
                root = strip(root["children"][0])
            if (root.get("ref") or {}).get("name") not in self.objects:
                return  # index() checks what it indexes
        self.bad(n, "assignment", f"{self.describe(n)}: a device region changes only the function's numbers "
                 "and the elements of its buffers")

    def call(self, n):
        r = n.get("ref") or {}
        kids = n["children"]
        callee, args = (kids[0], kids[1:]) if kids else (None, [])
        name = r.get("name", "")
        listed = False
        if r.get("kind") == "CXX_METHOD" and "." + name in self.calls and callee is not None and \
                callee["kind"] == "MEMBER_REF_EXPR" and callee["children"]:
            base = strip(callee["children"][0])
            owner = self.index(base, whole=True) if base["kind"] == "ARRAY_SUBSCRIPT_EXPR" else None
            if owner is None or "." + name not in self.objects.get(owner, []):
                return self.bad(n, "call not allowed", f"'.{name}' of what is not a listed object")
            listed = True
        elif r.get("kind") == "FUNCTION_DECL" and callee is not None and self.is_callee(callee, n) and (
                r.get("qualified") == name and (  # a name of the global namespace, never std::max
                    (name in DEVICE_FUNCTIONS and not r.get("in_main"))
                    or (name in ATOMICS and name in self.calls and not r.get("in_main"))
                    or (name in self.calls and r.get("in_main")))):
            listed = name in self.calls
        else:
            return self.bad(n, "call not allowed", f"'{n['spelling'] or '?'}' (a device region calls "
                            + ", ".join(sorted(self.calls) + ["the usual device functions"]) + ")")
        for a in args:
            if arithmetic(a["type"]):
                self.expr(a)
            elif listed and self.address(a, atomic=name in ATOMICS):
                continue
            else:
                self.bad(a, "argument", f"{self.describe(a)} of type '{a['type']['spelling']}': a device "
                         "function gets numbers")

    def address(self, a, atomic):
        """&x of an arithmetic local the region declared, for a listed call of the course (its pointer
    parameter), or
        for a listed atomic &p[i] of a buffer's element."""
        a = strip(a)
        if a["kind"] != "UNARY_OPERATOR" or a.get("op") != "&" or not a["children"]:
            return False
        x = strip(a["children"][0])
        r = x.get("ref") or {}
        if atomic:
            if x["kind"] == "ARRAY_SUBSCRIPT_EXPR" and arithmetic(x["type"]):
                self.index(x)
                return True
            return False
        return x["kind"] == "DECL_REF_EXPR" and r.get("kind") == "VAR_DECL" and r.get("local") and \
            r.get("scope") in FUNCTION_SCOPES and not r.get("attrs") and arithmetic(r["type"]) and \
            not r["type"].get("volatile")


def own_body(program, region):
    """The course's own lines of the region (the baseline of a device region's check)."""
    return region_body(Path(program).read_text(), region, str(program))[0]


def check_region(program, body, first_line, spec, where, region, nvcc=None):
    """[message] for a device region, in lint.py's form (FILE:LINE: region R: rule: what).
    program: the course's copy of the region's program (its context, and, with its own region,
    the errors that are the context's); first_line: the student's line of the region's first line."""
    own = own_body(program, region)
    answer, baseline = region_ast.parse_many(program, [body, own], region, nvcc, device=True)
    problems = DeviceCheck(spec).region(answer, baseline)
    return region_ast.messages(program, region, problems, first_line, where)
