"""The region lint: what a student may write between '// LAB <region> {' and '// LAB }'.

How it reads code. A lint that reads code differently from the compiler is a way around it: a
hand-written scanner was beaten by an alternative token before a call (`0 or f(x)` looked like a
declaration), by a '$' in a name (it moved where the scanner thought a character literal began,
so that code it took for a literal was compiled at file scope) and by a cast through a member's
address. So this lint does two things, and a test proves the first:
  1. It takes the region's preprocessing tokens exactly as nvcc's preprocessor (the host
     compiler's, GCC's cpp, for both the host and the device pass) forms them: the lexer below
     follows the C++17 rules as GCC implements them, maximal munch, with GNU '$' in names,
     pp-numbers with digit separators and '$', literal prefixes and user-defined suffixes,
     digraphs and the '<::' rule, the eleven alternative tokens as the operators they are.
  2. It accepts only regions whose reading cannot depend on a lexer's corner: bytes that could
     change the phases before tokenization are refused wherever they stand, inside comments and
     literals too ('#' and '%:' (directives, stringizing), '??' (trigraphs), a backslash at the
     end of a line (splices), '_Pragma', any byte that is not printable ASCII), and so are raw
     strings, user-defined literals, '$' in names, digraphs, alternative tokens, universal
     character names, malformed numbers and unterminated literals. What remains is a plain
     token stream on which the compilers agree.
tests/labs/test_lint_compiler.py is the proof: it feeds the lint and the compilers the same
regions (every trick above, and every region of the solutions and the cheats) and fails when,
for a region the lint accepts, the tokens differ from clang's lexer (clang -cc1
-dump-raw-tokens), or g++ (nvcc's host compiler) compiling the region as a function body
defines anything outside it, runs a static initializer, or calls a function the lint did not
see called. Why not libclang or the compiler at grade time: a grading machine has nvcc and g++
but may have neither clang nor a package manager, and compiling a student's region on the grader
before the fence would run the compiler on hostile input outside it; the differential test runs
where CI runs, on every change of this file.

Then, on those tokens, every region must
  - stay inside its function: brace, parenthesis and bracket depth never below zero, zero at
    the end (anything at file scope is refused);
  - hold none of the words that leave the function or the language: asm, static, extern, main,
    __attribute__, using, namespace, template, typedef, ... (BANNED);
  - use none of the region's "forbidden_names" (a schedule may not compute on the CPU);
  - in a host region, form no pointer and reach no memory by address: no unary '&' or '*', no
    cast (C-style, functional or static_cast) but to the region's "casts" in labs/labs.json.
    Names are not enough there: a ch06 schedule that names none of the data can still take a
    member's address, step past it to the buffer pointers and compute the answer on the CPU
    (tests/labs/cheats/measure_cheats.py). The OS could not fence that data instead: pinned
    host pages made mprotect(PROT_NONE) while the schedule runs are not reached by the CUDA
    driver's copies (measured on an H200: the first, a one-word cudaMemcpy from such a page,
    is a segmentation fault; docs/runs/h200/lab-measure/). Without '&', '*' and casts, the pointers a host region can
    still see (a vector's elements out of bounds, p.stream[k]) are values it cannot turn into
    data;
  - call only what its task needs: the region's "calls" in labs/labs.json, and for a device
    region the few device functions of DEVICE_CALLS (never printf, never a clock). A call
    through an expression ((f)(x), p[0](x)), a construction Name{...} of a name that is not on
    the list, a cast to a pointer type and a name qualified with '::' that is not on the list
    are refused too.
A violation is one line "FILE:LINE: region R: rule: what", and scores 0 for the region's task.

The tokens are the first half. Every region is then read by clang's front end and accepted by
whitelist, node by node, in its real context: a host region (kind "host") as the host pass reads
it (labs/grader/region_ast.py), a device region as CUDA device code (labs/grader/device_ast.py:
numbers, indexes of the kernel's buffers and __shared__ arrays, the usual device calls; no
pointer value, address, cast but between numbers, or asm). The token rules above guard the
phases before preprocessing, which clang's tree no longer shows, and the tree decides what the
code is. check_region() is the grader's entry: both, in that order.
"""
import re

from . import device_ast, region_ast

