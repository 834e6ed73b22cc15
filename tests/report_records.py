"""Hand-made records shaped like a run's, for report tests and bench/report.py: a campaign's
cells with plausible numbers (throughput falls with delay and loss, tunnels below the baseline),
no machine touched."""

import random
from importlib import resources
from pathlib import Path

from vpnbench.campaign.spec import campaign_from_dict, measurement_label, technique_label
from vpnbench.store.database import Store
from vpnbench.store.records import Cell, Run, SeriesPoint, Trial

try:
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib

TECHNIQUE_SHARE = {"baseline": 1.0, "ipsec": 0.12, "wireguard": 0.09, "macsec": 0.6, "openvpn": 0.03}


def preset(name: str) -> dict:
    return tomllib.loads(resources.files("vpnbench.campaign.presets").joinpath(f"{name}.toml").read_text())


def records(spec: dict, repetitions: int | None = None, seed: int = 1, run_id: str = "hand") -> tuple[Run, list[Cell]]:
    """A finished run of `spec` (a campaign as TOML data) with one ok cell per point."""
    return campaign_records(campaign_from_dict(spec), repetitions, seed, run_id)


def campaign_records(campaign, repetitions: int | None = None, seed: int = 1,
                     run_id: str = "hand") -> tuple[Run, list[Cell]]:
    """A finished run of a Campaign (e.g. campaign.spec.rehearsal of a preset) with one ok cell per point."""
    rng = random.Random(seed)
    run = Run(run_id, campaign.name, campaign.source, {"vpnbench": "test"}, "2026-01-01T00:00:00", "2026-01-01T01:00:00",
              "finished")
    cells = []
    for technique in campaign.techniques:
        for impairment in campaign.impairments:
            for measurement in campaign.measurements:
                for repetition in range(1, (repetitions or campaign.info.repetitions) + 1):
                    cells.append(_cell(run, technique, impairment, measurement, repetition, rng, len(cells)))
    return run, cells


def _cell(run, technique, impairment, measurement, repetition, rng, number) -> Cell:
    params = impairment.params()
    delay_ms = 2 * (params["egress_spec"].get("delay_us") or 0) / 1000
    loss = (params["egress_spec"].get("loss_pct") or 0) / 100
    share = TECHNIQUE_SHARE.get(technique.kind, 0.5) * (0.93 + 0.0 if technique.kind == "baseline" else 1.0)
    capacity = 20e9 * share
    tcp = min(capacity, 1460 * 8 / max(delay_ms, 0.05) * 1e3 * 1.22 / max(loss, 1e-5) ** 0.5) * rng.gauss(1, 0.03)
    label = measurement_label(measurement)
    kind = measurement.kind
    if kind == "tcp":
        metrics = {"throughput_bps": tcp, "retransmits": rng.randrange(0, 50)}
    elif kind == "udp":
        rate = getattr(measurement, "rate", 4e8) or 4e8
        got = min(rate, capacity * rng.gauss(1, 0.03)) * (1 - loss)
        metrics = {"sender_throughput_bps": rate, "throughput_bps": got, "loss_pct": 100 * (1 - got / rate),
                   "jitter_ms": rng.uniform(0.01, 0.2)}
    elif kind == "setup":  # a bring-up: a handshake's round trips and a daemon's start
        setup = (0.2 + 3 * delay_ms / 1e3) / share ** 0.5 * rng.gauss(1, 0.05)
        metrics = {"setup_p50_s": setup, "setup_p95_s": setup * 1.3, "first_packet_p50_s": setup * 0.2,
                   "handshake_p50_s": setup * 0.5}
    else:
        rtt = delay_ms + 0.05 / share ** 0.2 * rng.gauss(1, 0.05)
        metrics = {"rtt_avg_ms": rtt, "rtt_p50_ms": rtt, "rtt_p99_ms": rtt * 1.2, "rtt_mdev_ms": 0.01,
                   "loss_pct": 100 * loss}
    hosts = {host: {"cpu_pct": rng.gauss(50, 1), "samples": 30, "cores": [0, 1], "cpu_steal_pct": 0.0}
             for host in ("client", "server")}
    return Cell(run.run_id, run.campaign, f"k{number}", technique_label(technique),
                {"kind": technique.kind, "backend": "userspace"}, impairment.label, params, kind, label,
                measurement.settings(), repetition, "2026-01-01T00:00:00", status="ok", metrics=metrics,
                hosts=hosts, finished_at="2026-01-01T00:00:30")


def store_records(db: Path, run: Run, cells: list[Cell], trials=None, series=None) -> None:
    """Write the run and its cells (and per cell key: trials, series points) to a results file."""
    store = Store(db)
    try:
        store.start_run(run)
        for cell in cells:
            cell.id = None
            store.save_cell(cell, {}, (trials or {}).get(cell.cell_key, ()))
            if series and cell.cell_key in series:
                store.add_series(cell.id, series[cell.cell_key])
    finally:
        store.close()


def udp_trials(knee: float, rng: random.Random) -> list[Trial]:
    """A rate sweep that delivers everything up to the knee and the knee's worth beyond it."""
    return [Trial(n, offered_bps=rate, data={"receiver_bps": min(rate, knee) * rng.gauss(1, 0.01)})
            for n, rate in enumerate(range(100_000_000, 1_000_000_001, 100_000_000), start=1)]


def rtt_points(mean: float, rng: random.Random, count: int = 50) -> list[SeriesPoint]:
    return [SeriesPoint("rtt_ms", i * 0.01, rng.gauss(mean, mean * 0.05)) for i in range(count)]


def archived_run(spec: dict, run_id: str, testbed: str, started_at: str, seed: int = 1,
                 throughput_scale: float = 1.0) -> tuple[Run, list[Cell]]:
    """A finished run of `spec` as a lab's archive holds it: on a named testbed (as a worker's run
    names it), started at `started_at`, its throughputs scaled (a slower build, a slower machine)."""
    run, cells = records(spec, seed=seed, run_id=run_id)
    run.environment = {"vpnbench": "test", "hostname": "lab", "testbed": {"kind": "ssh", "name": testbed}}
    run.started_at = started_at
    for cell in cells:
        cell.started_at = started_at
        if "throughput_bps" in cell.metrics and cell.technique != "baseline":
            cell.metrics["throughput_bps"] *= throughput_scale
    return run, cells


def store_versioned(db: Path, run: Run, cells: list[Cell], versions: dict[str, dict]) -> None:
    """store_records, with a bring-up per technique that names its daemon's build where `versions`
    (technique label -> negotiated record, daemon_version.py's keys) gives one."""
    from vpnbench.store.records import Bringup

    store = Store(db)
    try:
        store.start_run(run)
        bringups = {}
        for technique in dict.fromkeys(cell.technique for cell in cells):
            bringup = Bringup(run.run_id, technique, technique, "userspace", run.started_at,
                              negotiated=versions.get(technique, {}))
            bringups[technique] = store.save_bringup(bringup)
        for cell in cells:
            cell.id, cell.bringup_id = None, bringups[cell.technique]
            store.save_cell(cell)
    finally:
        store.close()


def daemon_build(implementation: str, version: str) -> dict:
    """A negotiated record naming a Debian build of a daemon, as a technique driving one stores it."""
    return {"implementation": implementation, "version": version,
            "build": {"source": "debian", "package": implementation, "version": f"{version}-1", "architecture": "amd64"}}
