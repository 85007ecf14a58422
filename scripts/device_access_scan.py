"""The C++ side of scripts/check-device-access: comments and literals blanked, tokens, bracket matches, the kind of each
block (namespace, class, functor, code, kernel or initializer) and the declarations `TYPE name` with their scopes.
Knows nothing of memory spaces: the script decides where a declaration lives."""
import re
from types import SimpleNamespace

KERNEL_FN = {"KOKKOS_INLINE_FUNCTION", "KOKKOS_FUNCTION", "KOKKOS_FORCEINLINE_FUNCTION"}
KERNEL_LAMBDA = {"KOKKOS_LAMBDA", "KOKKOS_CLASS_LAMBDA"}
QUAL = {"const", "static", "constexpr", "inline", "typename", "mutable", "volatile", "extern", "virtual", "explicit",
        "friend"} | KERNEL_FN
KEYWORDS = {"return", "else", "case", "throw", "new", "delete", "goto", "using", "namespace", "typedef", "template",
            "sizeof", "operator", "if", "for", "while", "switch", "do", "break", "continue", "public", "private",
            "protected", "struct", "class", "union", "enum", "this", "true", "false", "nullptr", "default", "decltype",
            "static_assert", "alignof", "noexcept"}
BUILTIN = {"bool", "char", "short", "int", "long", "unsigned", "signed", "float", "double", "void", "const"}
AFTER_PARAMS = {"const", "override", "noexcept", "mutable", "final"}
STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
TOKEN = re.compile(r'"[^"]*"|[A-Za-z_]\w*|\d[\w.]*|::|->|<<|&&|\|\||\S')


def strip(text):
    """Comments and literals blanked in place (offsets and lines kept; a string keeps its quotes)."""
    def blank(m):
        s, keep = m.group(0), re.sub(r"[^\n]", " ", m.group(0))
        return keep if s[0] == "/" else "0" + keep[1:] if s[0] == "'" else '"' + keep[2:] + '"'
    return STRIP.sub(blank, text)


def ident(t):
    return t[:1].isalpha() or t[:1] == "_"


class Unit:
    """One file's tokens, bracket matches, block kinds ('{' -> namespace, class, functor, code, kernel or init), and
    per token its innermost open bracket, innermost block and whether it is kernel code."""

    def __init__(self, path, text):
        self.path, self.text, self.src = path, text, strip(text)
        found = [(m.group(), m.start()) for m in TOKEN.finditer(self.src)]
        self.T = [t for t, _ in found] + [";"] * 4
        self.pos = [p for _, p in found] + [len(self.src)] * 4
        self.match, self.opener, stack = {}, [], []
        for i, t in enumerate(self.T):
            self.opener.append(stack[-1] if stack else None)
            if t in "({[":
                stack.append(i)
            elif t in ")}]" and stack:
                o = stack.pop()
                self.match[o], self.match[i] = i, o
        self.kinds = {o: self.block_kind(o) for o, t in enumerate(self.T) if t == "{" and o in self.match}
        self.block, self.kernel, blocks = [], [False] * len(self.T), []
        for i, t in enumerate(self.T):
            self.block.append(blocks[-1] if blocks else None)
            if self.kinds.get(i, "init") != "init":
                blocks.append(i)
                if self.kinds[i] in ("kernel", "functor"):
                    self.kernel[i:self.match[i] + 1] = [True] * (self.match[i] + 1 - i)
            elif t == "}" and blocks and blocks[-1] == self.match.get(i):
                blocks.pop()

    def head(self, i):
        """Index after the last ';', '{' or '}' before i."""
        while i > 0 and self.T[i - 1] not in ";{}":
            i -= 1
        return i

    def block_kind(self, o):
        T, p = self.T, o - 1
        while p > 0 and T[p] in AFTER_PARAMS:
            p -= 1
        if T[p] == ")" and p in self.match:
            q = self.match[p]
            return "kernel" if T[q - 1] in KERNEL_LAMBDA or KERNEL_FN & set(T[self.head(q):q]) else "code"
        if T[p] in ("else", "do", "try", "]"):
            return "code"
        decl = T[self.head(o):o]
        if "namespace" in decl:
            return "namespace"
        if {"struct", "class", "union"} & set(decl) and "enum" not in decl and "=" not in decl:
            body = T[o:self.match[o]]
            functor = KERNEL_FN & set(body) and any(body[k:k + 3] == ["operator", "(", ")"] for k in range(len(body)))
            return "functor" if functor else "class"
        return "init"

    def class_name(self, o):
        decl = self.T[self.head(o):o]
        k = max(i for i, t in enumerate(decl) if t in ("struct", "class", "union"))
        names = [t for t in decl[k + 1:decl.index(":", k) if ":" in decl[k:] else None] if ident(t) and t != "final"]
        return names[-1] if names else None

    def class_at(self, x):
        """The class whose members a bare name at x may name: the enclosing class, or C of C<...>::f(...) {...}."""
        b, top = self.block[x], None
        while b is not None and self.kinds[b] not in ("class", "functor"):
            top, b = b, self.block[b]
        if b is not None:
            return self.class_name(b)
        hd = self.T[self.head(top):top] if top is not None else []
        for k in range(1, len(hd) - 2):
            if hd[k] == "::" and ident(hd[k + 1]) and hd[k + 2] == "(":
                depth, j = 0, k - 1
                while j > 0 and (depth or hd[j] == ">"):
                    depth, j = depth + {">": 1, "<": -1}.get(hd[j], 0), j - 1
                return hd[j]
        return None

    def parse_type(self, j):
        """End of the (qualified, templated) type name at j, or None."""
        j += self.T[j] == "::"
        if not ident(self.T[j]) or self.T[j] in KEYWORDS:
            return None
        while j is not None:
            j = self.skip_angles(j + 1) if self.T[j + 1] == "<" else j + 1
            if j is None or self.T[j] != "::" or not ident(self.T[j + 1]):
                return j
            j += 1

    def skip_expr(self, k):
        """The next ',', ';' or closing bracket at the nesting level of k."""
        while self.T[k] not in (",", ";", ")", "}", "]"):
            angles = self.skip_angles(k) if self.T[k] == "<" and ident(self.T[k - 1]) else None
            k = self.match[k] + 1 if self.T[k] in "({[" and k in self.match else angles or k + 1
        return k

    def skip_angles(self, j):
        """Index after the '>' matching the '<' at j, or None when it is no template argument list."""
        depth = 0
        while j < len(self.T) - 4:
            t = self.T[j]
            if t in (";", "{", "}", "&&", "||") or (t == ")" and j not in self.match):
                return None
            j = self.match.get(j, j) + 1 if t == "(" else j + 1
            depth += {"<": 1, ">": -1}.get(t, 0)
            if depth == 0:
                return j
        return None