BANNED = {
    "asm": "inline assembly", "__asm": "inline assembly", "__asm__": "inline assembly",
    "static": "a static declaration", "extern": "an extern declaration",
    "main": "a main of its own", "__attribute__": "an __attribute__", "_Pragma": "a _Pragma",
    "__pragma": "a pragma", "__declspec": "a __declspec", "using": "a using declaration",
    "namespace": "a namespace", "template": "a template", "typedef": "a typedef",
    "thread_local": "a thread_local declaration", "operator": "an operator overload",
    "reinterpret_cast": "a reinterpret_cast", "const_cast": "a const_cast",
    "dynamic_cast": "a dynamic_cast", "bit_cast": "a bit_cast",
    "__global__": "a kernel declaration", "__device__": "a device declaration",
    "__host__": "a host declaration", "__constant__": "a constant declaration",
    "__managed__": "a managed declaration", "friend": "a friend declaration",
    "printf": "printf", "clock": "a clock read", "clock64": "a clock read",
    "__globaltimer": "a clock read", "globaltimer": "a clock read", "__nanosleep": "a sleep",
    "goto": "a goto", "volatile": "a volatile access", "register": "a register declaration",
    "co_await": "a coroutine", "co_yield": "a coroutine", "co_return": "a coroutine",
    "throw": "an exception", "try": "an exception", "catch": "an exception",
    "new": "an allocation", "delete": "a deallocation", "this": "this",
    "__COUNTER__": "a predefined macro", "__FILE__": "a predefined macro",
    "__LINE__": "a predefined macro", "__DATE__": "a predefined macro", "__TIME__": "a predefined macro",
    "__VA_ARGS__": "a macro parameter", "__VA_OPT__": "a macro parameter",
    "__has_include": "an include test", "__has_include_next": "an include test",
    "export": "a module declaration", "import": "a module import", "module": "a module declaration",
    "requires": "a constraint", "concept": "a concept", "alignas": "an alignment declaration",
    "__restrict__": "a restrict qualifier", "_Static_assert": "a static assertion",
    "static_assert": "a static assertion", "__extension__": "a GNU extension",
    "__int128": "a GNU type", "__label__": "a GNU label", "typeof": "a GNU typeof",
    "__typeof__": "a GNU typeof", "__auto_type": "a GNU type", "__real__": "a GNU operator",
    "__imag__": "a GNU operator", "__thread": "a thread-local declaration",
}
# The only __name__ a region may use (the implementation's macros, attributes and qualifiers,
# __FILE__, __CUDA_ARCH__, __launch_bounds__, ..., are refused).
RESERVED_ALLOWED = {"__shared__"}
# Words that look like calls but are not: statements, casts, sizeof.
STATEMENTS = {"if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "do",
              "else", "case", "static_cast", "noexcept"}
# Function-style casts and temporaries of plain types, float(x) or dim3(4, 4), are not calls.
TYPES = {"float", "double", "int", "unsigned", "long", "short", "char", "bool", "size_t", "dim3",
         "float2", "float4", "int2", "int4", "elem_t", "word_t", "signed", "const", "auto"}
NOT_CALLS = STATEMENTS | TYPES
# Keywords after which '(' or a name starts an expression: `return f(x)` calls f.
BEFORE_EXPRESSION = {"return", "else", "do", "case", "sizeof", "co_return", "co_yield", "throw",
                     "new", "delete", "alignof", "decltype", "noexcept", "co_await", "not",
                     "compl"}
DEVICE_CALLS = {"__syncthreads", "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                "__shfl_xor_sync", "min", "max", "fminf", "fmaxf", "fabsf", "sqrtf", "fmaf",
                "__fmaf_rn", "__fadd_rn", "__fmul_rn", "__ldg", "atomicAdd", "__float2int_rn",
                "__ballot_sync", "__any_sync", "__all_sync", "__activemask", "__popc",
                "__syncthreads_count", "__syncthreads_or", "__syncthreads_and"}
HOST_CALLS = {"min", "max", "std::min", "std::max", "ceil_div"}

# The lexer (C++17 [lex.pptoken], as GCC's cpp implements it).
ALTERNATIVE = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^",
               "compl": "~", "and_eq": "&=", "or_eq": "|=", "xor_eq": "^=", "not_eq": "!="}
DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]", "%:": "#", "%:%:": "##"}
PUNCTUATORS = sorted(
    ["%:%:", "<<=", ">>=", "...", "->*", "<=>", "::", "->", "++", "--", "<<", ">>", "<=", ">=",
     "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##",
     "<%", "%>", "<:", ":>", "%:"] + list("{}[]()#;:?.+-*/%^&|~!=<>,"), key=len, reverse=True)
STRING_PREFIXES = {"u8", "u", "U", "L"}
RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}
# The numbers a region may hold: decimal, hex, octal, binary and floating literals with the
# usual suffixes, digit separators only between digits.
NUMBER = re.compile(
    r"(?:0[xX][0-9a-fA-F](?:'?[0-9a-fA-F])*|0[bB][01](?:'?[01])*|[0-9](?:'?[0-9])*)"
    r"(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?\Z"
    r"|(?:[0-9](?:'?[0-9])*\.(?:[0-9](?:'?[0-9])*)?|\.[0-9](?:'?[0-9])*|[0-9](?:'?[0-9])*(?=[eE]))"
    r"(?:[eE][+-]?[0-9](?:'?[0-9])*)?[fFlL]?\Z")


def ident_char(c, first=False):
    return c.isascii() and (c.isalpha() or c == "_" or c == "$" or (not first and c.isdigit()))


class Token:
    __slots__ = ("kind", "text", "line", "spelling")

    def __init__(self, kind, text, line, spelling=None):
        # text: what the token means (an alternative token or a digraph as its operator);
        # spelling: how it is written (what the compiler's lexer shows)
        self.kind, self.text, self.line = kind, text, line
        self.spelling = text if spelling is None else spelling


def tokens(text, first_line):
    """(tokens, problems): the preprocessing tokens of a region as GCC forms them (phase 3),
    comments dropped; problems = [(line, rule, what)] for what the lint does not accept."""
    out, problems, i, line = [], [], 0, first_line
    n = len(text)

    def problem(rule, what, at=None):
        problems.append((line if at is None else at, rule, what))
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                problem("unterminated comment", "a /* comment that never ends")
                break
            line += text.count("\n", i, j)
            i = j + 2
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            # a pp-number: digits, letters, '_', '$', '.', digit separators, and a sign after
            # e, E, p or P; trailing separators are not part of it (GCC's lex_number)
            j = i + 1
            while j < n and (ident_char(text[j]) or (text[j] == "." and text[j - 1] != "'") or
                             text[j] == "'" or (text[j] in "+-" and text[j - 1] in "eEpP")):
                j += 1
            while j > i + 1 and text[j - 1] == "'":
                j -= 1
            word = text[i:j]
            out.append(Token("number", word, line))
            if not NUMBER.match(word):
                problem("number", f"'{word}' is not a plain number")
            i = j
        elif ident_char(c, first=True):
            j = i
            while j < n and ident_char(text[j]):
                j += 1
            word = text[i:j]
            if j < n and text[j] == '"' and word in RAW_PREFIXES:
                problem("raw string", "a raw string literal")
                break  # its end is wherever its delimiter says: nothing after it is read
            if j < n and (text[j] == '"' or (text[j] == "'" and word in STRING_PREFIXES)) and \
                    word in STRING_PREFIXES:
                i = literal(text, i, j, line, out, problem)
                if i is None:
                    break
                continue
            if "$" in word:
                problem("dollar in a name", f"'{word}': '$' is not part of a C++ name")
            if word in ALTERNATIVE:
                out.append(Token("punct", ALTERNATIVE[word], line, word))
                problem("alternative token", f"'{word}' stands for '{ALTERNATIVE[word]}': write that")
            else:
                out.append(Token("name", word, line))
            i = j
        elif c in "\"'":
            i = literal(text, i, i, line, out, problem)
            if i is None:
                break
        elif c == "\\":
            problem("universal character name", "a backslash outside a literal")
            break
        else:
            p = next((p for p in PUNCTUATORS if text.startswith(p, i)), c)
            if p == "<:" and text.startswith("<::", i) and not text.startswith(("<:::", "<::>"), i):
                p = "<"  # C++11: '<::' is '<' '::' unless ':' or '>' follows
            out.append(Token("punct", DIGRAPHS.get(p, p), line, p))
            if p in DIGRAPHS:
                problem("digraph", f"'{p}' stands for '{DIGRAPHS[p]}'")
            i += len(p)
    return out, problems


