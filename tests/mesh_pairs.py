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


def convergence_cycles(db) -> list[dict]:
    """Every convergence cycle stored in a results database (a trial's data)."""
    with closing(sqlite3.connect(db)) as conn:  # closed: `with conn` alone only commits
        rows = conn.execute("SELECT t.data FROM trials t JOIN cells c ON c.id = t.cell_id "
                            "WHERE c.measurement = 'convergence' ORDER BY t.cell_id, t.number").fetchall()
    return [json.loads(data) for (data,) in rows]

