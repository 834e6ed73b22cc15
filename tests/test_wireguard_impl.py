"""WireGuard's implementations (issue 31): Debian's wireguard-go, the pinned current build of
wireguard-go and boringtun, each brought up between namespaces here through the same `wg`
configuration, measured (TCP, UDP, ping), proven encrypted WireGuard on the wire, and recorded
(implementation, exact version, build); kernel WireGuard is test_kernel_backends.py's (the VM).
Bad input is refused in one line before anything runs."""

import os
import re
import shutil
import socket
import subprocess

import pytest

from bounds import assert_tcp_measured
from conftest import run_campaign, run_cli
from pcaps import pcap_of, udp_frame
from test_safe_files import ThisMachine
from vpnbench.campaign import campaign_from_dict
from vpnbench.cli import load_campaign_or_preset
from vpnbench.foundation.errors import TechniqueError, UserError
from vpnbench.hosts import builds
from vpnbench.hosts.resources import RunResources, run_id_prefix
from vpnbench.store.database import Store
from vpnbench.techniques.base import Tunnel
from vpnbench.techniques.wirecheck import is_wireguard, judge, recognise
from vpnbench.techniques.wireguard import (
    SOCKET_DIR,
    WireGuard,
    WireGuardParams,
    _psk,
    _x25519_keypair,
    implementation_status,
    listening_control_sockets,
)
from vpnbench.testbeds.probe import KernelProbe, LocalKernelProbe

CURRENT = builds.recipe("wireguard-go").default
BORINGTUN = builds.recipe("boringtun").default
UDP_RATE = 20e6  # what the UDP cells send: a ceiling no host can beat

CAMPAIGN = f"""
[campaign]
name = "wg-impls"
[testbed]
router = false
[[technique]]
kind = "wireguard"
label = "wireguard-go debian"
implementation = "wireguard-go"
version = "debian"
[[technique]]
kind = "wireguard"
label = "wireguard-go current"
implementation = "wireguard-go"
version = "{CURRENT}"
[[technique]]
kind = "wireguard"
label = "boringtun"
implementation = "boringtun"
[[measurement]]
kind = "tcp"
duration = "2s"
[[measurement]]
kind = "udp"
rate = "{UDP_RATE / 1e6:g}M"
length = 1200
duration = "2s"
[[measurement]]
kind = "ping"
count = 10
interval = "0.05s"
"""


def lacking_builds() -> list[str]:
    """Why this machine cannot run an implementation of CAMPAIGN (the probe's reasons), if it cannot."""
    with RunResources() as resources:
        probe = LocalKernelProbe(resources)
        statuses = [implementation_status(name, version, probe)
                    for name, version in (("wireguard-go", "debian"), ("wireguard-go", CURRENT), ("boringtun", None))]
    return [reason for available, reason in statuses if not available]


@pytest.mark.exclusive  # alone: boringtun hands /var/run/wireguard to another user for a moment; no boringtun-cli anywhere after
@pytest.mark.netns
def test_each_implementation_carries_traffic_encrypted_and_records_what_ran(tmp_path, clean_machine):
    missing = lacking_builds()
    if missing:  # the builds are the suite's to make (`vpnbench doctor --install NAME`), not this test's
        pytest.fail("; ".join(missing))
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert sorted((c["technique"], c["measurement"]) for c in cells) == sorted(
        (label, kind) for label in ("wireguard-go debian", "wireguard-go current", "boringtun")
        for kind in ("tcp", "udp", "ping"))
    debian_version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "wireguard-go"],
                                    capture_output=True, text=True, check=True).stdout
    expected = {"wireguard-go debian": ("wireguard-go", debian_version, "wireguard-go"),
                "wireguard-go current": ("wireguard-go", CURRENT, "wireguard-go"),
                "boringtun": ("boringtun", BORINGTUN, "boringtun-cli")}
    for cell in cells:
        label = cell["technique"]
        implementation, version, daemon = expected[label]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["technique_params"]["backend"] == "userspace"
        negotiated = cell["negotiated"]
        assert (negotiated["implementation"], negotiated["version"]) == (implementation, version), negotiated
        # the build's own record, read on the host: Debian's package, or BUILD.json of the build that ran
        assert negotiated["build"]["version"] == version
        assert negotiated["build"].get("source") == ("debian" if label.endswith("debian") else builds.recipe(implementation).source)
        assert cell["wire_check"] == "encrypted"
        # its own daemon carried the traffic, on both ends (the monitor's per-process CPU, by name)
        assert all(daemon in cell["hosts"][role]["procs_cpu_pct"] for role in ("client", "server")), cell["hosts"]
        metrics = cell["metrics"]
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
        elif cell["measurement"] == "udp":
            assert 0 < metrics["sender_throughput_bps"] <= 1.1 * UDP_RATE, metrics  # iperf3 paces to its target
            assert 0 < metrics["received_packets"] <= metrics["sent_packets"], metrics
        else:
            assert metrics["received"] > 0 and 0 < metrics["rtt_min_ms"] <= metrics["rtt_max_ms"], metrics
    store = Store(tmp_path / "c.db", read_only=True)
    try:
        bringups = store.bringups(cells[0]["run_id"])
    finally:
        store.close()
    assert len(bringups) == 3
    for bringup in bringups:  # the wire proof named the protocol from the bytes it captured
        assert bringup.wire_check["verdict"] == "encrypted" and bringup.wire_check["protocol"] == "WireGuard", bringup
    # leave no trace beyond clean_machine's checks: no boringtun left running anywhere
    assert not subprocess.run(["pgrep", "-x", "boringtun-cli"], capture_output=True).stdout