def literal(text, start, quote_at, line, out, problem):
    """A character or string literal whose quote is at quote_at (its prefix from start): the
    index after it, or None when it never ends on its line."""
    q, j, n = text[quote_at], quote_at + 1, len(text)
    while j < n and text[j] != q and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    if j >= n or text[j] != q:
        problem("unterminated literal", f"a {q} literal that never ends")
        return None
    j += 1
    k = j
    while k < n and ident_char(text[k]):
        k += 1
    if k > j:  # a user-defined literal: a call of an operator ""
        problem("user-defined literal", f"'{text[j:k]}' after a literal calls a literal operator")
    out.append(Token("literal", text[start:k], line))
    return k


def refused_bytes(body, first_line):
    """[(line, rule, what)]: what is refused wherever it stands, before any tokenizing (the
    phases of translation before tokens: trigraphs, splices, directives, pragmas)."""
    found = []
    for k, raw in enumerate(body):
        no = first_line + k
        if any(ord(ch) > 126 or (ord(ch) < 32 and ch != "\t") for ch in raw):
            found.append((no, "not plain text", "only printable ASCII may stand in a region"))
        if re.search(r"\\[ \t\f\v]*$", raw):
            found.append((no, "line splice", "a backslash at the end of a line joins it to the next"))
        if "??" in raw:
            found.append((no, "trigraph", "'??' (a trigraph may stand for another character)"))
        if "#" in raw or "%:" in raw:
            found.append((no, "preprocessor", "no '#' (no #include, #define or any other directive, "
                          "no stringizing), not even in a comment or a literal"))
        if "_Pragma" in raw or "__pragma" in raw:
            found.append((no, "forbidden word", "a _Pragma"))
    return found


def is_cast(toks, close):
    """True when the ')' at toks[close] ends a C-style cast to a plain type: (float)(x)."""
    if toks[close].text != ")":
        return False
    inner, j = [], close - 1
    while j >= 0 and toks[j].text != "(":
        inner.append(toks[j].text)
        j -= 1
    return j >= 0 and bool(inner) and all(w in TYPES or w in ("const", "*", "&") for w in inner)


def pointer_cast(toks, close):
    """True when the ')' at toks[close] ends a parenthesized type that ends in '*' or '&':
    (T*)x, (char *const *)y, (S&)z."""
    j, inner = close - 1, []
    while j >= 0 and toks[j].text != "(":
        inner.append(toks[j])
        j -= 1
    return (j >= 0 and len(inner) >= 2 and inner[0].text in ("*", "&", "&&") and
            all(t.kind == "name" or t.text in ("*", "&", "&&", "::") for t in inner))


