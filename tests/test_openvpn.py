"""OpenVPN natively: every valid cipher x transport x mode through a real run, validation, key hygiene."""

import json
import stat

import pytest

from bounds import assert_tcp_measured
from conftest import run_campaign, run_cli
from timing import SLOWNESS
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.tools import which
from vpnbench.hosts.resources import RunResources
from vpnbench.run.bringup import SETUP_TIMEOUT, wait_through
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.openvpn import AEAD, CBC, OpenVPN, OpenVPNParams, is_ready, parse_negotiated, static_key_file
from vpnbench.testbeds.probe import LocalKernelProbe

needs_openvpn = pytest.mark.skipif(not which("openvpn"), reason="openvpn not installed (apt-get install openvpn)")

COMBOS = [(mode, cipher, transport)
          for transport in ("udp", "tcp")
          for mode, ciphers in (("tls", AEAD + CBC), ("static", CBC))
          for cipher in ciphers]


def campaign(techniques: list[dict]) -> dict:
    return {"campaign": {"name": "ovpn"}, "technique": techniques,
            "measurement": [{"kind": "tcp", "duration": "1s"},
                            {"kind": "udp", "rate": "20M", "duration": "1s", "length": 1200},
                            {"kind": "ping", "count": 5, "interval": "0.05s"}]}


