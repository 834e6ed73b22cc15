"""n2n 1.x (Debian's) between namespaces: up with its supernode on the router, TCP and ping (both
families) through it, the wire proof naming n2n, the MTU equal to the arithmetic (a DF-ping search
and a capture of each message's size), key private and never in argv, environment or log, nothing
left after the run or after a kill -9 and `vpnbench cleanup`; its bad input; its recogniser."""

import stat
from pathlib import Path

import pytest

import machine_places
import vpnbench
from bounds import assert_tcp_measured
from conftest import (
    TCP_AND_PING,
    assert_refused,
    assert_technique_field_refused,
    captured_payload_sizes,
    kill9_mid_traffic_then_cleanup,
    killed_run,
    run_campaign,
    run_daemons,
)
from pcaps import pcap_of, udp_frame
from vpnbench.foundation.tools import which
from vpnbench.run.bringup import wait_through
from vpnbench.techniques import expect
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.n2n import MAX_MTU, N2n, N2nParams
from vpnbench.techniques.overhead import N2N_V1_HEADER, lzo_literal_run, n2n_outer
from vpnbench.techniques.wirecheck import check_wire, is_n2n, recognise
from vpnbench.testbeds.probe import LocalKernelProbe

needs_n2n = pytest.mark.skipif(not (which("edge") and which("supernode")),
                               reason="n2n's edge and supernode not installed (apt-get install n2n)")
N2N_PLACES = [*machine_places.DAEMON_DEFAULT_PLACES, Path("/etc/default/n2n"), Path("/etc/n2n")]


