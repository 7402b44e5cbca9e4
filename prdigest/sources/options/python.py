"""The options a Python file exposes, read with `ast` (never imported, never run): command-line flags
(argparse, click, typer), fields of config classes (dataclasses, pydantic models, attrs), environment
variables it reads, and the parameters with defaults of its public functions and classes.

Each option is a key and its default as written ("" when it has none): keys name the option the way a
user sets it, so an option that moves to another file is still the same one.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from functools import lru_cache

MAX_CHARS = 400_000  # a generated or vendored file: not read
# What any option needs in the text: a quoted flag, an environment read, a class, a signature's default.
_MAY_DEFINE = re.compile(r"""["']--[A-Za-z0-9]|environ|getenv|^[ \t]*class\s|\bdef\s+\w+\s*\([^)]*=""", re.M)
_MAY_READ = re.compile(r"""add_argument|option\(|Option\(|Argument\(|add_option|environ|getenv""")

_CONFIG_BASES = ("BaseModel", "BaseSettings", "Config", "Args", "Arguments", "Settings", "Options", "Params")
_CONFIG_DECORATORS = ("dataclass", "define", "frozen", "attrs", "s", "dataclasses.dataclass")
_OPTION_CALLS = ("add_argument", "option", "Option", "Argument", "add_option")
_ENV_CALLS = ("getenv", "get", "setdefault")


def python_options(text: str, public: bool = True) -> dict[str, str]:
    """``flag:--name``, ``field:Class.name``, ``env:NAME`` and (for a public module) ``param:func.name``
    keys with their defaults; {} for a file that does not parse or is too large or deep to read."""
    if len(text) > MAX_CHARS or not _MAY_DEFINE.search(text):
        return {}  # too large, or no flag, variable, class or default a parse could find
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, str] = {}
    # Flags and environment reads sit anywhere, so a file that names them is walked whole; the others
    # only where classes are defined.
    nodes = ast.walk(tree) if _MAY_READ.search(text) else _classes(tree)
    for node in nodes:
        if isinstance(node, ast.ClassDef) and _is_config(node):
            found.update(_fields(node))
        elif isinstance(node, ast.Call):
            found.update(_flag(node))
            found.update(_env(node))
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
            name = _text(node.slice)
            if name:
                found.setdefault(f"env:{name}", "")
    if public:
        found.update(_params(tree))
    return found


BIG_BLOCK = 4_000  # characters: a longer block is read by the statements of its body that were changed
MAX_NARROWING = 16  # indentation (spaces) past which a block is read whole


