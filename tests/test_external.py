"""External encryptors: a fake bump in the wire (a wireguard-go pair vpnbench does not know
about, brought up by the technique's hooks) measured through, and a path that stalls."""

import json
import sys

import pytest

from bounds import assert_tcp_measured
from conftest import DATA, run_cli
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.tools import which
from vpnbench.testbeds.impair_backends import linkem_binary

HOOK = [sys.executable, str(DATA / "fake_encryptor.py")]
FAKE = {"kind": "external", "label": "fake-box", "device": "FakeCrypt 9000 (wireguard-go pair)",
        "cipher": "ChaCha20-Poly1305", "notes": "bump in the wire, configured by its own hook",
        "server_ipv4": "10.77.0.2", "server_ipv6": "fd77::2", "client_ipv4": "10.77.0.1",
        "wire_filter": "udp port 51999", "up_hook": [*HOOK, "up"], "down_hook": [*HOOK, "down"],
        "stall_timeout": "2s"}
MEASUREMENTS = [{"kind": "tcp", "duration": "1s"}, {"kind": "ping", "count": 5, "interval": "0.05s"}]


def campaign(tmp_path, techniques, impairments=()) -> str:
    data = {"campaign": {"name": "ext"}, "technique": techniques, "measurement": MEASUREMENTS}
    if impairments:
        data["impairment"] = list(impairments)
    campaign_from_dict(data)  # valid before it is run
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    return _toml(path, data)


def _toml(path, data) -> str:
    lines = []
    for section, entries in data.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            lines.append(f"[[{section}]]" if isinstance(entries, list) else f"[{section}]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]
    toml = path.with_suffix(".toml")
    toml.write_text("\n".join(lines) + "\n")
    return str(toml)


def export(tmp_path) -> list[dict]:
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "out.json"))
    return json.loads((tmp_path / "out.json").read_text())


@pytest.mark.parametrize("entry, expected", [
    ({"server_ipv4": "10.77.0"}, "technique[1].server_ipv4:"),
    ({"protection": "maybe"}, "technique[1].protection: 'maybe' is not allowed; allowed values: 'encrypted', "
                              "'integrity-only', 'none'"),
    ({"up_hook": "ip link"}, "technique[1].up_hook:"),
    ({"model": "x"}, "technique[1].model: unknown key"),
])
def test_bad_input_names_the_field(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict({"technique": [{"kind": "external", **entry}], "measurement": MEASUREMENTS})
    assert str(info.value).startswith(expected), str(info.value)


needs_wg = pytest.mark.skipif(not (which("wg") and which("wireguard-go")), reason="wireguard-go/wg not installed")


@needs_wg
@pytest.mark.netns
def test_measures_through_a_fake_encryptor_with_its_metadata(tmp_path, clean_machine):
    path = campaign(tmp_path, [FAKE, {"kind": "external", "label": "plain-path", "protection": "none"}])
    result = run_cli("run", path, "--db", str(tmp_path / "c.db"))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    cells = {(c["technique"], c["measurement"]): c for c in export(tmp_path)}
    assert len(cells) == 4
    for measurement in ("tcp", "ping"):
        cell = cells[("fake-box", measurement)]
        assert cell["status"] == "ok", cell["error"]
        assert cell["wire_check"] == "encrypted"  # marker absent, UDP 51999 seen
        assert cell["technique_params"]["device"] == "FakeCrypt 9000 (wireguard-go pair)"
        assert cell["negotiated"] == {"device": FAKE["device"], "cipher": "ChaCha20-Poly1305", "notes": FAKE["notes"]}
        assert cell["metrics"]["setup_time_s"] > 0
        assert "wireguard-go" in cell["hosts"]["client"]["procs_cpu_pct"]  # the device's CPU is visible
        plain = cells[("plain-path", measurement)]
        assert plain["status"] == "ok" and plain["wire_check"] == "cleartext"
    assert_tcp_measured(cells[("fake-box", "tcp")])


@needs_wg
@pytest.mark.netns
def test_a_path_that_stops_passing_traffic_fails_the_cell(tmp_path, clean_machine):
    if linkem_binary() is None:
        pytest.fail("linkem is not built: `make` builds it")
    path = campaign(tmp_path, [FAKE], [{"netem": "", "label": "ideal"}, {"netem": "loss 100%", "label": "dead"}])
    result = run_cli("run", path, "--db", str(tmp_path / "c.db"), timeout=120)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    cells = {(c["impairment"], c["measurement"]): c for c in export(tmp_path)}
    assert cells[("ideal", "tcp")]["status"] == "ok" and cells[("ideal", "ping")]["status"] == "ok"
    for measurement in ("tcp", "ping"):
        cell = cells[("dead", measurement)]
        assert cell["status"] == "failed"
        assert "no traffic for 2 s through FakeCrypt 9000" in cell["error"], cell["error"]


def test_hooks_failures_are_reported(tmp_path, clean_machine):
    broken = {"kind": "external", "label": "broken", "up_hook": [sys.executable, "-c", "import sys; "
              "print('switch said no', file=sys.stderr); sys.exit(3)"]}
    path = campaign(tmp_path, [broken])
    result = run_cli("run", path, "--db", str(tmp_path / "c.db"))
    assert result.returncode == 1
    cells = export(tmp_path)
    assert all(c["status"] == "failed" for c in cells)
    assert "up_hook exited with 3: switch said no" in cells[0]["error"]