def lint_region(body, first_line, spec, where, region):
    """[message] for one region: body is its lines, first_line the number of the first."""
    kind = spec.get("kind", "device")
    allowed = set(spec.get("calls", [])) | (DEVICE_CALLS if kind == "device" else HOST_CALLS)
    # a host region's listed macros and its objects' member calls (region_ast.py checks how)
    allowed |= set(spec.get("macros", {})) | {m for ms in spec.get("objects", {}).values() for m in ms
                                               if m.startswith(".")}
    found = []

    def bad(line, rule, what):
        found.append(f"{where}:{line}: region {region}: {rule}: {what}")

    early = refused_bytes(body, first_line)
    for line, rule, what in early:
        bad(line, rule, what)
    toks, problems = tokens("\n".join(body), first_line)
    for line, rule, what in problems:
        bad(line, rule, what)
    depth = {"{": 0, "(": 0, "[": 0}
    closer = {"}": "{", ")": "(", "]": "["}
    for idx, t in enumerate(toks):
        prev = toks[idx - 1] if idx else None
        nxt = toks[idx + 1] if idx + 1 < len(toks) else None
        if t.kind == "punct":
            if t.text in ("#", "##"):
                bad(t.line, "preprocessor", "no #include, #define or any other directive")
            elif t.text in depth:
                depth[t.text] += 1
            elif t.text in closer:
                depth[closer[t.text]] -= 1
                if depth[closer[t.text]] < 0:
                    bad(t.line, "leaves its function",
                        f"this '{t.spelling}' closes more than the region opened")
                    depth[closer[t.text]] = 0
                    if t.text == "}":
                        break  # what follows would be outside the function: stop here
                if t.text == ")" and pointer_cast(toks, idx):
                    bad(t.line, "pointer cast", "a cast to a pointer or reference type")
                if nxt is not None and nxt.text in ("(", "{") and not is_cast(toks, idx) and \
                        not (t.text == ")" and nxt.text == "{" and control_paren(toks, idx)):
                    bad(t.line, "call through an expression",
                        f"'{t.spelling}{nxt.spelling}' calls what an expression gives: call a "
                        "function by its name")
            elif t.text == "::":
                qual = (prev.text if prev is not None and prev.kind == "name" else "") + "::" + (
                    nxt.text if nxt is not None else "")
                if qual not in allowed:
                    bad(t.line, "qualified name", f"'{qual}' is not one of this region's names")
            if kind == "host" and t.text in ("&", "*") and unary(prev):
                bad(t.line, "address in a host region",
                    f"a unary '{t.spelling}': a host region takes no address and follows no pointer")
            if kind == "host" and t.text == "(" and host_cast(toks, idx, set(spec.get("casts", []))):
                bad(t.line, "cast in a host region",
                    "a cast (this region may cast to " + (", ".join(spec.get("casts", [])) or "nothing") + ")")
            if t.text == "<" and prev is not None and prev.text == "static_cast" and kind == "host" and \
                    not (idx + 2 < len(toks) and toks[idx + 1].text in spec.get("casts", []) and
                         toks[idx + 2].text == ">"):
                bad(t.line, "cast in a host region", "a static_cast")
            if t.text == "<" and prev is not None and prev.text == "static_cast":
                j = idx + 1
                while j < len(toks) and toks[j].text != ">":
                    if toks[j].text in ("*", "&", "&&"):
                        bad(t.line, "pointer cast", "a static_cast to a pointer or reference type")
                        break
                    j += 1
            continue
        if t.kind != "name":
            continue
        if t.text in BANNED or t.text.startswith("__builtin") or t.text.startswith("__asm") or \
                t.text.startswith("__sync_") or t.text.startswith("__atomic"):
            bad(t.line, "forbidden word", f"'{t.text}': {BANNED.get(t.text, 'a compiler builtin')}")
            continue
        if re.fullmatch(r"__\w+__", t.text) and t.text not in RESERVED_ALLOWED:
            bad(t.line, "forbidden word", f"'{t.text}': a name the implementation reserves (a "
                "predefined macro, an attribute, a qualifier)")
            continue
        if t.text in spec.get("forbidden_names", []):
            bad(t.line, "name not allowed", f"'{t.text}': this region schedules the GPU's work; "
                "it may not touch the data itself")
            continue
        if kind == "host" and t.text in TYPES and t.text not in ("const", "auto", "dim3") and \
                nxt is not None and nxt.text in ("(", "{") and not (prev is not None and prev.kind == "name"
                                                                  and prev.text not in BEFORE_EXPRESSION):
            bad(t.line, "cast in a host region", f"'{t.text}(...)' converts: a host region casts nothing")
            continue
        if t.text in NOT_CALLS:
            continue
        callee = None
        if nxt is not None and nxt.text in ("(", "{"):
            callee = t.text
        elif nxt is not None and nxt.text == "<":  # f<T>(...) or a comparison a < b
            j, level = idx + 1, 0
            while j < len(toks) and toks[j].text not in (";", "{", "}"):
                level += {"<": 1, ">": -1, ">>": -2}.get(toks[j].text, 0)
                if level <= 0:
                    break
                j += 1
            if level == 0 and j + 1 < len(toks) and toks[j + 1].text in ("(", "{"):
                callee = t.text
        if callee is None:
            continue
        if prev is not None and prev.kind == "name" and prev.text not in BEFORE_EXPRESSION and \
                prev.text not in STATEMENTS:
            continue  # a declaration with constructor arguments: `dim3 threads(4, 4)`
        name = callee
        if prev is not None and prev.text == "::" and idx >= 2:
            name = toks[idx - 2].text + "::" + callee
        if prev is not None and prev.text in (".", "->"):
            name = "." + callee  # a member function: '.data' in the list
        if name not in allowed and callee not in allowed:
            bad(t.line, "call not allowed",
                f"'{name.lstrip('.')}' (this region may call "
                + (", ".join(spec.get("calls", [])) or "nothing of its own")
                + (" and the usual device functions" if kind == "device" else " and min, max, ceil_div") + ")")
    for open_, count in depth.items():
        if count > 0:
            bad(first_line + len(body) - 1, "leaves its function",
                f"{count} '{open_}' opened in the region and never closed there")
    return found


