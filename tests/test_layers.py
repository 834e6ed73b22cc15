"""The house drawn from the imports: every module of src/vpnbench sits on one layer of the chart in
docs/ARCHITECTURE.md (LAYERS mirrors it), imports only from its own layer and those below it, and
neither the modules nor the rooms (LAYERS' entries) import one another in a circle.

An import counts with what it runs: `import vpnbench.a.b` runs the package vpnbench.a's
__init__ too. An import inside a function runs later, when called; one that points up is allowed
only where LAZY_UP names it with the reason. A circle is a circle however its imports are made:
lazy, listed in LAZY_UP or under TYPE_CHECKING, each is an import (a registry that loaded its
built-in members lazily, while they imported it, once hid a circle of 36 files from a check that
left the listed ones out). Pure reading of the source (ast): nothing is imported."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# docs/ARCHITECTURE.md's chart, bottom up: layer -> its rooms (a module, or a package standing for
# every module under it that no longer entry names).
LAYERS: list[tuple[str, list[str]]] = [
    ("foundation", ["vpnbench", "vpnbench.errors", "vpnbench.params", "vpnbench.units", "vpnbench.resources",
                    "vpnbench.tools", "vpnbench.safe_files", "vpnbench.sysctls", "vpnbench.lifetime",
                    "vpnbench.figure_scale", "vpnbench.terminal_text", "vpnbench.daemon_version",
                    "vpnbench.impair"]),  # the impairment as data; its runtime is impair_backends (parts)
    ("store", ["vpnbench.store", "vpnbench.records", "vpnbench.migrations", "vpnbench.live", "vpnbench.series_codec",
               "vpnbench.db_url"]),
    ("hosts", ["vpnbench.hosts", "vpnbench.evidence", "vpnbench.kernelvm", "vpnbench.vmaccel",
               "vpnbench.builds", "vpnbench.builds_install"]),
    ("testbed", ["vpnbench.testbeds", "vpnbench.testbed_spec", "vpnbench.probe"]),
    ("parts", ["vpnbench.techniques", "vpnbench.measure", "vpnbench.impair_backends", "vpnbench.monitor",
               "vpnbench.hostfacts", "vpnbench.wirecheck", "vpnbench.scaling",
               "vpnbench.overhead", "vpnbench.servers", "vpnbench.congestion", "vpnbench.emodel"]),
    ("campaign", ["vpnbench.campaign"]),
    ("run", ["vpnbench.runner", "vpnbench.run"]),
    ("lab", ["vpnbench.lab", "vpnbench.provision"]),
    ("answers", ["vpnbench.verdicts", "vpnbench.analysis", "vpnbench.stats", "vpnbench.significance",
                 "vpnbench.quality", "vpnbench.methodology", "vpnbench.distributions", "vpnbench.trend"]),
    ("outputs", ["vpnbench.tables", "vpnbench.report", "vpnbench.export", "vpnbench.compare", "vpnbench.dataset"]),
    ("CLI", ["vpnbench.cli", "vpnbench.__main__", "vpnbench.startup", "vpnbench.doctor", "vpnbench.lab.commands"]),
]

# Imports inside a function that point up, each with why it must (none of them closes a circle).
LAZY_UP = {
    ("vpnbench", "vpnbench.dataset"): "vpnbench.load, the public entry point, loads pandas only when called",
    ("vpnbench.resources", "vpnbench.hosts.ssh"): "cleanup after a kill -9 reaches the ssh hosts the run recorded",
    ("vpnbench.migrations", "vpnbench.monitor"): "an old file's samples become series in the monitor's own layout",
    ("vpnbench.run.rounds", "vpnbench.quality"): "numpy and pandas only for adaptive runs",
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
    assert "vpnbench.impair_backends" in MODULES and layer("vpnbench.impair_backends") > layer("vpnbench.impair.spec")
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
    package's submodules may name one another through it)."""
    edges: dict[str, set[str]] = {}
    for module in MODULES:
        for target, _ in imports(module, with_packages=False):
            if node(target) != node(module):
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


def chart() -> dict[str, str]:
    """docs/ARCHITECTURE.md's chart: layer -> the text of its rows (a name in the first column
    starts a layer; the rows under it without one continue it)."""
    block = (SRC.parent / "docs" / "ARCHITECTURE.md").read_text().split("## Layers", 1)[1].split("```")[1]
    rows: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        if not line.strip() or line.strip().startswith("─"):
            continue
        name = line[:18].strip() or name
        rows[name] = rows.get(name, "") + line[18:] + "\n"
    return rows


def test_the_chart_draws_these_layers_and_rooms():
    rows = chart()
    assert list(rows) == [name for name, _ in reversed(LAYERS)]
    for name, rooms in LAYERS:
        for entry in rooms[1:] if name == "foundation" else rooms:  # the package itself: its __init__
            path = MODULES[entry]
            shown = entry.rsplit(".", 1)[1] + ("/" if path.name == "__init__.py" else ".py")
            assert shown in rows[name], f"{entry} is not on the {name} row of the chart"
