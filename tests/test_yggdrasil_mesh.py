"""Yggdrasil as a mesh on the mesh testbed (issue 42 item 1, issue 41 items 2 and 3): a public peer
on the control node, every node peered with it alone. Yggdrasil has no NAT traversal, so every
pair answers through the public peer whatever the NATs allow (udp-blocked nodes too: the peerings
are TCP), and every answering pair's path is "relay" (each node hears the control node only);
nothing is left behind."""

import json
import subprocess

import pytest

from conftest import (
    assert_refused,
    assert_technique_field_refused,
    kill9_mid_traffic_then_cleanup,
    killed_run,
    run_campaign,
)
from mesh_pairs import NATS, convergence_cycles, pairs_without_direct_path
from vpnbench.measure.convergence import REPLY
from vpnbench.techniques.base import Tunnel
from vpnbench.techniques.yggdrasil import START_TIMEOUT
from vpnbench.techniques.yggdrasil_mesh import NoFirstReply, YggdrasilMesh

# s: every node's one peering is up when up() returns, and the tree settles in a few seconds; but
# up() may take a second try (n1 never answered: START_TIMEOUT each), and the deadline counts from
# the daemons' first start: stop 58's halved run had up() at 24 s, past a 20 s deadline, so the
# pairs had no time left at all (18 of 30 "never", those of the two NAT'd nodes)
DEADLINE = 2 * START_TIMEOUT + 20

NATS_WITH_UDP_BLOCKED = [*NATS[:-1], "udp-blocked"]  # the last symmetric NAT swapped for one that drops UDP


# -- validation ------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry, expected", [
    ({"family": "ipv6"}, "technique[1].family: 'ipv6' is not allowed; allowed values: 'ipv4'"),
    ({"transport": "udp"}, "technique[1].transport: 'udp' is not allowed; allowed values: 'tcp', 'tls'"),
    ({"public_peer": "n0"}, "technique[1].public_peer: 'n0' is not allowed; allowed values: 'control'"),
    ({"peers": ["tcp://1.2.3.4:1"]}, "technique[1].peers: unknown key"),
])
def test_bad_fields_are_refused_in_one_line(entry, expected):
    assert_technique_field_refused("yggdrasil-mesh", entry, expected)


def test_a_mesh_technique_without_a_mesh_testbed_is_refused_before_anything_runs(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "yggdrasil-mesh"\n[[measurement]]\nkind = "convergence"\n',
                   "testbed.nodes: yggdrasil-mesh brings up a mesh of nodes and needs a mesh testbed; allowed: nodes = 2 to")


def test_the_convergence_kind_reads_fpings_replies_from_ipv6_overlay_addresses():
    """fping as the convergence kind runs it (-D, period and timeout), to IPv6 and IPv4 loopback
    at once: each reply is read with its stamp and the address as the kind was given it, so a
    Yggdrasil overlay (200::/7) maps back to its nodes as an IPv4 one does."""
    out = subprocess.run(["fping", "-D", "-p", "200", "-t", "200", "-i", "2", "-c", "2", "::1", "127.0.0.1"],
                         capture_output=True, text=True, timeout=10).stdout
    replies = REPLY.findall(out)
    assert sorted(address for _, address in replies) == ["127.0.0.1", "127.0.0.1", "::1", "::1"], out
    assert all(float(stamp) > 1.7e9 for stamp, _ in replies)  # epoch seconds (-D)
    # an address as yggdrasil -address prints it, in fping's line format
    line = "[1795953779.22801] 200:6f1e:9a7c:33b2:1d0:5e9f:c4a2:7b10 : [0], 64 bytes, 0.221 ms (0.221 avg, 0% loss)"
    assert REPLY.findall(line) == [("1795953779.22801", "200:6f1e:9a7c:33b2:1d0:5e9f:c4a2:7b10")]