@pytest.mark.parametrize("entry, expected", [
    ({"mode": "static", "cipher": "AES-256-GCM"},
     "technique[1].cipher: 'AES-256-GCM' is not allowed with mode = 'static' (OpenVPN refuses AEAD ciphers "
     "without TLS); allowed values: 'AES-256-CBC', 'AES-128-CBC'"),
    ({"mode": "static", "cipher": "CHACHA20-POLY1305"}, "allowed values: 'AES-256-CBC', 'AES-128-CBC'"),
    ({"cipher": "BF-CBC"}, "technique[1].cipher: 'BF-CBC' is not allowed; allowed values: 'AES-256-GCM'"),
    ({"transport": "sctp"}, "technique[1].transport: 'sctp' is not allowed; allowed values: 'udp', 'tcp'"),
    ({"transport": "tcp", "replay_window": 512}, "technique[1].replay_window: works only with transport = 'udp'"),
    ({"backend": "dco", "cipher": "AES-256-CBC"}, "technique[1].cipher: 'AES-256-CBC' is not allowed with backend"),
    ({"backend": "dco", "dev": "tap"}, "technique[1].dev: backend = 'dco' needs dev = 'tun'"),
    ({"tcp_nodelay": True}, "technique[1].tcp_nodelay: works only with transport = 'tcp'"),
    ({"dco": True, "backend": "userspace"},
     "technique[1].backend: 'userspace' contradicts dco = true; allowed values: 'auto', 'dco'"),
    ({"dco": False, "backend": "dco"}, "technique[1].backend: 'dco' contradicts dco = false"),
    ({"dco": True, "cipher": "AES-128-CBC"}, "technique[1].cipher: 'AES-128-CBC' is not allowed with backend = 'dco'"),
    ({"dco": True, "dev": "tap"}, "technique[1].dev: backend = 'dco' needs dev = 'tun'"),
    ({"dco": True, "fragment": 1300}, "technique[1].fragment: ovpn-dco has no --fragment: not allowed with dco = true"),
    ({"dco": "maybe"}, "technique[1].dco: 'maybe' is not allowed; allowed values: true, false"),
    ({"sndbuf": "fast"}, "technique[1].sndbuf:"),
    ({"ciphers": "x"}, "technique[1].ciphers: unknown key"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict(campaign([{"kind": "openvpn", **entry}]))
    assert expected in str(info.value) and str(info.value).startswith("technique[1]."), str(info.value)


def test_bad_input_exits_2_before_anything_is_touched(tmp_path):
    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "openvpn"\nmode = "static"\n'
                                     '[[measurement]]\nkind = "ping"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert "technique[1].cipher: 'AES-256-GCM' is not allowed with mode = 'static'" in result.stderr
    assert not (tmp_path / "c.db").exists()


def test_auto_backend_is_userspace_where_dco_cannot_carry_it():
    class NoDco:
        def has_link_type(self, kind, on_ethernet=False):
            return False

        def has_command(self, name):
            return which(name) is not None

    class Dco(NoDco):
        def has_link_type(self, kind, on_ethernet=False):
            return kind == "ovpn-dco"

    if not which("openvpn"):
        pytest.skip("openvpn not installed")
    assert OpenVPN.resolve_backend(OpenVPNParams(), NoDco()) == "userspace"
    assert OpenVPN.resolve_backend(OpenVPNParams(), Dco()) == "dco"
    static = OpenVPNParams(mode="static", cipher="AES-128-CBC")
    assert OpenVPN.resolve_backend(static, Dco()) == "userspace"
    assert OpenVPN.resolve_backend(OpenVPNParams(fragment=1300), Dco()) == "userspace"  # OpenVPN would disable DCO
    assert OpenVPNParams(dco=True).backend == "dco" and OpenVPNParams(dco=False).backend == "userspace"
    with pytest.raises(ValueError, match=r"kernel lacks ovpn-dco: apt-get install openvpn-dco-dkms \(builds"):
        OpenVPN.resolve_backend(OpenVPNParams(dco=True), NoDco())


def test_negotiated_is_read_from_the_log():
    tls = ("Control Channel: TLSv1.3, cipher TLSv1.3 TLS_AES_256_GCM_SHA384, peer certificate: 256 bits\n"
           "Data Channel: cipher 'AES-128-CBC', auth 'SHA256', peer-id: 0\n")
    assert parse_negotiated(tls) == {"cipher": "AES-128-CBC", "auth": "SHA256",
                                     "control_channel": "TLSv1.3 TLS_AES_256_GCM_SHA384"}
    aead = "Data Channel: cipher 'AES-256-GCM', peer-id: 0\n"
    assert parse_negotiated(aead) == {"cipher": "AES-256-GCM"}
    static = ("Data Channel Encrypt: Cipher 'AES-256-CBC' initialized with 256 bit key\n"
              "Data Channel Encrypt: Using 512 bit message hash 'SHA512' for HMAC authentication\n")
    assert parse_negotiated(static) == {"cipher": "AES-256-CBC", "auth": "SHA512"}
    # OpenVPN 2.6.14 (Debian 12's update) says it at verb 4 only, in other words
    newer = ("Outgoing Static Key Encryption: Cipher 'AES-128-CBC' initialized with 128 bit key\n"
             "Outgoing Static Key Encryption: Using 256 bit message hash 'SHA256' for HMAC authentication\n"
             "Incoming Static Key Encryption: Cipher 'AES-128-CBC' initialized with 128 bit key\n")
    assert parse_negotiated(newer) == {"cipher": "AES-128-CBC", "auth": "SHA256"}


def test_a_tls_daemon_is_ready_once_it_has_named_its_data_channel():
    """OpenVPN 2.6's p2p mode logs READY a moment before the data channel's cipher (stop 54's CI
    read a DCO client's log in between and recorded no cipher): TLS mode waits for both."""
    connected = "Initialization Sequence Completed\n"
    assert not is_ready(connected, "tls")
    assert is_ready(connected + "Data Channel: cipher 'AES-256-GCM', peer-id: 0\n", "tls")
    assert not is_ready("Data Channel: cipher 'AES-256-GCM', peer-id: 0\n", "tls")
    assert is_ready(connected, "static")  # static-key mode names its cipher before it connects


def test_static_keys_are_fresh_and_well_formed():
    one, two = static_key_file(), static_key_file()
    assert one != two
    lines = one.strip().splitlines()
    assert lines[0] == "-----BEGIN OpenVPN Static key V1-----" and lines[-1] == "-----END OpenVPN Static key V1-----"
    assert len(lines) == 18 and all(len(line) == 32 and int(line, 16) >= 0 for line in lines[1:-1])


@needs_openvpn
@pytest.mark.netns
def test_every_cipher_transport_mode_passes_traffic_and_the_proof(tmp_path, clean_machine):
    """14 combinations plus tap, an IPv6 underlay and the tuning passthrough: 16 techniques x 3 cells."""
    techniques = [{"kind": "openvpn", "label": f"{mode}-{cipher}-{transport}", "mode": mode,
                   "cipher": cipher, "transport": transport} for mode, cipher, transport in COMBOS]
    techniques += [{"kind": "openvpn", "label": "tap-v6", "dev": "tap", "family": "ipv6"},
                   {"kind": "openvpn", "label": "tuned", "cipher": "CHACHA20-POLY1305", "replay_window": 1024,
                    "sndbuf": "512K", "rcvbuf": "512K", "mssfix": 1400}]
    (tmp_path / "c.toml").write_text(_toml(campaign(techniques)))
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), timeout=400)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "static-key mode is deprecated" in result.stderr  # the static-key warning is shown
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "out.json"))
    cells = json.loads((tmp_path / "out.json").read_text())
    assert len(cells) == len(techniques) * 3
    for cell in cells:
        label = cell["technique"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        assert cell["technique_params"]["backend"] == "userspace"
        assert cell["negotiated"]["cipher"] == cell["technique_params"]["cipher"], label
        assert 0 < cell["metrics"]["setup_time_s"] < SETUP_TIMEOUT * SLOWNESS  # the run's own bring-up deadline
        assert all("openvpn" in cell["hosts"][role]["procs_cpu_pct"] for role in ("client", "server"))
        if cell["technique_params"]["mode"] == "static":
            assert "deprecated" in cell["negotiated"]["warning"]
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
            assert all(cell["hosts"][role]["procs_cpu_pct"]["openvpn"] > 0 for role in ("client", "server"))
        if cell["measurement"] == "udp":
            assert cell["metrics"]["received_packets"] > 0, label
        if cell["measurement"] == "ping":
            assert cell["metrics"]["loss_pct"] < 50, label


NAGLE = """
[campaign]
name = "nagle"
[testbed]
router = false
[[technique]]
kind = "openvpn"
label = "nagle"
transport = "tcp"
[[technique]]
kind = "openvpn"
label = "nodelay"
transport = "tcp"
tcp_nodelay = true
[[measurement]]
kind = "udp"
rate = "1G"
duration = "2s"
[[measurement]]
kind = "ping"
count = 50
interval = "0.001s"  # S5's 1000 pings a second
"""


@pytest.mark.exclusive  # alone: delays held to milliseconds
@needs_openvpn
@pytest.mark.netns
def test_tcp_nodelay_is_set_on_both_daemons_and_keeps_latency_low_after_a_flood(tmp_path, clean_machine):
    """After a flood, OpenVPN 2.6 over TCP with Nagle's algorithm sometimes holds each small
    packet back (10-13 ms a ping in two of four runs here, 0.15-0.2 ms in the others), so only
    the TCP_NODELAY side is asserted: each daemon's log confirms the flag, and pings stay fast."""
    _, cells = run_campaign(tmp_path, NAGLE)
    negotiated = {c["technique"]: c["negotiated"]["tcp_nodelay"] for c in cells}
    assert negotiated == {"nagle": False, "nodelay": True}
    ping = {c["technique"]: c["metrics"] for c in cells if c["measurement"] == "ping"}
    # Nagle's hold is 10-13 ms a ping: the floor shows its absence, the median (which a busy
    # host pushes up) only has to stay below the hold
    assert ping["nodelay"]["rtt_min_ms"] < 2 and ping["nodelay"]["rtt_p50_ms"] < 8, ping


def _toml(data: dict) -> str:
    """Just enough TOML for these campaigns (tables of scalars)."""
    def value(v):
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()
    out = ["[campaign]"] + [f"{k} = {value(v)}" for k, v in data["campaign"].items()]
    for section in ("technique", "measurement"):
        for entry in data[section]:
            out += ["", f"[[{section}]]"] + [f"{k} = {value(v)}" for k, v in entry.items()]
    return "\n".join(out) + "\n"


@needs_openvpn
@pytest.mark.netns
def test_keys_are_private_never_on_a_command_line_and_wiped(testbed):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources))
    technique = OpenVPN(OpenVPNParams(replay_window=2048, sndbuf="256K"), ctx)
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv6"], 10)
        secret_files = [p for p in ctx.resources.dir.iterdir() if p.suffix in (".key", ".crt")]
        assert {p.name for p in secret_files} == {"ovpn-ca.crt", "ovpn-server.key", "ovpn-server.crt", "ovpn-client.key",
                                                  "ovpn-client.crt", "ovpn-tls-crypt.key"}  # the CA key is gone
        assert not [p for p in ctx.resources.dir.iterdir() if p.name.startswith("ovpn-pki-")]  # made and wiped
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in secret_files)
        for proc in tunnel.procs:
            argv = open(f"/proc/{_openvpn_pid(proc.pid)}/cmdline").read().split("\0")
            assert "--replay-window" in argv and "2048" in argv and "262144" in argv  # passthrough
            assert "--disable-dco" in argv  # never DCO by accident where the module is loaded
            assert all(arg.startswith("/") for arg in argv if arg.endswith((".key", ".crt")))  # absolute paths
            assert not any("BEGIN" in arg for arg in argv)  # no key material on the command line
            for key in secret_files:
                assert key.read_text().strip() not in proc.output()  # nor in a log
        assert tunnel.negotiated["dco"] is False  # both devices are tun
        tunnel.procs[1].stop()
        assert "openvpn exited" in technique.failure()
    finally:
        technique.down()
    assert not [p for p in ctx.resources.dir.iterdir() if p.suffix in (".key", ".crt")]


