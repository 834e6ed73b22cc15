"""The house drawn from the imports: every module of src/vpnbench sits in a folder, and every folder
on one layer of the chart in docs/ARCHITECTURE.md, which names each folder (`hosts/`) on its layer's
row; only the entry points sit at the top. A module imports only from its own layer and those below
it, and neither the modules nor the rooms (the folders, and the few modules at the top) import one
another in a circle.

An import counts with what it runs: `import vpnbench.a.b` runs the package vpnbench.a's
__init__ too. An import inside a function runs later, when called; one that points up is allowed
only where LAZY_UP names it with the reason. A circle is a circle however its imports are made:
lazy, listed in LAZY_UP or under TYPE_CHECKING, each is an import (a registry that loaded its
built-in members lazily, while they imported it, once hid a circle of 36 files from a check that
left the listed ones out). Pure reading of the source (ast): nothing is imported."""

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "vpnbench"
# The entry points, and the package's own __init__ (vpnbench.load), are all that sits at the top.
MOST_AT_THE_TOP = 6


def chart() -> dict[str, str]:
    """docs/ARCHITECTURE.md's chart, top down: layer -> the text of its rows (a name in the first
    column starts a layer; the rows under it without one continue it)."""
    block = (SRC.parent / "docs" / "ARCHITECTURE.md").read_text().split("## Layers", 1)[1].split("```")[1]
    rows: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        if not line.strip() or line.strip().startswith("─"):
            continue
        name = line[:18].strip() or name
        rows[name] = rows.get(name, "") + line[18:] + "\n"
    return rows


FOLDERS = sorted(path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists())
AT_THE_TOP = sorted(path.stem for path in PACKAGE.glob("*.py") if path.name != "__init__.py")


def layers_of_the_chart() -> list[tuple[str, list[str]]]:
    """Bottom up: layer -> its rooms, read from the chart: the folders (`name/`) and the modules at
    the top (`name.py`) that its rows name; the package itself (its __init__) is the foundation's."""
    found = []
    for name, text in reversed(chart().items()):
        rooms = [f"vpnbench.{folder}" for folder in FOLDERS if re.search(rf"(?<![\w/.]){folder}/", text)]
        rooms += [f"vpnbench.{module}" for module in AT_THE_TOP if re.search(rf"(?<![\w/.]){module}\.py", text)]
        found.append((name, (["vpnbench"] if not found else []) + rooms))
    return found


LAYERS = layers_of_the_chart()

# Imports inside a function that point up, each with why it must (none of them closes a circle).
LAZY_UP = {
    ("vpnbench", "vpnbench.views.dataset"): "vpnbench.load, the public entry point, loads pandas only when called",
    ("vpnbench.run.rounds", "vpnbench.answers.quality"): "numpy and pandas only for adaptive runs",
}


def listed(module: str, target: str, lazy: bool) -> bool:
    """A lazy import LAZY_UP names (with the packages that import runs)."""
    return lazy and any(m == module and (t == target or t.startswith(target + ".")) for m, t in LAZY_UP)


def modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "vpnbench").rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = modules()


def room(module: str) -> str:
    """The LAYERS entry a module belongs to: the longest one that is it or a package above it."""
    entries = [entry for _, rooms in LAYERS for entry in rooms]
    return max((e for e in entries if module == e or module.startswith(e + ".")), key=len)


def layer(module: str) -> int:
    entry = room(module)
    return next(number for number, (_, rooms) in enumerate(LAYERS) if entry in rooms)


def imports(module: str, with_packages: bool = True) -> list[tuple[str, bool]]:
    """(imported vpnbench module, lazy) for every import in module, with the packages each one runs
    (with_packages), or only the module each one names."""
    tree = ast.parse(MODULES[module].read_text())
    found: list[tuple[str, bool]] = []

    def add(target: str, lazy: bool) -> None:
        parts = target.split(".")
        for end in range(1 if with_packages else len(parts), len(parts) + 1):  # vpnbench.a.b runs vpnbench.a first
            found.append((".".join(parts[:end]), lazy))

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "vpnbench":
                        add(alias.name, inner)
            elif isinstance(child, ast.ImportFrom) and child.module and child.module.split(".")[0] == "vpnbench":
                assert child.level == 0, f"{module}: relative import"
                for alias in child.names:  # `from vpnbench.a import b`: b may be a module of its own
                    submodule = f"{child.module}.{alias.name}"
                    add(submodule if submodule in MODULES else child.module, inner)
            visit(child, inner)

    visit(tree, False)
    return found


