"""Evidence of a failed bring-up: the technique's own state and the testbed's, from both ends."""

import pytest

from vpnbench.hosts import evidence
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.wireguard import WireGuard, WireGuardParams, _x25519_keypair
from vpnbench.testbeds.probe import LocalKernelProbe


class WrongServerKey(WireGuard):
    """The client is told a public key the server does not hold: no handshake can complete."""

    def _keypair(self, role: str):
        path, public = super()._keypair(role)
        if role == "server":
            self.wrong_key = _x25519_keypair()[1]
            self.server_key = public
            return path, self.wrong_key
        return path, public


@pytest.mark.netns
def test_a_wireguard_peer_with_the_wrong_key_leaves_evidence_from_both_ends(testbed):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources), testbed.router)
    technique = WrongServerKey(WireGuardParams(backend="userspace"), ctx)
    try:
        tunnel = technique.up("userspace")
        ping = testbed.client.run(["ping", "-n", "-c", "4", "-i", "0.5", "-W", "1", tunnel.server_addrs["ipv4"]],
                                  check=False)
        assert not ping.ok and " 0 received" in ping.stdout, ping.stdout  # the bring-up failure
        private = [p.read_text().strip() for p in ctx.resources.dir.iterdir() if p.name.startswith("wg-")]
        dumps = {**technique.evidence(), **testbed.evidence()}
    finally:
        technique.down()
    client_wg, server_wg = dumps["client: wg show"], dumps["server: wg show"]
    assert f"peer: {technique.wrong_key}" in client_wg, client_wg  # the key the server does not hold
    assert f"public key: {technique.server_key}" in server_wg, server_wg  # ...which is this one
    assert "latest handshake" not in client_wg + server_wg  # no handshake, on either end
    assert "private key: (hidden)" in client_wg and "private key: (hidden)" in server_wg
    for role in ("client", "server"):
        assert dumps[f"{role}: wireguard-go log"].strip() not in ("", "(not started)")
        assert technique.ifaces[role] in dumps[f"{role}: ip -d link"]
        assert "RX:" in dumps[f"{role}: ip -s link"] and "TX:" in dumps[f"{role}: ip -s link"]
    assert "10.99.0.2/24" in dumps["server: ip addr"] and "10.99.0.1/24" in dumps["client: ip addr"]
    assert "10.201.2.0/24" in dumps["router: ip route"] and "fd00:201:1::/64" in dumps["router: ip -6 route"]
    assert "kernel: dmesg | tail" in dumps and "client: ip xfrm state list nokeys" in dumps
    assert private and not any(key in text for key in private for text in dumps.values())  # keys never dumped
    assert all(len(text) <= evidence.LIMIT + 200 for text in dumps.values())


class BrokenHost:
    role = "client"
    slowdown = 1.0

    def run(self, argv, timeout=30.0, check=True, input=None):
        raise ConnectionError("ssh connection lost")


def test_evidence_never_raises():
    assert evidence.command(BrokenHost(), ["ip", "addr"]) == "(could not run: ssh connection lost)"
    assert evidence.log_tail(None) == "(not started)"
    found = evidence.gather([("a", lambda: "ok"), ("b", lambda: 1 / 0)])
    assert found["a"] == "ok" and found["b"].startswith("(not gathered: ZeroDivisionError")
    technique = WireGuard(WireGuardParams(), ctx=None)  # up() never ran: nothing to show, no error
    assert technique.evidence() == {}


def test_clip_keeps_the_head_of_a_dump_and_the_tail_of_a_log():
    text = "".join(f"line {i}\n" for i in range(2000))
    head, tail = evidence.clip(text, 100), evidence.clip(text, 100, keep="tail")
    assert head.startswith("line 0\n") and head.endswith("characters cut]") and len(head) < 140
    assert tail.endswith("line 1999") and tail.startswith("[... ")