@pytest.mark.parametrize("entry, expected", [
    ({"cipher": "aes"}, "technique[1].cipher: 'aes' is not allowed; allowed values: 'twofish'"),
    ({"cipher": "none"}, "technique[1].cipher: 'none' is not allowed; allowed values: 'twofish'"),
    ({"mtu": MAX_MTU + 1}, "technique[1].mtu:"),
    ({"mtu": 500}, "technique[1].mtu:"),
    ({"port": 65535}, "technique[1].port:"),  # the supernode takes port + 1
    ({"header_encryption": True}, "technique[1].header_encryption: unknown key"),
    ({"family": "ipv6"}, "technique[1].family: unknown key"),  # n2n 1.x's underlay is IPv4 only
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    assert_technique_field_refused("n2n", entry, expected)


def test_bad_input_exits_2_with_one_line_before_anything_is_touched(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "n2n"\ncipher = "chacha20"\n[[measurement]]\nkind = "ping"\n',
                   "technique[1].cipher: 'chacha20' is not allowed; allowed values: 'twofish'")


def test_mtu_arithmetic_is_n2n_1s_message():
    """IP 20 + UDP 8 + header 84 + the LZO1X-1 literal run of the Ethernet frame's ciphertext (its
    own length): one length byte up to 238 bytes, else 2 + one per further 255, and the 3-byte end
    marker. Over 1500: a 1364-byte packet is a 1378-byte frame, 84 + 1378 + 10 = 1472 of UDP."""
    assert lzo_literal_run(0) == 3  # a registration: the empty body's end marker alone
    assert [lzo_literal_run(n) - n for n in (142, 238, 239, 273, 274, 1378, 1414)] == [4, 4, 5, 5, 6, 10, 10]
    assert n2n_outer(228) - 28 == 331 and n2n_outer(1400) - 28 == 1508  # the captures in overhead.py
    assert n2n_outer(1364) == 1500 and n2n_outer(1365) == 1501
    expectation = expect({"kind": "n2n"}, 1500)
    assert (expectation.protocol_mtu, expectation.overhead, expectation.expected_mtu) == (1364, 136, 1364)
    # n2n's own default 1400 is carried, in fragmented UDP packets
    assert expect(N2nParams(mtu=1400).settings(), 1500).expected_mtu == 1400
    # the edge compresses into a 1650-byte stack buffer: MAX_MTU is the largest frame that fits it
    assert N2N_V1_HEADER + lzo_literal_run(14 + MAX_MTU) == 1650 < N2N_V1_HEADER + lzo_literal_run(15 + MAX_MTU)


def _header(version=1, message=3, ttl=0, from_supernode=0) -> bytes:
    return bytes([version, message, ttl, from_supernode]) + b"0123456789abcdef" + bytes(N2N_V1_HEADER - 20)


def test_the_recogniser_takes_n2n_1_messages():
    data = _header() + b"\x00\xe0" + bytes(200) + b"\x11\x00\x00"  # a frame: LZO run, its bytes, end marker
    relayed = _header(ttl=1, from_supernode=1) + b"\x11\x00\x00"
    register = _header(message=1) + b"\x11\x00\x00"
    assert is_n2n(data) and is_n2n(relayed) and is_n2n(register)
    assert not is_n2n(_header(version=3) + b"\x11\x00\x00")  # n2n 3.x's version byte
    assert not is_n2n(_header(message=6) + b"\x11\x00\x00")
    assert not is_n2n(_header() + bytes(20))  # no LZO end marker
    assert not is_n2n(_header()[:60] + b"\x11\x00\x00")  # shorter than the header
    pcap = pcap_of([udp_frame(data), udp_frame(register), udp_frame(bytes(100) + b"\x11\x00\x00")])
    assert recognise(pcap, "n2n") == 2


CELLS = """[campaign]
name = "n2n"
[[technique]]
kind = "n2n"
""" + TCP_AND_PING + """[[measurement]]
kind = "ping"
family = "ipv6"
count = 5
interval = "0.05s"
[[measurement]]
kind = "mtu"
"""


@needs_n2n
@pytest.mark.netns
def test_tcp_ping_and_mtu_through_n2n_with_the_proof_and_nothing_left(tmp_path, clean_machine):
    before = machine_places.snapshot(N2N_PLACES)
    _, cells = run_campaign(tmp_path, CELLS)
    assert len(cells) == 4
    for cell in cells:
        label, negotiated, metrics = cell["measurement_label"], cell["negotiated"], cell["metrics"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        assert negotiated["implementation"] == "n2n" and negotiated["version"].startswith("1."), negotiated
        assert negotiated["package"].startswith("n2n 1.") and negotiated["supernode"] == "router", negotiated
        assert negotiated["cipher"] == "Twofish-CBC" and negotiated["header_encryption"] is False
        assert len(negotiated["warnings"]) == 3
        assert negotiated["mtu"] == cell["tunnel"]["interface_mtu"] == 1364  # the testbed's veths: 1500
        assert all(cell["hosts"][role]["procs_cpu_pct"].get("edge") is not None for role in ("client", "server"))
        if label == "tcp":
            assert_tcp_measured(cell)
        if label.startswith("ping"):
            assert metrics["received"] > 0 and metrics["rtt_min_ms"] > 0, metrics
        if label == "mtu":  # a don't-fragment ping search through the tunnel
            assert metrics["mtu_bytes"] == metrics["mtu_expected_bytes"] == 1364, metrics
    assert {cell["measurement_label"] for cell in cells} == {"tcp", "ping", "ping_v6", "mtu"}
    wire = vpnbench.load(tmp_path / "c.db").bringups["wire_check"]
    assert [(check["verdict"], check["protocol"]) for check in wire] == [("encrypted", "n2n")], list(wire)
    assert not run_daemons("edge", "supernode")
    assert machine_places.changed(before, N2N_PLACES) == []


@needs_n2n
@pytest.mark.netns
def test_key_private_never_in_argv_env_or_log_each_message_sized_as_the_arithmetic_and_wiped(testbed):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources), testbed.router)
    technique = N2n(N2nParams(), ctx)
    run_dir = ctx.resources.dir
    try:
        tunnel = technique.up("userspace")
        assert technique.handshake_s is not None and technique.handshake_s > 0
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 10)
        options = sorted(run_dir.glob("n2n-*.conf"))
        assert [p.name for p in options] == ["n2n-client.conf", "n2n-server.conf"]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in options)
        lines = [dict(line.split(" ", 1) for line in p.read_text().splitlines()) for p in options]
        key, community = lines[0]["-k"], lines[0]["-c"]
        assert lines[1]["-k"] == key and len(key) == 32 and len(community) == 16
        for proc in tunnel.procs:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_text().rstrip("\0").split("\0")
            environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
            assert argv[0] in ("edge", "supernode") and key not in " ".join(argv), argv
            assert key.encode() not in environ and b"N2N_KEY" not in environ
            assert key not in proc.output()  # the community is no secret: the supernode logs it, the wire shows it
        argvs = [Path(f"/proc/{p.pid}/cmdline").read_text().rstrip("\0").split("\0") for p in tunnel.procs]
        assert sorted(argv for argv in argvs if argv[0] == "edge") == [["edge", f"@{p}"] for p in options]
        proof = check_wire(tunnel, testbed.client, testbed.capture_points(tunnel.capture_near), ctx.resources)
        assert (proof.verdict, proof.protocol) == ("encrypted", "n2n") and proof.detail.endswith("of them n2n"), proof
        # IPv4 pings of 100 and 200 bytes (128- and 228-byte packets) and a don't-fragment one of the
        # whole MTU: each an n2n message of the size the arithmetic says, the largest filling 1500
        mtu = tunnel.negotiated["mtu"]
        sizes = captured_payload_sizes(testbed, ctx, lambda: _ping_sizes(testbed, tunnel, [100, 200, mtu - 28]),
                                       "udp", is_n2n)
        assert {n2n_outer(128) - 28, n2n_outer(228) - 28, n2n_outer(mtu) - 28} <= sizes, sizes
        assert n2n_outer(mtu) - 28 == 1472 and max(sizes) == 1472
        one_more = testbed.client.run(["ping", "-n", "-c", "1", "-M", "do", "-s", str(mtu - 27), "-W", "1",
                                       tunnel.server_addrs["ipv4"]], check=False)
        assert not one_more.ok and "message too long" in (one_more.stdout + one_more.stderr).lower()
        ifaces = technique.ifaces
        tunnel.procs[0].stop()  # the supernode
        assert technique.failure().startswith("supernode exited")
    finally:
        technique.down()
    assert not list(run_dir.glob("n2n-*"))
    assert not run_daemons("edge", "supernode")
    assert not any(host.run(["ip", "link", "show", "dev", ifaces[role]], check=False).ok
                   for role, host in (("client", testbed.client), ("server", testbed.server)))


def _ping_sizes(testbed, tunnel, sizes: list[int]) -> None:
    """The client's pings of these ICMP data sizes (n2n messages of known sizes), never fragmented."""
    for size in sizes:
        testbed.client.run(["ping", "-n", "-M", "do", "-c", "2", "-i", "0.05", "-s", str(size),
                            tunnel.server_addrs["ipv4"]], timeout=10)



@needs_n2n
@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_device(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/n2n-*.conf", while_up=lambda: run_daemons("edge", "supernode"))
    assert not run_daemons("edge", "supernode")



KILLED_RUN = killed_run("n2n")