def test_every_module_sits_on_a_layer_of_the_chart():
    assert "vpnbench.testbeds.impair_backends" in MODULES
    assert layer("vpnbench.testbeds.impair_backends") > layer("vpnbench.impair.spec")
    for module in MODULES:
        room(module)  # raises when no entry covers it


def test_no_import_points_up_unless_listed_with_its_reason():
    up = []
    for module in MODULES:
        for target, lazy in imports(module):
            if layer(target) > layer(module) and not listed(module, target, lazy):
                up.append(f"{module} ({LAYERS[layer(module)][0]}) -> {target} ({LAYERS[layer(target)][0]})"
                          + (" inside a function" if lazy else ""))
    assert up == []


def test_the_listed_lazy_imports_exist():
    """A listed exception that no longer happens is taken off the list."""
    found = {(module, target) for module in MODULES for target, lazy in imports(module) if lazy}
    assert set(LAZY_UP) <= found


def circle(edges: dict[str, set[str]]) -> list[str]:
    """One circle of the graph (its nodes, the first again at the end), or [] where there is none."""
    state: dict[str, str] = {}
    path: list[str] = []

    def walk(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        path.pop()
        state[node] = "done"
        return []

    for node in sorted(edges):
        if node not in state and (found := walk(node)):
            return found
    return []


def import_graph(node) -> dict[str, set[str]]:
    """node(module) -> node(the module it imports), for every import as written (lazy ones,
    LAZY_UP's and TYPE_CHECKING's too; the packages an import runs on the way are no edge: a
    package's submodules may name one another through it). An import of the package root
    (`vpnbench.__version__`) is no edge either: every import has run the root before it starts, so
    naming it again can close no loop; the root's own lazy import (vpnbench.load) still counts."""
    edges: dict[str, set[str]] = {}
    for module in MODULES:
        for target, _ in imports(module, with_packages=False):
            if node(target) != node(module) and target != "vpnbench":
                edges.setdefault(node(module), set()).add(node(target))
    return edges


def test_the_modules_import_one_another_in_no_circle():
    found = circle(import_graph(lambda module: module))
    assert not found, "circle: " + " -> ".join(found)


def test_the_rooms_import_one_another_in_no_circle():
    found = circle(import_graph(room))
    assert not found, "circle: " + " -> ".join(found)


def test_a_lazy_import_closes_a_circle_too():
    """What hid a circle once: a lazy import, and one that LAZY_UP lists, still ties two modules."""
    assert circle({"registry": {"backends"}, "backends": {"registry"}}) == ["backends", "registry", "backends"]
    lazy = [(m, t) for m in MODULES for t, is_lazy in imports(m, with_packages=False) if is_lazy]
    graph = import_graph(lambda module: module)
    assert all(target in graph.get(module, ()) for module, target in lazy)


def test_every_folder_and_top_module_stands_on_exactly_one_layer_of_the_chart():
    named = [room for _, rooms in LAYERS for room in rooms]
    assert sorted(named) == sorted(["vpnbench"] + [f"vpnbench.{f}" for f in FOLDERS] + [f"vpnbench.{m}" for m in AT_THE_TOP])


def test_only_the_entry_points_sit_at_the_top():
    assert len(AT_THE_TOP) + 1 <= MOST_AT_THE_TOP, AT_THE_TOP  # + the package's __init__
    assert {f"vpnbench.{module}" for module in AT_THE_TOP} <= set(dict(LAYERS)["CLI"]), AT_THE_TOP


def test_the_readme_tree_names_every_folder_and_top_module():
    tree = (SRC.parent / "README.md").read_text().split("## Layout", 1)[1].split("```")[1]
    missing = [f"{f}/" for f in FOLDERS if not re.search(rf"^  {f}/", tree, re.M)]
    missing += [f"{m}.py" for m in AT_THE_TOP if not re.search(rf"^  {re.escape(m)}\.py", tree, re.M)]
    gone = [name for name in re.findall(r"^  ([\w.]+/|[\w.]+\.py)", tree, re.M)
            if not (PACKAGE / name.rstrip("/")).exists()]
    assert (missing, gone) == ([], [])
