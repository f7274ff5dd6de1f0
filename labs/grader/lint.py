"""The region lint: what a student may write between '// LAB <region> {' and '// LAB }'.

Before anything is built, every region of a submission is read as C++ tokens and must
  - stay inside its function: brace, parenthesis and bracket depth never below zero, zero at
    the end, every comment and literal closed;
  - hold no preprocessor line, no line splice (a backslash at the end of a line), no digraph,
    trigraph or raw string, only printable ASCII;
  - hold none of the words that leave the function or the language: asm, static, extern, main,
    __attribute__, _Pragma, using, namespace, template, typedef, ... (BANNED);
  - use none of the region's "forbidden_names" (a schedule may not compute on the CPU);
  - call only what its task needs: the region's "calls" in labs/labs.json, and for a device
    region the few device functions of DEVICE_CALLS (never printf, never a clock). A call
    through an expression ((f)(x), p[0](x)) and a name qualified with '::' that is not on the
    list are refused too.
A violation is one line "FILE:LINE: region R: rule: what", and scores 0 for the region's task.
"""
import re

BANNED = {
    "asm": "inline assembly", "__asm": "inline assembly", "__asm__": "inline assembly",
    "static": "a static declaration", "extern": "an extern declaration",
    "main": "a main of its own", "__attribute__": "an __attribute__", "_Pragma": "a _Pragma",
    "__pragma": "a pragma", "__declspec": "a __declspec", "using": "a using declaration",
    "namespace": "a namespace", "template": "a template", "typedef": "a typedef",
    "thread_local": "a thread_local declaration", "operator": "an operator overload",
    "reinterpret_cast": "a reinterpret_cast", "const_cast": "a const_cast",
    "__global__": "a kernel declaration", "__device__": "a device declaration",
    "__host__": "a host declaration", "__constant__": "a constant declaration",
    "__managed__": "a managed declaration", "friend": "a friend declaration",
    "printf": "printf", "clock": "a clock read", "clock64": "a clock read",
    "__globaltimer": "a clock read", "globaltimer": "a clock read", "__nanosleep": "a sleep",
    "goto": "a goto", "volatile": "a volatile access", "register": "a register declaration",
    "co_await": "a coroutine", "co_yield": "a coroutine", "co_return": "a coroutine",
    "throw": "an exception", "try": "an exception", "catch": "an exception",
    "new": "an allocation", "delete": "a deallocation", "this": "this",
}
# Words that look like calls but are not: statements, casts, sizeof.
STATEMENTS = {"if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "do",
              "else", "case", "static_cast", "noexcept"}
# Function-style casts and temporaries of plain types, float(x) or dim3(4, 4), are not calls.
TYPES = {"float", "double", "int", "unsigned", "long", "short", "char", "bool", "size_t", "dim3",
         "float2", "float4", "int2", "int4", "elem_t", "word_t"}
NOT_CALLS = STATEMENTS | TYPES
# A declaration's name follows its type: `dim3 threads(4, 4)` declares, it does not call.
BEFORE_EXPRESSION = {"return", "else", "do", "case", "sizeof", "co_return"}
DEVICE_CALLS = {"__syncthreads", "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                "__shfl_xor_sync", "min", "max", "fminf", "fmaxf", "fabsf", "sqrtf", "fmaf",
                "__fmaf_rn", "__fadd_rn", "__fmul_rn", "__ldg", "atomicAdd", "__float2int_rn",
                "__ballot_sync", "__any_sync", "__all_sync", "__activemask", "__popc",
                "__syncthreads_count", "__syncthreads_or", "__syncthreads_and"}
HOST_CALLS = {"min", "max", "std::min", "std::max", "ceil_div"}
DIGRAPHS = ("<%", "%>", "<:", ":>", "%:")
PUNCT3 = ("<<=", ">>=", "...", "->*", "<=>")
PUNCT2 = ("::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=",
          "/=", "%=", "&=", "|=", "^=", ".*") + DIGRAPHS


class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line


