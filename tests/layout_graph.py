"""The shape of prdigest/ as a maintainer reads it: its import graph, its root, its name families.

Shared by the layout tests and bench/layout_figures.py, which prints the same figures.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import prdigest

PACKAGE = Path(prdigest.__file__).parent


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join([root.name, *parts[:-1]] if parts[-1] == "__init__" else [root.name, *parts])


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, own: str, is_package: bool) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in the tree, lazy ones inside functions included, those under
    ``if TYPE_CHECKING:`` left out (they are not run)."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            found += [i for child in node.orelse for i in _imports(child, own, is_package)]
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = own.split(".") if is_package else own.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, [alias.name for alias in node.names]))
        found += _imports(node, own, is_package)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from a import b`` names module a.b when a.b is a
    module, else a); a package's own __init__ is not counted for importing its submodules."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        arrows: set[str] = set()
        for module, names in _imports(tree, name, path.name == "__init__.py"):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in paths]
            if len(targets) < len(names) or not names:
                targets.append(module)
            arrows |= {t for t in targets if t in paths and t != name}
        graph[name] = arrows
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def root_modules(root: Path = PACKAGE) -> list[str]:
    """The modules directly in the package, its __init__ and __main__ aside."""
    return sorted(p.stem for p in root.glob("*.py") if p.stem not in {"__init__", "__main__"})


def prefix_families(root: Path = PACKAGE, least: int = 3) -> dict[str, int]:
    """``folder/prefix_`` -> how many modules of that folder share the prefix, for ``least`` or more."""
    families: Counter[str] = Counter()
    for path in root.rglob("*.py"):
        if "_" in path.stem.strip("_"):
            folder = path.parent.relative_to(root).as_posix()
            families[f"{folder}/{path.stem.split('_')[0]}_"] += 1
    return {name: n for name, n in sorted(families.items()) if n >= least}


def longest_modules(root: Path = PACKAGE) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in root.rglob("*.py")
    }