def touched_blocks(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """The top-level blocks (a class, a function with its decorators, a statement) that the 1-based line
    ``spans`` (first line, count; count 0: between lines) touch: a file is read where a commit changed it.
    Lines are split where a top-level statement starts; a block cut wrongly (text at column 0 inside a
    string) does not parse and exposes nothing. The text is cut by offsets, never split into lines (its
    files run to thousands of lines, and a commit touches a few)."""
    full = text + "\n"  # numbered as git numbers them: by "\n" alone, each line ending in one
    whole = _picked(full, _statement(0), (0, 0), (full.count("\n"), len(full)), spans)
    return ["".join(_narrowed(full, a, b, spans, 0)) for a, b in whole]


# A line of the text: its 0-based number and the offset it starts at.
Line = tuple[int, int]


def _narrowed(full: str, a: Line, b: Line, spans: list[tuple[int, int]], indent: int) -> list[str]:
    """A statement's text; a long one's header (decorators, signature) with the statements of its body
    that the spans touch, each narrowed the same way, then a ``pass`` that keeps it valid."""
    if b[1] - a[1] <= BIG_BLOCK or indent >= MAX_NARROWING:
        return [full[a[1] : b[1]]]
    head, (number, at) = b, a
    while at < b[1]:  # the header runs to the first line that ends with ":"
        after = full.index("\n", at, b[1]) + 1
        number, line = number + 1, full[at:after]
        at = after
        if line.rstrip().endswith(":"):
            head = (number, at)
            break
    inner = indent + 4
    body = _picked(full, _statement(inner), head, b, spans)
    narrowed = [piece for c, d in body for piece in _narrowed(full, c, d, spans, inner)]
    return [full[a[1] : head[1]], *narrowed, " " * inner + "pass\n"]


@lru_cache(maxsize=8)
def _statement(indent: int) -> re.Pattern[str]:
    """The line break before a line that starts a statement at this indentation (not one that continues
    the one before): a pattern that starts with a literal "\n" is searched for at C speed."""
    return re.compile(rf"\n {{{indent}}}(?!(?:else|elif|except|finally)\b)[A-Za-z_@]")


def _picked(
    full: str, start: re.Pattern[str], lo: Line, hi: Line, spans: list[tuple[int, int]]
) -> list[tuple[Line, Line]]:
    """The statements between lines ``lo`` and ``hi`` (split where ``start`` matches) that the spans
    touch."""
    starts, number, at = [lo], lo[0], lo[1]
    for m in start.finditer(full, lo[1], hi[1]):  # one regular expression over the lines, not one a line
        line = m.start() + 1
        number += full.count("\n", at, line)
        at = line
        if not full[full.rfind("\n", 0, line - 1) + 1 : line].lstrip().startswith("@"):  # a decorator's def
            starts.append((number, line))
    ends = [*starts[1:], hi]
    # The statements a span touches are a run of them: from the first that ends after it starts to the
    # last that starts before it ends (a file of thousands of statements, and a commit of many hunks).
    first_lines, last_lines = [s[0] for s in starts], [e[0] for e in ends]
    picked: set[int] = set()
    for first, count in spans:
        a, b = first - 1, first - 1 + max(count, 1)  # a pure insertion sits after line `first`
        picked.update(range(bisect_right(last_lines, a), bisect_left(first_lines, b)))
    return [(starts[i], ends[i]) for i in sorted(picked)]


def _classes(tree: ast.Module) -> list[ast.AST]:
    """The module's classes, nested in each other too, without walking function bodies."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            out.append(node)
            stack.extend(node.body)
    return out


def _name(node: ast.AST) -> str:
    """The last name of a dotted reference: ``dataclasses.dataclass`` -> "dataclass"."""
    if isinstance(node, ast.Call):
        return _name(node.func)
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _default(node: ast.AST | None) -> str:
    if node is None:
        return ""
    written = ast.unparse(node)
    return written if len(written) <= 80 else written[:77] + "..."


def _is_config(cls: ast.ClassDef) -> bool:
    """A class whose fields users set: a dataclass, an attrs class, a pydantic model, a *Config class."""
    if any(_name(d) in _CONFIG_DECORATORS for d in cls.decorator_list):
        return True
    return any(_name(b).endswith(_CONFIG_BASES) for b in cls.bases)


def _fields(cls: ast.ClassDef) -> dict[str, str]:
    out = {}
    for item in cls.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            name = item.target.id
            if not name.startswith("_") and "ClassVar" not in ast.unparse(item.annotation):
                out[f"field:{cls.name}.{name}"] = _field_default(item.value)
    return out


def _field_default(value: ast.AST | None) -> str:
    """A field's default: ``field(default=x)`` and ``Field(x)`` give x."""
    if isinstance(value, ast.Call) and _name(value) in ("field", "Field", "attrib", "ib"):
        for kw in value.keywords:
            if kw.arg in ("default", "default_factory"):
                return _default(kw.value)
        return _default(value.args[0]) if value.args else ""
    return _default(value)


def _flag(call: ast.Call) -> dict[str, str]:
    """``parser.add_argument("--lr", default=1e-3)``, ``@click.option("--lr", default=...)``,
    ``typer.Option(1e-3, "--lr")``."""
    if _name(call) not in _OPTION_CALLS:
        return {}
    flags = [s for a in call.args if (s := _text(a)) and s.startswith("--")]
    if not flags:
        return {}
    default = next((kw.value for kw in call.keywords if kw.arg == "default"), None)
    if (
        default is None
        and _name(call) in ("Option", "Argument")
        and call.args
        and _text(call.args[0]) is None
    ):
        default = call.args[0]  # typer: the default comes first
    return {f"flag:{flags[0]}": _default(default)}


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _env(call: ast.Call) -> dict[str, str]:
    """``os.environ.get("X", "1")``, ``os.getenv("X")``, ``os.environ.setdefault("X", "0")``."""
    func = call.func
    method = _name(call)
    if method not in _ENV_CALLS or not call.args:
        return {}
    reads_env = method == "getenv" or (isinstance(func, ast.Attribute) and _is_environ(func.value))
    name = _text(call.args[0])
    if not reads_env or not name:
        return {}
    default: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        default = kw.value if kw.arg == "default" else default
    return {f"env:{name}": _default(default)}


def _params(tree: ast.Module) -> dict[str, str]:
    """The parameters with defaults of the module's public functions and of its public classes'
    ``__init__``: the options callers pass by keyword."""
    out: dict[str, str] = {}

    def add(owner: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in pairs:
            if not arg.arg.startswith("_"):
                out[f"param:{owner}.{arg.arg}"] = _default(default)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
            add(node.name, node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    add(node.name, item)
    return out
