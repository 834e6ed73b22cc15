"""What the mesh techniques' tests expect of a mix of NATs, from RFC 4787's arithmetic alone
(mesh_spec.direct_path_possible), and the convergence cycles a run stored."""

import itertools
import json
import sqlite3
from contextlib import closing

from vpnbench.testbeds.mesh_spec import direct_path_possible

# Two open nodes (the pair two-host measurements use), a full cone, and three NATs that choose a
# new port per destination: the pairs among n3, n4 and n5 cannot go direct.
NATS = ["none", "none", "endpoint-independent", "address-dependent", "address-and-port-dependent",
        "address-and-port-dependent"]


def pairs_without_direct_path(nats: list[str]) -> set[str]:
    """The ordered pairs ("n3>n4") whose NATs leave no direct path."""
    return {f"n{i}>n{j}" for i, j in itertools.permutations(range(len(nats)), 2)
            if not direct_path_possible(nats[i], nats[j])}


def pairs_direct_unasked(nats: list[str]) -> set[str]:
    """The ordered pairs whose first packet either way gets in with no hole punched: both ends open
    or behind endpoint-independent NATs (which admit anyone once the node has sent from its port,
    as it has, to the lighthouse). A mesh that tries the relay and the direct path at once (Nebula)
    finds these direct in one round trip, fewer than any relay takes. The other pairs with a direct
    path get it only once the NAT'd end has sent to the other: a race with the relay's set-up."""
    unasked = {"none", "endpoint-independent"}
    return {f"n{i}>n{j}" for i, j in itertools.permutations(range(len(nats)), 2)
            if nats[i] in unasked and nats[j] in unasked}


def convergence_cycles(db) -> list[dict]:
    """Every convergence cycle stored in a results database (a trial's data)."""
    with closing(sqlite3.connect(db)) as conn:  # closed: `with conn` alone only commits
        rows = conn.execute("SELECT t.data FROM trials t JOIN cells c ON c.id = t.cell_id "
                            "WHERE c.measurement = 'convergence' ORDER BY t.cell_id, t.number").fetchall()
    return [json.loads(data) for (data,) in rows]


def assert_cells_ok_over_every_node(cells: list[dict]) -> None:
    """Every cell of a run over NATS ok, its wire proof encrypted, its mesh of every node."""
    assert all(cell["status"] == "ok" for cell in cells), [(c["technique"], c["measurement"], c["error"]) for c in cells]
    for cell in cells:
        assert cell["wire_check"] == "encrypted"
        assert cell["negotiated"]["mesh"]["nodes"] == len(NATS)


def assert_direct_exactly_where_the_nats_allow(cycle: dict, deadline: float) -> None:
    """A mesh with no relay over NATS: the pairs without a direct path never answer, every other
    pair answers, directly, between up() and the deadline."""
    no_direct = pairs_without_direct_path(NATS)
    assert no_direct  # n3, n4, n5 map a new port per destination
    assert len(cycle["pairs"]) == len(NATS) * (len(NATS) - 1)
    assert set(cycle["never"]) == no_direct
    assert set(cycle["first_reply_s"]) == set(cycle["pairs"]) - no_direct
    assert all(cycle["up_s"] <= t <= deadline for t in cycle["first_reply_s"].values())
    assert {pair for pair, path in cycle["paths"].items() if path == "direct"} == set(cycle["first_reply_s"])


def auto_and_relayed_campaign(kind: str, deadline: float) -> str:
    """Two blocks of a mesh technique over NATS, `path = "auto"` then `"relayed"`, each timed by
    convergence and pinged."""
    return mixed_nats_campaign(kind, kind, deadline,
                               f'label = "auto"\n[[technique]]\nkind = "{kind}"\nlabel = "relayed"\npath = "relayed"\n')


def auto_and_relayed_cycles(db, cells: list[dict], deadline: float) -> tuple[dict, dict, set[str]]:
    """What both blocks of auto_and_relayed_campaign must show, asserted: every cell ok and
    encrypted over every node, every pair answering between up() and the deadline; then (the auto
    cycle, the relayed cycle, the pairs without a direct path) for the technique's own checks."""
    assert_cells_ok_over_every_node(cells)
    auto, relayed = convergence_cycles(db)  # the blocks' order
    no_direct = pairs_without_direct_path(NATS)
    assert no_direct  # n3, n4, n5 map a new port per destination
    for cycle in (auto, relayed):
        assert cycle["never"] == [] and len(cycle["pairs"]) == len(NATS) * (len(NATS) - 1)
        # each pair counts from the daemons' start: not before up() returned, within the deadline
        assert all(cycle["up_s"] <= t <= deadline for t in cycle["first_reply_s"].values())
    return auto, relayed, no_direct


BLOCKED_NATS = ["none", "none", "udp-blocked"]


def udp_blocked_campaign(kind: str, deadline: float) -> str:
    """Three nodes of a mesh technique, the third behind a NAT that lets no UDP out, timed by convergence."""
    return (f'[campaign]\nname = "blocked"\n[testbed]\nnodes = 3\nnat = {json.dumps(BLOCKED_NATS)}\n'
            f'[[technique]]\nkind = "{kind}"\n[[measurement]]\nkind = "convergence"\ndeadline = "{deadline:g}s"\n')


def mesh_campaign_text(kind: str, testbed: str, technique: str) -> str:
    """A convergence campaign of one mesh technique with these [testbed] and technique lines, as the
    mesh techniques' bad-input tests hand to assert_refused."""
    return f'[testbed]\n{testbed}[[technique]]\nkind = "{kind}"\n{technique}[[measurement]]\nkind = "convergence"\n'


def mixed_nats_campaign(name: str, kind: str, deadline: float, technique: str = "") -> str:
    """One block of a mesh technique (with these extra technique lines) over NATS, timed by
    convergence and pinged."""
    return f"""[campaign]
name = "{name}"
[testbed]
nodes = {len(NATS)}
nat = {json.dumps(NATS)}
[[technique]]
kind = "{kind}"
{technique}[[measurement]]
kind = "convergence"
deadline = "{deadline}s"
[[measurement]]
kind = "ping"
count = 20
"""


def assert_needs_a_mesh_testbed(tmp_path, kind: str) -> None:
    """A mesh technique on the two-host testbed is refused in one line before anything runs."""
    from conftest import assert_refused

    assert_refused(tmp_path, f'[[technique]]\nkind = "{kind}"\n[[measurement]]\nkind = "convergence"\n',
                   f"testbed.nodes: {kind} brings up a mesh of nodes and needs a mesh testbed; allowed: nodes = 2 to")
