"""The parse of one region (host or device) by clang's front end (libclang), in a process of its own.

    python3 clang_child.py BYTES SECONDS < REQUEST_JSON  ->  the region's tree as JSON on stdout

labs/grader/region_ast.py starts it with a time and memory limit, which it sets on itself before
it reads a line of the request (so that its parent need not run code between fork and exec, and
may start several from threads): libclang only parses (no code is generated or run), but a
crafted region must not hang or exhaust the grader. It judges
nothing: it writes down what clang built for the region's lines (every node, its kind, its type,
what it names, its operator, where it was spelled) and region_ast.py holds the whitelist.

REQUEST: {"main": path of the program, "unsaved": {path: text} (headers as parsed), "args":
[...] (clang's flags), "jobs": [{"text": the program with a region spliced in, "first"/"last":
the region's lines in "text" (1-based, inclusive)}, ...]} (several regions in one program: the
first parse's preamble, the #includes, serves the next ones).
ANSWER: a list, per job {"errors": [diagnostic, ...], "roots": [node, ...], "macros": [[name,
line, span], ...], "loose": [token, ...] (tokens of the region that no node covers)}.
"""
import ctypes
import json
import resource
import sys

if __name__ == "__main__":  # the limits first, before libclang is loaded or a region read
    _bytes, _seconds = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (_bytes, _bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (_seconds, _seconds))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

try:
    from clang import cindex as ci
except ImportError as e:  # region_ast.py checks first; this is the message if it did not
    print(json.dumps({"missing": str(e)}))
    sys.exit(3)

# CXTranslationUnit_LimitSkipFunctionBodiesToPreamble: with PARSE_SKIP_FUNCTION_BODIES, the bodies
# of the functions in the preamble (the headers the program #includes before its first line of
# code: the toolkit's, the course's) are skipped, and the program's own, the region's function
# among them, are parsed whole. Every declaration stays, so what a region's nodes name and their
# types are as before; what goes is the work of instantiating the headers' templates, which was
# most of a reparse: 0.16 to 0.24 s a region, 0.025 with the flag (VA-GPU-NN's device region, on
# a 2-core machine). The regions of the lint's catalogues, solutions and cheats (348) got the same
# verdicts both ways; their answers differ only in errors inside CUB's headers (Dot-SM-Warp's
# context, which device_ast.py compares with its own region's) and in where clang declares a
# builtin a region calls first (__builtin_memcpy: in the program, not before it).
SKIP_ONLY_IN_PREAMBLE = 0x800

INTEGER_TYPES = {"BOOL", "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG",
                 "ULONGLONG", "CHAR_S", "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG"}


def lib_fn(name, args, res):
    f = getattr(ci.conf.lib, name)
    f.argtypes, f.restype = args, res
    return f


def text(x):
    return x if isinstance(x, str) else ci._CXString.from_result(x)


def main():
    req = json.load(sys.stdin)
    binop = lib_fn("clang_getCursorBinaryOperatorKind", [ci.Cursor], ctypes.c_int)
    binop_name = lib_fn("clang_getBinaryOperatorKindSpelling", [ctypes.c_int], ci._CXString)
    unop = lib_fn("clang_getCursorUnaryOperatorKind", [ci.Cursor], ctypes.c_int)
    unop_name = lib_fn("clang_getUnaryOperatorKindSpelling", [ctypes.c_int], ci._CXString)
    main_path = req["main"]
    index, tu, answers = ci.Index.create(), None, []
    for job in req["jobs"]:
        unsaved = [(main_path, job["text"])] + list(req.get("unsaved", {}).items())
        if tu is None:  # the first: its preamble (the #includes) kept for the next ones
            tu = index.parse(main_path, args=req["args"], unsaved_files=unsaved,
                             options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
                             | ci.TranslationUnit.PARSE_PRECOMPILED_PREAMBLE | 0x100
                             | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | SKIP_ONLY_IN_PREAMBLE)
        else:
            tu.reparse(unsaved_files=unsaved)
        answers.append(region(tu, main_path, job, binop, binop_name, unop, unop_name))
    print(json.dumps(answers))