def campaign(entry: dict) -> dict:
    return {"campaign": {"name": "bad"}, "technique": [{"kind": "wireguard", **entry}],
            "measurement": [{"kind": "ping"}]}


@pytest.mark.parametrize("entry, expected", [
    ({"implementation": "foo"},
     "technique[1].implementation: 'foo' is not allowed; allowed values: 'auto', 'kernel', 'wireguard-go', 'boringtun'"),
    ({"implementation": "wireguard-go", "version": "x y"},
     f"technique[1].version: 'x y' is not a version (digits, dots, letters); allowed: a version such as '{CURRENT}', "
     f"'debian', git:REF (a commit, tag or branch of golang.zx2c4.com/wireguard) or path:/DIR (a local source directory)"),
    ({"implementation": "kernel", "version": "1.0"},
     "technique[1].version: not allowed with implementation = 'kernel' (the kernel's own WireGuard has no version "
     "to choose); set implementation to one of 'wireguard-go', 'boringtun'"),
    ({"version": "1.0"}, "technique[1].version: not allowed with implementation = 'auto'"),
    ({"implementation": "boringtun", "version": "debian"},
     f"technique[1].version: boringtun has no Debian package; give a version such as '{BORINGTUN}'"),
    ({"backend": "kernel", "implementation": "boringtun"},
     "technique[1].implementation: 'boringtun' contradicts backend = 'kernel'; allowed values with it: 'auto', 'kernel'"),
    ({"backend": "userspace", "implementation": "kernel"},
     "technique[1].implementation: 'kernel' contradicts backend = 'userspace'"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict(campaign(entry))
    assert str(info.value).startswith(expected), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("line", ['implementation = "foo"', 'implementation = "wireguard-go"\nversion = "x y"',
                                  'implementation = "kernel"\nversion = "6.1"'])
def test_bad_input_exits_2_before_anything_is_touched(tmp_path, line):
    (tmp_path / "c.toml").write_text(f'[[technique]]\nkind = "wireguard"\n{line}\n[[measurement]]\nkind = "ping"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("vpnbench: error: technique[1]."), result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "c.db").exists()


def test_backend_userspace_still_means_wireguard_go():
    assert WireGuardParams(backend="userspace").implementation_for("userspace") == "wireguard-go"
    assert WireGuardParams(implementation="boringtun").implementation_for("userspace") == "boringtun"
    assert WireGuardParams().implementation_for("kernel") == "kernel"


class Hosts(KernelProbe):
    """What the hosts that run WireGuard have, as a probe answers it: commands, files, a kernel."""

    def __init__(self, commands=("wg", "wireguard-go"), files=(), wireguard_module=False):
        self.commands, self.files, self.module = set(commands), set(files), wireguard_module

    def has_link_type(self, kind, on_ethernet=False):
        return self.module and kind == "wireguard"

    def has_qdisc(self, kind):
        return False

    def has_command(self, name):
        return name in self.commands

    def host_lacking(self, path):
        return None if path in self.files else "server"

    def outputs(self, argv):
        return {}


def test_each_implementation_is_asked_of_the_hosts_probe():
    """Availability per implementation and version comes from the probe (the hosts that run it),
    each reason with the command that fixes it; auto keeps today's choice."""
    current = builds.program("wireguard-go", "wireguard-go", CURRENT)
    boringtun = builds.program("boringtun", "boringtun-cli")
    hosts = Hosts(files={current})
    assert WireGuard.resolve_backend(WireGuardParams(), hosts) == "userspace"
    assert WireGuard.resolve_backend(WireGuardParams(implementation="wireguard-go", version=CURRENT), hosts) == "userspace"
    with pytest.raises(ValueError) as info:
        WireGuard.resolve_backend(WireGuardParams(implementation="boringtun"), hosts)
    assert str(info.value) == (f"implementation 'boringtun' is not available: server lacks boringtun {BORINGTUN} "
                               f"(/opt/vpnbench/boringtun/{BORINGTUN}): build it there with "
                               f"`vpnbench doctor --install boringtun@{BORINGTUN}`")
    with pytest.raises(ValueError, match="kernel lacks WireGuard"):
        WireGuard.resolve_backend(WireGuardParams(implementation="kernel"), hosts)
    assert WireGuard.resolve_backend(WireGuardParams(), Hosts(wireguard_module=True)) == "kernel"
    no_debian = Hosts(commands=("wg",), files={boringtun})
    with pytest.raises(ValueError, match=r"no backend available \(kernel: kernel lacks WireGuard.*; "
                                         r"wireguard-go: a host lacks wireguard-go \(Debian\): apt-get install wireguard-go\)"):
        WireGuard.resolve_backend(WireGuardParams(), no_debian)
    assert WireGuard.resolve_backend(WireGuardParams(implementation="boringtun"), no_debian) == "userspace"
    rows = {status.name: status for status in WireGuard.backends(hosts)}
    assert list(rows) == ["kernel", "userspace", f"wireguard-go@{CURRENT}", f"boringtun@{BORINGTUN}"]
    assert [rows[name].available for name in rows] == [False, True, True, False]
    assert not any(status.available for status in WireGuard.backends(Hosts(commands=(), files={current, boringtun})))


def test_the_wire_proof_recognises_wireguard_messages():
    """From the captured packets: UDP, then WireGuard's type, reserved zeros and the type's size;
    other UDP on the same port is not taken for it."""
    initiation, data = b"\x01\0\0\0" + bytes(144), b"\x04\0\0\0" + bytes(12) + bytes(48)
    dns_like = b"\x01\x00\x01\x00" + bytes(144)  # right size, reserved bytes not zero
    pcap = pcap_of([udp_frame(p, port=51820) for p in (initiation, data, dns_like)])
    assert recognise(pcap, "WireGuard") == 2
    assert not is_wireguard(b"\x01\0\0\0" + bytes(100))  # an initiation is 148 bytes, never 104
    assert not is_wireguard(b"\x04\0\0\0" + bytes(12))  # data without its tag


def test_the_versions_preset_runs_the_pinned_build_and_each_implementation():
    """`vpnbench run wireguard-versions`: the preset names the current build by the version the
    table pins (a new pin moves both), beside Debian's, boringtun and the kernel's."""
    entries = [(t.label, t.settings().get("implementation"), t.settings().get("version"))
               for t in load_campaign_or_preset("wireguard-versions").techniques]
    assert entries == [(None, None, None), ("wireguard-go debian", "wireguard-go", "debian"),
                       ("wireguard-go current", "wireguard-go", CURRENT), ("boringtun", "boringtun", BORINGTUN),
                       ("kernel", "kernel", None)]


def test_the_verdict_names_the_protocol_only_when_its_messages_were_seen():
    tunnel = Tunnel("userspace", {}, {}, "encrypted", "udp port 51820", wire_protocol="WireGuard")
    with pytest.raises(TechniqueError, match="7 packets matching 'udp port 51820' on the underlay, none of them WireGuard"):
        judge(tunnel, marker_seen=False, protocol_packets=7, recognised=0)
    verdict = judge(tunnel, marker_seen=False, protocol_packets=7, recognised=7)
    assert (verdict.verdict, verdict.protocol) == ("encrypted", "WireGuard")
    assert verdict.detail.endswith("7 of them WireGuard")


def _sweep(version: str) -> str:
    """One run of the same campaign and technique label at a version (the upgrade a team makes)."""
    return f"""
[campaign]
name = "wg-upgrade"
[testbed]
router = false
[[technique]]
kind = "wireguard"
label = "wg"
implementation = "wireguard-go"
version = {version}
[[measurement]]
kind = "tcp"
duration = "1s"
"""


def test_a_version_sweep_and_an_upgrade_are_shown_side_by_side_by_report_compare_and_trend(tmp_path, clean_machine):
    """Real cells: `version = ["debian", CURRENT]` swept in one campaign records each exact version,
    and the report shows both; the same label run at Debian's and then at the current build is
    named as a version change by `compare` and by `trend` (its series' versions, in turn)."""
    db = tmp_path / "v.db"
    (tmp_path / "sweep.toml").write_text(_sweep(f'["debian", "{CURRENT}"]'))
    assert run_cli("run", str(tmp_path / "sweep.toml"), "--db", str(db)).returncode == 0
    for number, version in enumerate(("debian", CURRENT)):
        (tmp_path / f"{number}.toml").write_text(_sweep(f'"{version}"'))
        result = run_cli("run", str(tmp_path / f"{number}.toml"), "--db", str(db))
        assert result.returncode == 0, result.stdout + result.stderr
    store = Store(db)
    runs = [run.run_id for run in store.runs()]
    swept = {cell.technique: cell for cell in store.cells(runs[0])}
    store.close()
    debian_version = swept["wg version=debian"].bringup.negotiated["version"]
    assert debian_version.startswith("0.0.2022")  # Debian 12's package: 0.0.20220316-1+b4
    assert swept[f"wg version={CURRENT}"].bringup.negotiated["version"] == CURRENT

    report = run_cli("report", str(db), "--run", runs[0], "-o", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    assert f"wireguard-go {debian_version} (debian)" in page and f"wireguard-go {CURRENT} (go" in page
    # the versions story: the two builds side by side, the current one as a ratio to Debian's (untested: n = 1)
    side_by_side = page[page.index('<table class="builds" data-kind="wireguard">'):]
    side_by_side = side_by_side[:side_by_side.index("</table>")]
    assert "<td>tcp</td>" in side_by_side and ("Gbit/s" in side_by_side or "Mbit/s" in side_by_side)
    assert re.search(r"<small>\d+\.\d\d × untested</small>", side_by_side), side_by_side

    compared = run_cli("compare", f"{db}:{runs[1]}", f"{db}:{runs[2]}")
    assert compared.returncode == 0, compared.stderr
    change = f"wireguard-go {debian_version} (debian) → {CURRENT} (go"  # the same implementation: named once
    assert f"wg: version changed: {change}" in compared.stdout, compared.stdout

    trended = run_cli("trend", "--db", str(db), "--campaign", "wg-upgrade", "-o", str(tmp_path / "t.html"))
    assert trended.returncode == 0, trended.stderr
    page = (tmp_path / "t.html").read_text()
    assert change in page, page[:3000]


@pytest.mark.netns  # a machine test: sockets in /var/run/wireguard, which every namespace shares
def test_a_daemons_wait_reads_listening_sockets_and_never_unlinks_one_bound_but_not_yet_listening(tmp_path):
    """`wg show IFACE` unlinks a control socket whose connect is refused, and a daemon's socket
    refuses between its bind and its listen: waiting with `wg show` made wireguard-go fail ("Failed
    to listen on uapi socket"). listening_control_sockets reads /proc/net/unix instead."""
    os.makedirs(SOCKET_DIR, mode=0o700, exist_ok=True)
    names = [f"vpb{run_id_prefix()}sk{os.getpid() % 10000}{tag}" for tag in "abc"]
    paths = [f"{SOCKET_DIR}/{names[0]}.sock", f"{SOCKET_DIR}//{names[1]}.sock", f"{SOCKET_DIR}/{names[2]}.sock"]
    sockets = [socket.socket(socket.AF_UNIX) for _ in paths]
    try:
        for sock, path in zip(sockets, paths):
            sock.bind(path)
        sockets[0].listen()
        sockets[1].listen()  # boringtun's path, with its doubled slash
        here = ThisMachine(tmp_path)
        assert listening_control_sockets(here) >= set(names[:2])
        assert names[2] not in listening_control_sockets(here)
        assert os.path.exists(paths[2])  # the wait left the bound socket alone
        subprocess.run(["wg", "show", names[2]], capture_output=True)
        assert not os.path.exists(paths[2])  # what `wg show` does to it: the cause of the failures
    finally:
        for sock, path in zip(sockets, paths):
            sock.close()
            if os.path.exists(path):
                os.unlink(path)


@pytest.mark.skipif(not shutil.which("wg"), reason="wg (wireguard-tools) not installed")
def test_keys_made_in_process_are_the_ones_wg_accepts_and_derives():
    """The key pair vpnbench makes without `wg genkey`: `wg pubkey` derives the same public key
    from the private one (both clamp as X25519 does), and a pre-shared key is 32 bytes like `wg genpsk`'s."""
    import base64
    for _ in range(3):
        private, public = _x25519_keypair()
        derived = subprocess.run(["wg", "pubkey"], input=private, capture_output=True, text=True, check=True)
        assert derived.stdout.strip() == public
    assert len(base64.b64decode(_psk(), validate=True)) == 32 and _psk() != _psk()