class ScriptedTries(YggdrasilMesh):
    """yggdrasil-mesh's up() over scripted tries: each either a tunnel or the first reply missing."""

    def __init__(self, tries: list[bool]):  # super() not called: no context, no daemons
        self.tries, self.calls = tries, []

    def _up_once(self, backend: str) -> Tunnel:
        self.calls.append("up")
        if not self.tries.pop(0):
            raise NoFirstReply("yggdrasil-mesh: no echo reply from n1 to n0 within 20 s")
        return Tunnel(backend, {}, {}, "encrypted", None, negotiated={"join_s": 0.5})

    def evidence(self) -> dict[str, str]:
        self.calls.append("evidence")
        return {"n1: yggdrasilctl getPaths": "(none)"}

    def down(self) -> None:
        self.calls.append("down")


def test_a_bring_up_without_the_first_reply_is_tried_again_up_to_three_times_and_says_so():
    mesh = ScriptedTries([False, True])
    tunnel = mesh.up("userspace")
    assert mesh.calls == ["up", "evidence", "down", "up"]  # the first try's state seen, then removed
    assert tunnel.negotiated["warning"].startswith("brought up 2 times, with fresh keys each time: yggdrasil-mesh: no echo")
    assert tunnel.negotiated["first_try_evidence"] == {"n1: yggdrasilctl getPaths": "(none)"}
    assert tunnel.negotiated["join_s"] == 0.5
    third = ScriptedTries([False, False, True])
    assert third.up("userspace").negotiated["warning"].startswith("brought up 3 times")
    assert third.calls == ["up", "evidence", "down", "up", "down", "up"]  # the first failure's evidence only
    clean = ScriptedTries([True])
    assert "warning" not in clean.up("userspace").negotiated and clean.calls == ["up"]
    never = ScriptedTries([False, False, False, True])
    with pytest.raises(NoFirstReply, match=r"within 20 s \(try 3 of 3, each with fresh keys; the others failed alike\)$"):
        never.up("userspace")  # three in a row: the bring-up fails, says so, and tries no fourth time
    assert never.tries == [True]


# -- real daemons ----------------------------------------------------------------------------------
CAMPAIGN = f"""[campaign]
name = "yggmesh"
[testbed]
nodes = {len(NATS_WITH_UDP_BLOCKED)}
nat = {json.dumps(NATS_WITH_UDP_BLOCKED)}
[[technique]]
kind = "yggdrasil-mesh"
transport = "tls"
[[measurement]]
kind = "convergence"
deadline = "{DEADLINE}s"
[[measurement]]
kind = "ping"
family = "ipv6"
count = 20
[[measurement]]
kind = "tcp"
pattern = "ring"
family = "ipv6"
duration = "1s"
"""


@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_all_answer_through_the_public_peer(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert all(cell["status"] == "ok" for cell in cells), [(c["technique"], c["measurement"], c["error"]) for c in cells]
    for cell in cells:
        assert cell["wire_check"] == "encrypted"
        assert cell["negotiated"]["mesh"]["nodes"] == len(NATS_WITH_UDP_BLOCKED)
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    # the NATs would leave some pairs a direct path and not others: yggdrasil takes none of them
    assert 0 < len(pairs_without_direct_path(NATS_WITH_UDP_BLOCKED)) < len(cycle["pairs"])
    assert cycle["never"] == [] and len(cycle["pairs"]) == 6 * 5
    assert all(cycle["up_s"] <= t <= DEADLINE for t in cycle["first_reply_s"].values())
    assert set(cycle["paths"].values()) == {"relay"}, cycle["paths"]  # every node talks to the control node only
    # a traffic pattern to the nodes' IPv6 overlay addresses: every flow of the ring carried data
    (ring,) = [cell for cell in cells if cell["measurement"].startswith("tcp")]
    assert ring["metrics"]["pairs"] == 6 and ring["metrics"]["pairs_silent"] == 0, ring["metrics"]


KILLED_RUN = killed_run("yggdrasil-mesh", {"nodes": 4, "nat": ["none", "none", "address-dependent", "udp-blocked"]},
                        family="ipv6")


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/yggdrasil-n*.json")