# The file a location is in, by name, as SourceLocation.file.name gives it (the same call,
# clang_getInstantiationLocation, then clang_getFileName), with each file's name looked up once:
# the translation unit's top level has some 20,000 cursors (the toolkit's declarations, and its
# macros' definitions and expansions, which the detailed preprocessing record keeps), and for
# each, the binding's location, file and name objects were most of a region's time. The names
# are kept for one parse only.
_raw = None
_names = {}
MACRO_DEFINITION = ci.CursorKind.MACRO_DEFINITION.value
MACRO_INSTANTIATION = ci.CursorKind.MACRO_INSTANTIATION.value
INCLUSION_DIRECTIVE = ci.CursorKind.INCLUSION_DIRECTIVE.value


def file_name(loc):
    global _raw
    if _raw is None:
        _raw = ctypes.CDLL(ci.conf.get_filename())  # its own function objects: the binding's keep theirs
        _raw.clang_getInstantiationLocation.argtypes = [ci.SourceLocation, ctypes.POINTER(ctypes.c_void_p),
                                                         ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        _raw.clang_getInstantiationLocation.restype = None
        _raw.clang_getFileName.argtypes = [ctypes.c_void_p]
        _raw.clang_getFileName.restype = ci._CXString
    f = ctypes.c_void_p()
    _raw.clang_getInstantiationLocation(loc, ctypes.byref(f), None, None, None)
    if not f.value:
        return None
    name = _names.get(f.value)
    if name is None:
        name = _names[f.value] = ci._CXString.from_result(_raw.clang_getFileName(f.value))
    return name


def kept_children(cur, keep):
    """The children of CUR that KEEP accepts, in order: the binding's get_children(), less its
    work for every child (a null check, a reference kept on each), and KEEP asked inside the
    visit. The translation unit's top level has some 20,000 cursors, of which collect() keeps a
    handful (the main file's): the walk over them was half of a region's time."""
    kept = []

    def visit(child, parent, data):
        if keep(child):
            child._tu = cur._tu  # (the translation unit outlives the cursors kept)
            kept.append(child)
        return 1  # CXChildVisit_Continue

    ci.conf.lib.clang_visitChildren(cur, ci.callbacks["cursor_visit"](visit), kept)
    return kept


def region(tu, main_path, job, binop, binop_name, unop, unop_name):
    first, last = job["first"], job["last"]
    _names.clear()  # (a reparse may free a file's entry and give its address to another file)
    cursor_location = lib_fn("clang_getCursorLocation", [ci.Cursor], ci.SourceLocation)
    cursor_extent = lib_fn("clang_getCursorExtent", [ci.Cursor], ci.SourceRange)
    range_start = lib_fn("clang_getRangeStart", [ci.SourceRange], ci.SourceLocation)

    def main_file(cur):
        """Whether a cursor's location or its extent's start is in the main file (by name): collect()
        keeps no other (a macro's expansion only where its location is in the region)."""
        return (file_name(cursor_location(cur)) == main_path
                or file_name(range_start(cursor_extent(cur))) == main_path)

    def wanted(cur):
        """main_file, less the cursors that collect() would drop whatever it found: a macro's
        definition or an #include (never kept), a macro's expansion whose location is not in the
        main file (kept only in the region). Of the top level's some 22,000 cursors (a device
        region of MM-GPU-SM), 15,700 are expansions and 5,400 definitions or #includes, nearly all
        in the toolkit's headers: each is now one call into libclang or none, not two."""
        k = cur._kind_id  # (CursorKind's number, read without a call)
        if k == MACRO_DEFINITION or k == INCLUSION_DIRECTIVE:
            return False
        if k == MACRO_INSTANTIATION:
            return file_name(cursor_location(cur)) == main_path
        return main_file(cur)

    def in_main(loc):
        return loc.file is not None and loc.file.name == main_path

    def in_region(loc):
        return in_main(loc) and first <= loc.line <= last

    def qualified(c):
        parts = []
        while c is not None and c.kind not in (ci.CursorKind.TRANSLATION_UNIT,):
            if c.spelling:
                parts.append(c.spelling)
            c = c.semantic_parent
        return "::".join(reversed(parts))

    def typeinfo(t, depth=0):
        canon = t.get_canonical()
        out = {"kind": t.kind.name, "canon": canon.kind.name, "spelling": t.spelling,
               "canon_spelling": canon.spelling, "volatile": canon.is_volatile_qualified(),
               "const": canon.is_const_qualified()}
        if depth < 4 and canon.kind in (ci.TypeKind.POINTER, ci.TypeKind.LVALUEREFERENCE,
                                        ci.TypeKind.RVALUEREFERENCE):
            out["pointee"] = typeinfo(canon.get_pointee(), depth + 1)
        elif depth < 4 and canon.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
                                          ci.TypeKind.VARIABLEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
            out["element"] = typeinfo(canon.element_type, depth + 1)
        return out

    def node(cur):
        k = cur.kind
        loc = cur.location
        ext = cur.extent
        out = {"kind": k.name, "line": cur.location.line, "spelling": cur.spelling,
               "span": [ext.start.offset, ext.end.offset], "col": cur.location.column,
               "type": typeinfo(cur.type),
               "here": in_region(loc),
               "children": [node(ch) for ch in cur.get_children()]}
        if k in (ci.CursorKind.BINARY_OPERATOR, ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR):
            out["op"] = text(binop_name(binop(cur)))
        elif k == ci.CursorKind.UNARY_OPERATOR:
            out["op"] = text(unop_name(unop(cur)))
        if k == ci.CursorKind.VAR_DECL:
            out["storage"] = cur.storage_class.name
            out["tls"] = cur.tls_kind.name if hasattr(cur, "tls_kind") else "NONE"
        if k.is_reference() or k in (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.MEMBER_REF_EXPR,
                                     ci.CursorKind.CALL_EXPR):
            ref = cur.referenced
            if ref is not None:
                parent = ref.semantic_parent
                out["ref"] = {"kind": ref.kind.name, "name": ref.spelling, "qualified": qualified(ref),
                              "type": typeinfo(ref.type), "local": in_region(ref.location),
                              "in_main": in_main(ref.location),
                              "scope": parent.kind.name if parent is not None else "NONE"}
                if ref.kind == ci.CursorKind.VAR_DECL:
                    out["ref"]["storage"] = ref.storage_class.name
                    out["ref"]["attrs"] = [a.kind.name for a in ref.get_children() if a.kind.is_attribute()]
        return out

    errors = [f"{d.location.file.name if d.location.file else ''}:{d.location.line}: {d.spelling}"
              for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    roots, macros, spans = [], [], []

    def collect(cur):
        for ch in kept_children(cur, wanted):  # (a header's: nothing below would keep it)
            if not in_main(ch.location) and ch.kind != ci.CursorKind.MACRO_INSTANTIATION:
                ext = ch.extent
                if not (ext.start.file and ext.start.file.name == main_path):
                    continue
            if ch.kind == ci.CursorKind.MACRO_INSTANTIATION:
                if in_region(ch.location):
                    macros.append([ch.spelling, ch.location.line, [ch.extent.start.offset, ch.extent.end.offset]])
                continue
            if ch.kind in (ci.CursorKind.MACRO_DEFINITION, ci.CursorKind.INCLUSION_DIRECTIVE):
                continue
            s, e = ch.extent.start, ch.extent.end
            if not (s.file and s.file.name == main_path):
                continue
            if first <= s.line and e.line <= last:
                roots.append(node(ch))
                spans.append((s.offset, e.offset))
            elif s.line <= last and e.line >= first:
                collect(ch)  # a node around the region (the function, its block): look inside
    collect(tu.cursor)
    loose = []
    lines = job["text"].split("\n")
    begin = sum(len(l) + 1 for l in lines[:first - 1])
    end = sum(len(l) + 1 for l in lines[:last])
    region = tu.get_extent(main_path, (begin, end))
    for t in tu.get_tokens(extent=region):
        if t.kind == ci.TokenKind.COMMENT:
            continue
        off = t.extent.start.offset
        if not (begin <= off < end) or t.spelling == ";":
            continue
        if not any(a <= off < b for a, b in spans):
            loose.append([t.spelling, t.location.line])
    return {"errors": errors, "roots": roots, "macros": macros, "loose": loose}


if __name__ == "__main__":
    main()