def check_region(body, first_line, spec, where, region, program, nvcc=None):
    """[message] for one region as the grader checks it: the token rules, then, for a region
    whose tokens pass, the whitelist on clang's tree, the host's or the device's (program: the
    course's copy of the region's program, its context). region_ast.MissingClang when libclang
    is not installed."""
    found = lint_region(body, first_line, spec, where, region)
    if found:
        return found
    if spec.get("kind", "device") == "host":
        return region_ast.check_region(program, body, first_line, spec, where, region, nvcc)
    return device_ast.check_region(program, body, first_line, spec, where, region, nvcc)


def parse_requests(regions):
    """What region_ast.warm parses ahead of check_region for regions (program, body, first_line,
    spec, region): those whose tokens pass, and a device region's own lines in the course's
    program (its check reads them too)."""
    requests = []
    for program, body, first_line, spec, region in regions:
        if lint_region(body, first_line, spec, "", region):
            continue
        device = spec.get("kind", "device") != "host"
        requests.append((program, region, body, device))
        if device:
            requests.append((program, region, device_ast.own_body(program, region), True))
    return requests


OPERAND_END = {")", "]"}


def unary(prev):
    """True when a '&' or '*' after `prev` is a unary operator (address-of, dereference)."""
    if prev is None:
        return True
    if prev.kind in ("number", "literal") or prev.text in OPERAND_END:
        return False
    if prev.kind == "name":
        return prev.text in BEFORE_EXPRESSION
    return True  # after an operator, '(', ',', ';', '{', ...


def host_cast(toks, open_, casts):
    """True when the '(' at toks[open_] opens a C-style cast to a type that is not in `casts`:
    names only inside, then an operand ((unsigned long long)x, (Op)op)."""
    j, inner = open_ + 1, []
    while j < len(toks) and toks[j].text != ")":
        inner.append(toks[j])
        j += 1
    if j + 1 >= len(toks) or not inner:
        return False
    if not all(t.kind == "name" or t.text == "::" for t in inner):
        return False
    after = toks[j + 1]
    if not (after.kind in ("name", "number", "literal") or after.text in ("(", "!", "~")):
        return False
    if len(inner) == 1 and inner[0].text in casts:
        return False
    # `if (x) y = 1;`, `while (k) k--;`: a condition, not a cast
    before = toks[open_ - 1].text if open_ > 0 else ""
    return before not in ("if", "while", "switch", "for", "sizeof", "alignof", "decltype", "noexcept")


def control_paren(toks, close):
    """True when the ')' at toks[close] closes the condition of if, for, while or switch (its
    '{' opens a block, not a construction)."""
    level, j = 0, close
    while j >= 0:
        level += {")": 1, "(": -1}.get(toks[j].text, 0)
        if level == 0:
            break
        j -= 1
    return j > 0 and toks[j - 1].text in ("if", "for", "while", "switch", "catch")


def callees(toks):
    """The names the lint reads as called in a token list (for the differential test)."""
    out = set()
    for idx, t in enumerate(toks):
        prev = toks[idx - 1] if idx else None
        nxt = toks[idx + 1] if idx + 1 < len(toks) else None
        if t.kind == "name" and nxt is not None and nxt.text in ("(", "{") and t.text not in NOT_CALLS \
                and not (prev is not None and prev.kind == "name" and prev.text not in BEFORE_EXPRESSION
                         and prev.text not in STATEMENTS):
            out.add(t.text)
    return out
