"""The house rules of ARCHITECTURE.md, checked on the source: layers, sizes, private names.

- model layers (everything but ``accelbook.ui`` and the command line, ``accelbook.cli``) never import ``ui``;
- no module imports another module's private (``_name``) names, or reaches into another module's
  or another class's private attributes (``other._helper``);
- notebooks use the public API only;
- no module over 500 lines; no function over 80 lines, except a Numba kernel whose docstring
  says why it is one function (a line starting ``Length:``); in the package and in ``benchmarks/``
  and ``tools/`` alike;
- no module indexes a vector by a named constant: no slot tuple (``A, B, C = range(3)``), no
  ``{name: i for i, name in enumerate(...)}`` position table, no ``x[X_NAME]`` with a prefix-style or
  integer constant as the index; kernels read and write named record fields (``training/records.py``);
  in the package, ``benchmarks/``, ``tools/`` and ``tests/``.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "accelbook"
SOURCES = sorted(PKG.rglob("*.py"))
#: the size rules hold for the scripts beside the package too
SIZED_SOURCES = SOURCES + sorted((ROOT / "benchmarks").rglob("*.py")) + sorted((ROOT / "tools").rglob("*.py"))
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# attributes that start with "_" but are public API of the standard library or NumPy; and torch._scaled_mm,
# PyTorch's only FP8 GEMM entry point (accelbook/measure/gpu.py times it where a GPU has FP8)
ALLOWED_PRIVATE_ATTRS = {"_replace", "_asdict", "_fields", "_make", "_scaled_mm"}


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def _module_name(p: Path) -> str:
    parts = list(p.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(p: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _module_name(p).split(".")
    if p.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_names(tree: ast.AST) -> set[str]:
    """Every name a module defines: functions, classes, assignments, attributes set on self."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
    return out


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_model_layers_never_import_ui(path):
    if path.relative_to(PKG).parts[0] in ("ui", "cli"):    # the front ends: notebooks' widgets, the command line
        return
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(path, node)
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        bad = [n for n in names if n == "accelbook.ui" or n.startswith("accelbook.ui.")]
        assert not bad, f"{_rel(path)}:{node.lineno} imports {bad[0]} (model layers never import ui)"


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_no_private_names_from_other_modules(path):
    tree = ast.parse(path.read_text())
    own = _defined_names(tree)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            problems += [f"line {node.lineno}: imports {a.name} from {_absolute(path, node)}"
                         for a in node.names if _is_private(a.name)]
        elif isinstance(node, ast.Attribute) and _is_private(node.attr) \
                and node.attr not in ALLOWED_PRIVATE_ATTRS and node.attr not in own:
            problems.append(f"line {node.lineno}: uses {ast.unparse(node)}, defined elsewhere")
    assert not problems, f"{_rel(path)}: " + "; ".join(problems)


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_use_public_api_only(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    problems = []
    for i, cell in enumerate(cells):
        src = "".join(cell["source"])
        code = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
        tree = ast.parse(code)
        own = _defined_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                problems += [f"cell {i}: imports {a.name}" for a in node.names if _is_private(a.name)]
                if node.module and any(_is_private(part) for part in node.module.split(".")):
                    problems.append(f"cell {i}: imports from {node.module}")
            elif isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in own \
                    and node.attr not in ALLOWED_PRIVATE_ATTRS:
                problems.append(f"cell {i}: uses {ast.unparse(node)}")
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.parametrize("path", SIZED_SOURCES, ids=_rel)
def test_module_size(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_MODULE_LINES, f"{_rel(path)} has {n} lines (at most {MAX_MODULE_LINES}): split it by job"


def _is_njit(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name) and target.id == "njit":
            return True
        if isinstance(target, ast.Attribute) and target.attr == "njit":
            return True
    return False


@pytest.mark.parametrize("path", SIZED_SOURCES, ids=_rel)
def test_function_size(path):
    tree = ast.parse(path.read_text())
    long = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = node.end_lineno - node.lineno + 1
        if n <= MAX_FUNCTION_LINES:
            continue
        doc = ast.get_docstring(node) or ""
        justified = _is_njit(node) and any(line.strip().startswith("Length:") for line in doc.splitlines())
        if not justified:
            long.append(f"{node.name} ({n} lines)")
    assert not long, (f"{_rel(path)}: functions over {MAX_FUNCTION_LINES} lines: {', '.join(long)} "
                      "(split them; a Numba kernel may stay long if its docstring has a 'Length:' line)")


def test_short_names_reach_the_sub_packages():
    """The call paths users already have keep working (issue 13): short names for the modules."""
    import accelbook
    from accelbook import collectives, exercises, serving, show, systolic, topology
    from accelbook.chip import systolic as chip_systolic
    from accelbook.inference import serving as inference_serving
    from accelbook.network import collectives as network_collectives
    from accelbook.network import topology as network_topology
    from accelbook.ui import dashboard
    from accelbook.ui import exercises as ui_exercises

    assert collectives is network_collectives and topology is network_topology
    assert systolic is chip_systolic and serving is inference_serving and exercises is ui_exercises
    assert show is dashboard.show
    for name in ("estimate", "sweep"):
        assert callable(getattr(collectives, name))
    assert callable(serving.simulate) and callable(systolic.simulate) and callable(exercises.check)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        accelbook.nonsense  # noqa: B018


def test_model_layers_import_without_ui():
    """Importing every model layer loads no ui module (and so no widgets or charts)."""
    import subprocess
    import sys

    code = ("import sys, accelbook, accelbook.training, accelbook.inference, accelbook.moe, "
            "accelbook.economics, accelbook.network.collectives, accelbook.chip.design, accelbook.sweep, "
            "accelbook.sweep.frontier, accelbook.sweep.serving_mc, accelbook.sweep.chip_design, "
            "accelbook.sweep.training_layouts; "
            "print(sorted(m for m in sys.modules if m.startswith('accelbook.ui')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the import graph: no circles, and sibling model layers apart ------------------------------------------------
# An edge A -> B is an import statement in module A that loads module B: ``import B``, ``from B import x``
# (B the module that defines x), ``from P import B`` (B a sub-module of P). Counted wherever the statement
# is, at module level or inside a function: a function-level import only postpones a circle to the first
# call (network.validation <-> network.collectives was one); the dependency is the same. Not counted:
# imports under ``if TYPE_CHECKING:`` (never run), the implicit import of a module's parent packages
# (every module would be in a circle with accelbook/__init__.py), and ``importlib.import_module`` by name
# (accelbook's short names, resolved on first attribute access, point down into the sub-packages).
MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
#: model layers that share mechanisms through a layer they all import (accelbook.costs, network, specs),
#: never through one another's modules
SIBLING_LAYERS = ("accelbook.training", "accelbook.moe", "accelbook.inference")


def _defining_module(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _import_nodes(tree: ast.AST):
    """Every Import/ImportFrom node, except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack += node.orelse
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack += ast.iter_child_nodes(node)


def _imports(path: Path) -> dict[str, int]:
    """The accelbook modules ``path`` imports -> the first line that does."""
    out: dict[str, int] = {}
    for node in _import_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(path, node)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else _defining_module(base)
                       for a in node.names]
        else:
            targets = [_defining_module(a.name) for a in node.names]
        for t in targets:
            if t is not None:
                out[t] = min(out.get(t, node.lineno), node.lineno)
    return out


def import_graph() -> dict[str, dict[str, int]]:
    """accelbook's modules -> {module it imports: line}."""
    return {m: {t: line for t, line in _imports(p).items() if t != m} for m, p in MODULES.items()}


def circles(graph: dict[str, dict]) -> list[list[str]]:
    """Each circle of ``graph`` (node -> nodes it points to) as a path ``[a, b, ..., a]``: one per
    strongly connected component of more than one node (Tarjan's algorithm), starting at its smallest
    node and following a shortest way back to it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in components:
        start = min(comp)
        back = {start: None}
        frontier = [start]
        while start not in [w for v in frontier for w in graph.get(v, ()) if w in comp] and frontier:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, ())):
                    if w in comp and w not in back:
                        back[w] = v
                        nxt.append(w)
            frontier = nxt
        last = next(v for v in frontier if start in graph.get(v, ()))
        path = [start]                      # walk back from the node that closes the circle
        while last is not None:
            path.insert(0, last)
            last = back[last]
        out.append(path)
    return sorted(out)


def _shown(path: list[str], graph: dict[str, dict]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}"


def test_circle_finder_on_a_small_graph():
    g = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}, "e": {"a": 5}}
    assert circles(g) == [["a", "b", "c", "a"]]
    assert _shown(["a", "b", "c", "a"], g) == "a (line 1) -> b (line 2) -> c (line 3) -> a"
    assert circles({"a": {"b": 1}, "b": {"a": 1}, "x": {"y": 1}, "y": {"z": 1}, "z": {"x": 1}}) == \
        [["a", "b", "a"], ["x", "y", "z", "x"]]
    assert circles({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []
    # a shortest way round is named, not the first one the search finds
    assert circles({"a": {"b": 1, "c": 1}, "b": {"c": 1}, "c": {"a": 1}}) == [["a", "c", "a"]]


def test_import_graph_is_read_from_the_source():
    g = import_graph()
    assert "accelbook.specs.loader" in g["accelbook.specs.chips"]                 # from .loader import ...
    assert "accelbook.specs.chips" in g["accelbook"]                             # from .specs.chips import ...
    assert "accelbook.checks" in g["accelbook.specs.chips"]                      # from accelbook.checks import ...


def test_no_module_import_circle():
    g = import_graph()
    found = circles(g)
    assert not found, "import circles:\n" + "\n".join(_shown(c, g) for c in found)


def _layer(module: str) -> str:
    """``accelbook.network.paths`` -> ``accelbook.network``; top-level modules are their own layer."""
    return ".".join(module.split(".")[:2])


def test_no_circle_between_sub_packages():
    """Layers import one way: no sub-package imports one that (through any module) imports it back."""
    g = import_graph()
    layers: dict[str, dict[str, int]] = {}
    example: dict[tuple[str, str], str] = {}
    for m, targets in g.items():
        for t, line in targets.items():
            a, b = _layer(m), _layer(t)
            if a != b:
                layers.setdefault(a, {}).setdefault(b, line)
                example.setdefault((a, b), f"{m}:{line} imports {t}")
    found = circles(layers)
    assert not found, "sub-package circles:\n" + "\n".join(
        " -> ".join(c) + " (" + "; ".join(example[a, b] for a, b in zip(c, c[1:])) + ")" for c in found)


@pytest.mark.parametrize("path", [p for p in sorted(PKG.rglob("*.py")) if _layer(_module_name(p)) in SIBLING_LAYERS],
                         ids=_rel)
def test_sibling_model_layers_never_import_each_other(path):
    own = _layer(_module_name(path))
    bad = [f"line {line}: imports {t}" for t, line in sorted(_imports(path).items(), key=lambda kv: kv[1])
           if _layer(t) in SIBLING_LAYERS and _layer(t) != own]
    assert not bad, f"{_rel(path)} ({own}) imports another model layer's modules: " + "; ".join(bad) + \
        " (share the mechanism through a layer both import)"


#: a slot constant's look: a short upper-case prefix, an underscore, upper-case (``M_D``, ``CFG_TP``, ``R_FITS``)
SLOT_NAME = re.compile(r"^[A-Z][A-Z0-9]{0,3}_[A-Z0-9_]+$")
INDEXED_SOURCES = SIZED_SOURCES + sorted(p for p in (ROOT / "tests").rglob("*.py"))


def _is_range(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


def _is_position_table(node: ast.AST) -> bool:
    """``{name: i for i, name in enumerate(...)}``, bare or wrapped in a call (``MappingProxyType(...)``)."""
    if isinstance(node, ast.Call) and len(node.args) == 1:
        node = node.args[0]
    if not isinstance(node, ast.DictComp) or len(node.generators) != 1:
        return False
    gen = node.generators[0]
    return (isinstance(gen.iter, ast.Call) and isinstance(gen.iter.func, ast.Name) and gen.iter.func.id == "enumerate"
            and isinstance(gen.target, ast.Tuple) and isinstance(node.value, ast.Name)
            and isinstance(gen.target.elts[0], ast.Name) and node.value.id == gen.target.elts[0].id)


def slot_problems(source: str) -> list[str]:
    """Where ``source`` indexes by position through a named constant (the rule above), one line each."""
    tree = ast.parse(source)
    problems, int_constants = [], set()
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if _is_range(node.value):
            problems.append(f"line {node.lineno}: a slot tuple, {ast.unparse(targets[0])[:60]} = range(...)")
        if _is_position_table(node.value):
            problems.append(f"line {node.lineno}: a position table, {ast.unparse(targets[0])} = {{name: i ...}}")
        if isinstance(node.value, ast.Constant) and type(node.value.value) is int:
            int_constants |= {t.id for t in targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        for e in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
            name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None
            if name is not None and (SLOT_NAME.match(name) or name in int_constants):
                problems.append(f"line {node.lineno}: {ast.unparse(node)} indexes by the constant {name}")
    return problems


def test_slot_rule_catches_slot_vectors():
    """The rule finds each form of the old slot vectors, and passes named record fields."""
    old = """
from types import MappingProxyType
(M_L, M_D, M_NVEC) = range(3)
O_TP_OVERLAP, O_CP = range(len(FIELDS))
R = MappingProxyType({name: i for i, name in enumerate(FIELDS)})
N_PASSES = 4
def f(mv, out, d, slots):
    out[R_MFU] = mv[M_D] * d[N_PASSES] + mv[slots.M_ATT] + mv[0, C_PEAK]
"""
    found = slot_problems(old)
    assert len(found) == 8, found
    assert not slot_problems("def f(mv, out, t):\n    out.mfu = mv.d_model * t[DEFAULT_PEAK_NAME]\n")


@pytest.mark.parametrize("path", INDEXED_SOURCES, ids=_rel)
def test_no_vector_indexed_by_a_constant(path):
    problems = slot_problems(path.read_text())
    assert not problems, f"{_rel(path)}: " + "; ".join(problems) + \
        " (name the fields: a structured record read by field name, training/records.py)"
