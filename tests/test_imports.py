"""The package's import graph has no cycles (issue 52): every ``import`` and ``from ... import`` of every module of
knapsack_gpu/ (and of the top-level kernels/ folder it installs as ``knapsack_gpu.kernels``), at the top of a module
or inside a function alike, read with ``ast``. A submodule that imports a name from its parent package
(``from . import solve_items`` in states/relax.py) depends on that package's ``__init__``: an edge to it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "knapsack_gpu"


def _modules() -> dict[str, Path]:
    """Dotted module name -> source file, for the package and the kernels/ folder mapped into it."""
    files = [p for p in (ROOT / PACKAGE).rglob("*.py") if "kernels" not in p.relative_to(ROOT / PACKAGE).parts[:1]]
    files += sorted((ROOT / "kernels").glob("*.py"))
    mods = {}
    for path in files:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[0] == "kernels":
            parts = [PACKAGE, *parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _targets(node: ast.ImportFrom | ast.Import, module: str, is_package: bool, mods: dict[str, Path]) -> list[str]:
    """The modules of ``mods`` one import statement in ``module`` depends on."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in mods]
    if node.level:  # relative: from the module's package, one level up per extra dot
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    subs = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in mods]
    # a name that is not a submodule comes from the source module itself (its __init__ for a package)
    out = subs if len(subs) == len(node.names) else [source, *subs]
    return [t for t in out if t in mods]


def import_graph(mods: dict[str, Path] | None = None) -> dict[str, set[str]]:
    mods = _modules() if mods is None else mods
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):  # (every statement, function bodies included)
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges[module].update(t for t in _targets(node, module, path.name == "__init__.py", mods) if t != module)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as the modules along it (the first repeated at the end), or None: a depth-first
    search that meets a module still on its path."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                return path[path.index(t) :] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_graph_sees_every_kind_of_import():
    """The reader itself, on a tiny package: a function-level import and a parent-package import are edges."""
    src = {
        "pkg": "from . import sub\n",
        "pkg.sub": "def f():\n    from . import g\n    from .other import h\n",
        "pkg.other": "import pkg.sub\n",
    }
    mods = {}
    for name, text in src.items():
        mods[name] = _Fake(text, "__init__.py" if name == "pkg" else name.split(".")[-1] + ".py")
    edges = import_graph(mods)
    assert edges == {"pkg": {"pkg.sub"}, "pkg.sub": {"pkg", "pkg.other"}, "pkg.other": {"pkg.sub"}}
    assert find_cycle(edges) in (["pkg", "pkg.sub", "pkg"], ["pkg.other", "pkg.sub", "pkg.other"])
    assert find_cycle({"a": {"b"}, "b": set()}) is None


class _Fake:
    def __init__(self, text: str, name: str):
        self.text, self.name = text, name

    def read_text(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.name


def test_the_package_has_no_import_cycles():
    edges = import_graph()
    assert "knapsack_gpu.states" in edges and "knapsack_gpu.kernels" in edges  # (the reader found the package)
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