def tokens(text, first_line):
    """(tokens, problems): C++ tokens of a region; problems = [(line, rule, what)]."""
    out, problems, i, line = [], [], 0, first_line
    n = len(text)
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
                problems.append((line, "unterminated comment", "a /* comment that never ends"))
                break
            line += text.count("\n", i, j)
            i = j + 2
        elif c in "\"'":
            j, start = i + 1, line
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if j >= n or text[j] != c:
                problems.append((start, "unterminated literal", f"a {c} literal that never ends"))
                break
            out.append(Token("literal", text[i:j + 1], start))
            i = j + 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if j < n and text[j] in "\"'" and re.fullmatch(r"(u8|u|U|L)?R", word):
                problems.append((line, "raw string", "a raw string literal"))
            out.append(Token("name", word, line))
            i = j
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j = i
            while j < n and (text[j].isalnum() or text[j] in "._'" or
                             (text[j] in "+-" and text[j - 1] in "eEpP")):
                j += 1
            out.append(Token("number", text[i:j], line))
            i = j
        else:
            for p in PUNCT3 + PUNCT2 + (c,):
                if text.startswith(p, i):
                    out.append(Token("punct", p, line))
                    i += len(p)
                    break
    return out, problems


def is_cast(toks, close):
    """True when the ')' at toks[close] ends a C-style cast to a plain type: (float)(x)."""
    if toks[close].text != ")":
        return False
    inner, j = [], close - 1
    while j >= 0 and toks[j].text != "(":
        inner.append(toks[j].text)
        j -= 1
    return j >= 0 and bool(inner) and all(w in TYPES or w in ("const", "*", "&") for w in inner)


def lint_region(body, first_line, spec, where, region):
    """[message] for one region: body is its lines, first_line the number of the first."""
    kind = spec.get("kind", "device")
    allowed = set(spec.get("calls", [])) | (DEVICE_CALLS if kind == "device" else HOST_CALLS)
    found = []

    def bad(line, rule, what):
        found.append(f"{where}:{line}: region {region}: {rule}: {what}")

    for k, raw in enumerate(body):
        no = first_line + k
        if any(ord(ch) > 126 or (ord(ch) < 32 and ch != "\t") for ch in raw):
            bad(no, "not plain text", "only printable ASCII may stand in a region")
        if raw.rstrip().endswith("\\"):
            bad(no, "line splice", "a backslash at the end of a line joins it to the next")
        if re.search(r"\?\?[=/'()!<>\-]", raw):
            bad(no, "trigraph", "'??' followed by " + re.search(r"\?\?(.)", raw).group(1))
    toks, problems = tokens("\n".join(body), first_line)
    for line, rule, what in problems:
        bad(line, rule, what)
    depth = {"{": 0, "(": 0, "[": 0}
    closer = {"}": "{", ")": "(", "]": "["}
    for idx, t in enumerate(toks):
        prev = toks[idx - 1] if idx else None
        nxt = toks[idx + 1] if idx + 1 < len(toks) else None
        if t.kind == "punct":
            if t.text in ("#", "%:"):
                bad(t.line, "preprocessor", "no #include, #define or any other directive")
            elif t.text in DIGRAPHS:
                bad(t.line, "digraph", f"'{t.text}' stands for another token")
            elif t.text in depth:
                depth[t.text] += 1
            elif t.text in closer:
                depth[closer[t.text]] -= 1
                if depth[closer[t.text]] < 0:
                    bad(t.line, "leaves its function",
                        f"this '{t.text}' closes more than the region opened")
                    depth[closer[t.text]] = 0
                    if t.text == "}":
                        break  # what follows would be outside the function: stop here
                if nxt is not None and nxt.text == "(" and not is_cast(toks, idx):
                    bad(t.line, "call through an expression",
                        f"'{t.text}(' calls what an expression gives: call a function by its name")
            elif t.text == "::":
                qual = (prev.text if prev is not None and prev.kind == "name" else "") + "::" + (
                    nxt.text if nxt is not None else "")
                if qual not in allowed:
                    bad(t.line, "qualified name", f"'{qual}' is not one of this region's names")
            continue
        if t.kind != "name":
            continue
        if t.text in BANNED or t.text.startswith("__builtin") or t.text.startswith("__asm"):
            bad(t.line, "forbidden word", f"'{t.text}': {BANNED.get(t.text, 'a compiler builtin')}")
            continue
        if t.text in spec.get("forbidden_names", []):
            bad(t.line, "name not allowed", f"'{t.text}': this region schedules the GPU's work; "
                "it may not touch the data itself")
            continue
        if t.text in NOT_CALLS:
            continue
        callee = None
        if nxt is not None and nxt.text == "(":
            callee = t.text
        elif nxt is not None and nxt.text == "<":  # f<T>(...) or a comparison a < b
            j, level = idx + 1, 0
            while j < len(toks) and toks[j].text not in (";", "{", "}"):
                level += {"<": 1, ">": -1, ">>": -2}.get(toks[j].text, 0)
                if level <= 0:
                    break
                j += 1
            if level == 0 and j + 1 < len(toks) and toks[j + 1].text == "(":
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
