"""File transfers (scp, sftp, http, ftp) through real servers in the namespace testbed."""

import json
import os

import pytest

import vpnbench
from conftest import VPNBENCH, assert_refused, leftovers, run_campaign, run_cli, stray_daemons
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import validate_model
from vpnbench.measure.transfer import TransferParams, progress_series
from vpnbench.measure.transfer_clients import curl_timings

CAMPAIGN = """
[campaign]
name = "transfer"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
backend = "userspace"
"""
PROTOCOLS = """
[[measurement]]
kind = "transfer"
protocol = "{protocol}"
direction = "{direction}"
size = "32M"
"""


@pytest.mark.netns
def test_every_protocol_through_baseline_and_wireguard(tmp_path, clean_machine):
    text = CAMPAIGN + "".join(PROTOCOLS.format(protocol=p, direction=d) for p, d in
                              (("scp", "download"), ("sftp", "upload"), ("http", "download"), ("ftp", "download")))
    text += PROTOCOLS.format(protocol="http", direction="download").replace('size = "32M"', 'size = "16M"\nparallel = 2')
    _, cells = run_campaign(tmp_path, text)
    assert len(cells) == 10 and all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    series = vpnbench.load(tmp_path / "c.db").series
    for technique in ("baseline", "wireguard"):
        mine = [c for c in cells if c["technique_params"]["kind"] == technique]
        for cell in (c for c in mine if c["measurement"] == "transfer"):
            m = cell["metrics"]
            p = cell["measurement_params"]
            assert m["bytes"] == p["size"] * p["parallel"]
            # No bound from iperf3's TCP through the same path: how far a file copy falls behind
            # memory-to-memory TCP is the machine's (scp's cipher is CPU-bound: 469 Mbit/s beside
            # iperf3's 33 Gbit/s on one host): bench/applications.py prints that ratio. The goodput must agree with what the copies' sizes on
            # disk, polled on their own, say: the bytes arrived, no more, by the time it was measured over.
            assert m["goodput_bps"] > 0 and m["goodput_bps"] == pytest.approx(m["bytes"] * 8 / m["seconds"])
            received = series[(series.cell_id == cell["cell_id"]) & (series.name == "received_bytes")]
            assert received.value.is_monotonic_increasing and received.value.iloc[-1] == m["bytes"], cell
            assert received.t.iloc[-1] == pytest.approx(m["seconds"], abs=1e-3)
            assert (received.value.iloc[:-1] <= m["bytes"]).all()
            assert 0 < m["ttfb_s"] <= m["seconds"]
            if p["protocol"] == "http":
                assert 0 < m["connect_s"] <= m["ttfb_s"]
            if p["protocol"] == "ftp":
                assert "connect_s" not in m  # curl's FTP connect timer is unreliable (curl/curl#22587)
            assert p["cipher"] == "aes128-gcm@openssh.com"


@pytest.mark.netns
def test_a_corrupted_copy_fails_its_cell(tmp_path, clean_machine):
    text = CAMPAIGN.replace('[[technique]]\nkind = "wireguard"\nbackend = "userspace"\n', "")
    text += PROTOCOLS.format(protocol="http", direction="download").replace("32M", "4M")
    (tmp_path / "c.toml").write_text(text)
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"),
                     env=dict(os.environ, VPNBENCH_TEST_CORRUPT_TRANSFER="1"))
    assert result.returncode == 1, result.stdout + result.stderr
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    [cell] = json.loads((tmp_path / "c.json").read_text())
    assert cell["status"] == "failed" and "sha256 mismatch" in cell["error"], result.stdout + result.stderr