def parse_decls(u):
    """Declarations `TYPE name` (TYPE: auto, decltype(x) or a qualified, templated name) at statement and parameter
    starts, with multi-declarators `T a(x), b = y, c;` at block level."""
    T, out = u.T, []
    for i in range(len(T) - 4):
        prev = T[i - 1] if i else ";"
        if not (prev in (";", "{", "}", "(", ",") or (prev == ":" and T[i - 2] in ("public", "private", "protected"))
                or (prev == ">" and "template" in T[u.head(i):i])):
            continue
        j, init = i, None
        while T[j] in QUAL:
            j += 1
        t0 = j
        if T[j] == "auto":
            j += 1
        elif T[j] == "decltype" and T[j + 1] == "(":
            init, j = (j + 2, u.match[j + 1]), u.match[j + 1] + 1
        elif (j := u.parse_type(j)) is None:
            continue
        type_toks = T[t0:j]
        while T[j] in ("const", "&", "*", "&&", "volatile"):
            j += 1
        if not ident(T[j]) or T[j] in KEYWORDS or T[j + 1] not in (";", "=", "(", "{", ",", ")", "[", ":"):
            continue
        names, k = [j], j + 1
        while type_toks != ["auto"] and (u.opener[j] is None or T[u.opener[j]] == "{"):
            k = u.match[k] + 1 if T[k] in "({" else u.skip_expr(k) if T[k] == "=" else k
            if T[k] != "," or not ident(T[k + 1]) or T[k + 2] not in (",", ";", "(", "{", "="):
                break
            names.append(k + 1)
            k += 2
        out += [d for d in (make_decl(u, n, type_toks, init) for n in names) if d]
    return out


def make_decl(u, n, type_toks, init):
    T, o, blk = u.T, u.opener[n], u.block[n]
    if type_toks == ["auto"]:
        if T[n + 1] not in ("=", ":"):
            return None
        init = (n + 2, u.skip_expr(n + 2))
    local = blk is not None and u.kinds[blk] in ("code", "kernel")
    scope = (n, u.match[blk]) if local else None
    if o is not None and T[o] == "(":  # a parameter, a for-header variable or a call argument
        k = u.match[o] + 1
        while T[k] in AFTER_PARAMS:
            k += 1
        if T[k] == "{":
            scope = (n, u.match[k])
        elif not local:
            return None  # a prototype's parameter
    owner = u.class_name(blk) if scope is None and blk is not None and u.kinds[blk] != "namespace" else None
    # scope: a token range (None: a member or namespace-level name); res, kind: 'host'/'device'/None, 'view'/'obj'
    d = SimpleNamespace(unit=u, name=T[n], at=n, type=type_toks, init=init, scope=scope, owner=owner, res=None,
                        kind="obj", func=False)
    if T[n + 1] == "(" and scope is None:  # a member function, unless the arguments are expressions
        args, after = T[n + 2:u.match[n + 1]], T[u.match[n + 1] + 1]
        d.func = not args or after in AFTER_PARAMS | {"{", "->", "="} or any(
            ident(a) and (ident(b) or b in ("&", "*", "<")) for a, b in zip(args, args[1:]))
    return d