def _openvpn_pid(wrapper_pid: int) -> int:
    """ip netns exec and taskset exec into openvpn, so the spawned pid is openvpn's."""
    assert open(f"/proc/{wrapper_pid}/comm").read().strip() == "openvpn"
    return wrapper_pid


DCO = """
[campaign]
name = "dco"
[[technique]]
kind = "openvpn"
label = "dco-udp"
dco = true
[[technique]]
kind = "openvpn"
label = "dco-tcp-chacha"
dco = true
transport = "tcp"
cipher = "CHACHA20-POLY1305"
[[technique]]
kind = "openvpn"
label = "no-dco"
dco = false
[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "ping"
count = 10
interval = "0.05s"
"""


@needs_openvpn
@pytest.mark.netns
@pytest.mark.vm
def test_dco_carries_traffic_in_the_kernel_and_records_it(tmp_path, clean_machine):
    """The ovpn-dco data path where the kernel has the module (the kernel VM, with Debian's
    openvpn-dco-dkms built for its kernel); dco = false beside it passes --disable-dco."""
    with RunResources() as resources:
        if not LocalKernelProbe(resources).has_link_type("ovpn-dco"):
            pytest.skip("this kernel lacks ovpn-dco: DCO runs in the kernel VM (make test-kernel)")
    _, cells = run_campaign(tmp_path, DCO)
    assert len(cells) == 6
    for cell in cells:
        label = cell["technique"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        dco = label != "no-dco"
        assert cell["technique_params"]["backend"] == ("dco" if dco else "userspace"), label
        assert cell["negotiated"]["dco"] is dco, (label, cell["negotiated"])  # each host's device kind
        assert cell["negotiated"]["cipher"] == cell["technique_params"]["cipher"], label
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
        else:
            assert cell["metrics"]["loss_pct"] < 50, label