@pytest.mark.netns
@pytest.mark.parametrize("protocol", ["scp", "http"])
def test_kill9_mid_transfer_then_cleanup_leaves_nothing(tmp_path, clean_machine, protocol):
    """sshd or nginx, the clients and the tmpfs files of a run killed mid-transfer are all removed."""
    import subprocess
    import time

    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "baseline"\n' + PROTOCOLS.format(
        protocol=protocol, direction="download").replace("32M", "2G"))
    proc = subprocess.Popen([*VPNBENCH, "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    server = "sshd" if protocol == "scp" else "nginx"
    while not any(name == server for _, name in stray_daemons()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the clients are running
    proc.kill()
    proc.wait()
    assert any(name == server for _, name in stray_daemons()), leftovers()
    assert any("tmpfs dir" in item for item in leftovers())
    assert run_cli("cleanup").returncode == 0
    assert leftovers() == []


@pytest.mark.parametrize("entry, message", [
    ('protocol = "nfs"', "measurement[1].protocol: 'nfs' is not allowed; allowed values: 'scp', 'sftp', 'http', 'ftp'"),
    ('size = 0', "measurement[1].size: 0 is not a positive size"),
    ('size = "100000G"', "measurement[1].size: 107374182400000 bytes x 2 files"),
    ('protocol = "http"\ndirection = "upload"', "direction: 'upload' is not allowed for protocol 'http'"),
    ('directory = "/nonexistent"\nsize = "1M"', "measurement[1].size: directory '/nonexistent' does not exist"),
    # the path goes into sshd, nginx and vsftpd configuration lines: no value may become a line of its own
    ('directory = "/dev/shm\\nAuthorizedKeysCommand /tmp/x"',
     "measurement[1].directory: '/dev/shm\\nAuthorizedKeysCommand"),
    ('directory = "/dev/shm\\u0007"',
     "measurement[1].directory: '/dev/shm\\x07' is not allowed; allowed: an absolute path"),
    ('directory = "/dev/shm;write_enable=YES"', "measurement[1].directory: '/dev/shm;write_enable=YES' is not allowed"),
    ('directory = "/dev/{shm}#"', "measurement[1].directory: '/dev/{shm}#' is not allowed"),
    ('directory = "dev/shm"', "measurement[1].directory: 'dev/shm' is not allowed"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, entry, message):
    assert_refused(tmp_path, f'[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "transfer"\n{entry}\n', message)


def test_size_is_checked_against_the_free_space_with_every_copy(tmp_path):
    free = os.statvfs("/dev/shm")
    half = free.f_bavail * free.f_frsize // 2
    validate_model(TransferParams, {"kind": "transfer", "size": half // 2, "parallel": 1}, "m")
    with pytest.raises(UserError, match="parallel|copies"):
        validate_model(TransferParams, {"kind": "transfer", "size": half // 2, "parallel": 4}, "m")


def test_cleanup_removes_a_killed_runs_tmpfs_files():
    from pathlib import Path

    from vpnbench.hosts.resources import remove_run

    cell = Path("/dev/shm/vpnbench-fe1fe1/0a0b0c")
    cell.mkdir(parents=True)
    (cell / "copy-1.bin").write_bytes(b"x" * 4096)
    removed = remove_run("fe1fe1")
    assert not cell.parent.exists() and removed == ["directory /dev/shm/vpnbench-fe1fe1"]


def test_curl_timings_are_the_mean_of_the_clients():
    outputs = ['{"time_connect":0.1,"time_starttransfer":0.3,"time_total":1.0}',
               'noise {"time_connect":0.3,"time_starttransfer":0.5,"time_total":2.0}']
    assert curl_timings(outputs) == pytest.approx({"connect_s": 0.2, "ttfb_s": 0.4, "curl_total_s": 1.5})


def test_progress_series_rates_over_whole_seconds():
    series = progress_series([(0.0, 0), (0.5, 100), (1.0, 250), (1.5, 300), (2.1, 400)])
    assert series["goodput_bps"] == [(1.0, 2000.0), (2.1, pytest.approx(150 * 8 / 1.1))]


@pytest.mark.netns
def test_a_scratch_directory_another_user_made_first_makes_the_cell_refuse(tmp_path, clean_machine):
    """The run id is public (/run/vpnbench is 0755): `nobody` watches for it and creates
    /dev/shm/vpnbench-<id> before the transfer cell. The cell refuses with one line naming the
    path and its owner, and root writes nothing into it (issue 21)."""
    import subprocess
    import time
    from pathlib import Path

    from test_safe_files import as_nobody
    from vpnbench.hosts.resources import run_id_prefix

    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "tcp"\n'
                                     'duration = "2s"\n' + PROTOCOLS.format(protocol="http", direction="download"))
    before = set(os.listdir("/run/vpnbench")) if os.path.isdir("/run/vpnbench") else set()
    proc = subprocess.Popen([*VPNBENCH, "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trap = None
    try:
        deadline = time.monotonic() + 30
        while trap is None:
            assert proc.poll() is None and time.monotonic() < deadline, "the run's directory never appeared"
            new = {run for run in set(os.listdir("/run/vpnbench")) - before  # ours, not a side-by-side worker's
                   if run.startswith(run_id_prefix())} \
                if os.path.isdir("/run/vpnbench") else set()
            if new:
                trap = Path("/dev/shm") / f"vpnbench-{new.pop()}"
                as_nobody(lambda: (os.mkdir(trap), os.chmod(trap, 0o777)))
            time.sleep(0.01)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, out + err
        run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
        tcp, transfer = json.loads((tmp_path / "c.json").read_text())
        assert tcp["status"] == "ok" and transfer["status"] == "failed"
        assert str(trap) in transfer["error"] and "uid 65534" in transfer["error"], transfer["error"]
        assert "\n" not in transfer["error"]
        assert os.listdir(trap) == []  # nothing of root's in it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if trap is not None and trap.exists():
            os.rmdir(trap)  # the other user's: cleanup rightly leaves it alone
