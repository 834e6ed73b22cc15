"""The `vpnbench` command.

Each command imports what only it needs inside its function: `vpnbench --help`, a bad argument
and the quick commands answer without loading the store (SQLAlchemy), the runner (~0.5 s), the
report (matplotlib, pandas: ~1.3 s), doctor or the lab queue.
"""

import argparse
import gc
import importlib
import json
import math
import os
import sys
import textwrap
import tomllib
import warnings
from importlib import resources as package_files
from pathlib import Path

from rich.console import Console

from vpnbench.campaign import REHEARSAL_SECONDS, Campaign, campaign_from_dict, load_campaign, rehearsal
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.terminal_text import plain
from vpnbench.measure import MEASUREMENTS
from vpnbench.techniques import TECHNIQUES

# Tables are wide; a pipe or CI log should not wrap them into unreadable columns: 160, or COLUMNS where set.
console = Console(width=None if sys.stdout.isatty()
                  else int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 160)
err_console = Console(stderr=True)
DB_URL = "postgresql://…"
DEFAULT_DB = "vpnbench.db"  # what `run` writes and every reading command reads when no database is named
EXPORT_FORMATS = ("json", "csv", "parquet")
SITE_REPORTS = 20  # views.site.REPORTS, said here so `vpnbench --help` need not load the views

# One grammar, said once: the database, -o and --run mean the same in every command.
GRAMMAR = f"""\
one grammar:
  results     a positional FILE or --db (or --db-file, $VPNBENCH_DB); default {DEFAULT_DB},
              the file `run` writes, so `vpnbench run … && vpnbench report` needs no --db
  -o/--output the file a command writes (report, export, compare, trend, keygen; site: a directory)
  --run RUN   the run of a database a command reads (default: its newest); compare, which
              reads several, names each as FILE.db:RUN or URL#RUN

examples:
  vpnbench demo                                        # two techniques, a minute once installed
  vpnbench run --technique baseline,wireguard --measure tcp,ping --report first.html
  vpnbench report -o r.html                            # the newest run of {DEFAULT_DB}
  vpnbench export --format parquet                     # {DEFAULT_DB} -> vpnbench.parquet
"""

# Each command's examples, shown after its options (`vpnbench CMD --help`).
EXAMPLES = {
    "doctor": ["vpnbench doctor", "sudo vpnbench doctor --install test-set    # the builds the mesh preset needs",
               "vpnbench doctor --json"],
    "run": ["sudo vpnbench run demo",
            "sudo vpnbench run --technique baseline,wireguard --measure tcp,ping --repetitions 3 --report first.html",
            "sudo vpnbench run --technique baseline,wireguard --measure tcp --duration 5 --netem \"delay 20ms loss 1%\"",
            "sudo vpnbench run campaign.toml --rehearse", "sudo vpnbench run campaign.toml --resume"],
    "worker": ["sudo vpnbench worker --db-file ~/.vpnbench-db --testbed lab.toml",
               "sudo vpnbench worker --db-file ~/.vpnbench-db --testbed lab.toml --follow   # a service: job after job"],
    "keygen": ["vpnbench keygen -o ~/.vpnbench-key"],
    "status": ["vpnbench status --db-file ~/.vpnbench-db --all"],
    "cancel": ["vpnbench cancel --db-file ~/.vpnbench-db --queue 1a2b3c4d"],
    "scheduler": ["vpnbench scheduler --db-file ~/.vpnbench-db   # after run nightly.toml --queue --every '0 2 * * *'"],
    "demo": ["sudo vpnbench demo", "sudo vpnbench demo --db demo.db --report demo.html"],
    "report": ["vpnbench report                         # vpnbench.db's newest run -> vpnbench.html",
               "vpnbench report results.db -o r.html --run 3", "vpnbench report -o r.html --figures figures/"],
    "compare": ["vpnbench compare pi.db here.db:RUN -o compare.html", "vpnbench compare other.db   # with vpnbench.db"],
    "presets": ["vpnbench presets"],
    "export": ["vpnbench export --format csv              # vpnbench.db -> vpnbench.csv",
               "vpnbench export results.db --format parquet -o cells.parquet"],
    "cleanup": ["sudo vpnbench cleanup"],
    "provision": ["vpnbench provision lab.ini --check", "vpnbench provision lab.ini --campaign mesh"],
    "trend": ["vpnbench trend --campaign nightly -o trend.html"],
    "site": ["vpnbench site --db lab.db -o site/         # then open site/index.html",
             "vpnbench site --db lab.db -o site/ --reports 100"],
    "check": ["vpnbench check --against previous --threshold tcp.throughput_bps:-5% --junit check.xml"],
    "db": ["vpnbench db upgrade --db-file ~/.vpnbench-db"],
}


def with_examples(add_parser):
    """sub.add_parser giving every command its examples as an epilog, laid out as written."""
    def add(name, **kwargs):
        examples = EXAMPLES.get(name)
        if examples:
            kwargs.setdefault("epilog", "examples:\n" + "\n".join(f"  {line}" for line in examples))
            kwargs.setdefault("formatter_class", HelpFormatter)
        return add_parser(name, **kwargs)
    return add


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help text wrapped at spaces only: a kind named with a hyphen (wireguard-mesh) stays whole
    on its line, as a user copies it."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UserError(message)


def build_parser() -> Parser:
    parser = Parser(prog="vpnbench", description="Benchmark network encryption techniques side by side.",
                    formatter_class=HelpFormatter, epilog=GRAMMAR)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    sub.add_parser = with_examples(sub.add_parser)

    doctor = sub.add_parser("doctor", help="what this machine can run (its first line: the presets it can run now), "
                                           "and what to install")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--testbed", metavar="FILE",
                        help="ask every host of this campaign's ssh or vm testbed instead of this machine")
    doctor.add_argument("--install", metavar="NAME[@VERSION]", action="extend", nargs="+", default=[],
                        help="build daemons vpnbench builds into /opt/vpnbench/NAME/VERSION (skipped when built); "
                             "test-set: every pinned default the test suite needs")

    run = sub.add_parser("run", help="run a campaign")
    run.add_argument("campaign", nargs="?",
                     help="campaign TOML file or preset name (see `vpnbench presets`), or use --technique/--measure")
    add_db_options(run, f"results: an SQLite file or a {DB_URL} URL (default: $VPNBENCH_DB, else {DEFAULT_DB})")
    run.add_argument("--resume", action="store_true", help="continue the campaign's latest run, skipping finished cells")
    run.add_argument("--technique", metavar="KIND[,KIND...]",
                     help=f"comma-separated technique kinds, e.g. baseline,wireguard; allowed: {', '.join(TECHNIQUES)}")
    run.add_argument("--measure", metavar="KIND[,KIND...]",
                     help=f"comma-separated measurement kinds, e.g. tcp,udp,ping; allowed: {', '.join(MEASUREMENTS)}")
    run.add_argument("--duration", metavar="SECONDS", type=float,
                     help="with --technique/--measure: seconds of every measurement that has a duration, "
                          "and ping's count at its interval (default: each kind's own, e.g. tcp 10, ping 100 "
                          "x 0.2 s)")
    run.add_argument("--netem", metavar="SPEC", action="append",
                     help="with --technique/--measure: run every cell under this impairment, in netem's words "
                          "(e.g. \"delay 20ms loss 1%%\") or a profile name (docs/config.md); repeat for several")
    run.add_argument("--repetitions", type=int, help="repetitions of every cell")
    run.add_argument("--name", help="campaign name")
    run.add_argument("--report", metavar="FILE.html", help="also write the HTML report of the run "
                                                         "(or later: vpnbench report -o FILE.html)")
    run.add_argument("--skip-unavailable", action="store_true",
                     help="run the techniques this machine can run and record the others as unavailable "
                          "(the default for presets)")
    run.add_argument("--rehearse", action="store_true",
                     help="a few minutes' try of the whole campaign: every technique, every measurement once "
                          f"for {REHEARSAL_SECONDS:g} s, each impairment entry at both ends of its sweep; "
                          "stored as NAME-rehearsal")

    run.add_argument("--queue", action="store_true",
                     help=f"enqueue the campaign's blocks in the --db {DB_URL} database for `vpnbench worker`s "
                          "instead of running it here")
    run.add_argument("--signing-key", metavar="FILE", default=os.environ.get("VPNBENCH_SIGNING_KEY"),
                     help="with --queue: sign the job with this private key file (vpnbench keygen; "
                          "default: $VPNBENCH_SIGNING_KEY), so workers that trust its public key run it")
    run.add_argument("--expires", metavar="DURATION", default="7d",
                     help="with --queue and a signing key: workers start the job only within this time "
                          "(signed; 1m to 365d; default: 7d)")
    run.add_argument("--every", metavar="CRON",
                     help="with --queue: a schedule instead of one job, queued on this cron line by `vpnbench "
                          "scheduler` (five fields, and a sixth, last, for seconds: '0 2 * * *' nightly, '* * * * * */30' every 30 s)")

    worker = sub.add_parser("worker", help="run queued blocks on a testbed until the job is done")
    add_db_options(worker, f"the queue's {DB_URL} database (default: $VPNBENCH_DB)")
    worker.add_argument("--testbed", required=True, metavar="FILE",
                        help="this worker's [testbed] (a TOML file, root's), laid over the queued campaign's, "
                             "and its [worker] table: the keys it trusts, the privileged fields it allows")
    worker.add_argument("--queue", metavar="JOB", help="the job to work on (default: the oldest unfinished one)")
    worker.add_argument("--name", help="the testbed's name in results and reports (default: the file's name)")
    worker.add_argument("--lease", type=float, default=60.0,
                        help="seconds a block stays this worker's without a heartbeat (default: 60)")
    worker.add_argument("--follow", action="store_true",
                        help="keep taking jobs (each the oldest unfinished one this testbed may run), waiting for "
                             "new ones between them, until SIGTERM or SIGINT: a lab's service (docs/config.md)")

    keygen = sub.add_parser("keygen", help="make a key pair that signs queued jobs (run --queue --signing-key)")
    keygen.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the private key file (0600); FILE.pub beside it")

    cancel = sub.add_parser("cancel", help="cancel a queued job: its blocks stop between cells")
    add_db_options(cancel, f"the queue's {DB_URL} database (default: $VPNBENCH_DB)")
    cancel.add_argument("--queue", metavar="JOB", required=True, help="the job to cancel")

    scheduler = sub.add_parser("scheduler", help="queue each campaign on a schedule (run --queue --every) on its cron")
    add_db_options(scheduler, f"the queue's {DB_URL} database (default: $VPNBENCH_DB)")

    status = sub.add_parser("status", help="the queue: jobs, blocks, workers and their testbeds, ETA")
    add_db_options(status, f"the queue's {DB_URL} database (default: $VPNBENCH_DB)")
    status.add_argument("--queue", metavar="JOB", help="only this job")
    status.add_argument("--all", action="store_true", help="finished jobs too")

    demo = sub.add_parser("demo", help="run the demo campaign on a local namespace testbed")
    demo.add_argument("--db", default="vpnbench-demo.db", help="SQLite results file (default: vpnbench-demo.db)")
    demo.add_argument("--report", default="vpnbench-demo.html", metavar="FILE.html",
                      help="HTML report (default: vpnbench-demo.html)")

    report = sub.add_parser("report", help="write the HTML report of a run (tables and figures)")
    add_db_arguments(report)
    report.add_argument("-o", "--output", metavar="FILE.html",
                        help="output HTML file (default: the database's name with .html, e.g. vpnbench.html; "
                             "with --queue: JOB.html)")
    report.add_argument("--run", help="run id (default: the newest run in the database)")
    report.add_argument("--queue", metavar="JOB", help="a lab job's report: its testbeds side by side (PostgreSQL)")
    report.add_argument("--figures", metavar="DIR", help="also write every figure as SVG and PNG into DIR")
    report.add_argument("--timeseries", action="store_true",
                        help="a per-second time series figure for every cell (default: long cells only)")

    compare = sub.add_parser("compare", help="the same techniques side by side across runs or machines")
    compare.add_argument("runs", nargs="+", metavar="FILE.db[:RUN]",
                         help=f"results files (newest run, or :RUN) or {DB_URL} URLs (newest run, or #RUN); "
                              f"one alone is compared with $VPNBENCH_DB, else {DEFAULT_DB}")
    compare.add_argument("-o", "--output", metavar="FILE.html", help="also write the comparison as HTML")

    sub.add_parser("presets", help="the campaigns shipped with vpnbench (usable by name with `run`): their cells, "
                                   "expected time and the builds they need")

    export = sub.add_parser("export", help="export a results database as JSON, CSV or Parquet")
    add_db_arguments(export)
    export.add_argument("--format", choices=EXPORT_FORMATS, required=True, metavar="{" + ",".join(EXPORT_FORMATS) + "}",
                        help="json: a list of every cell with its run, parameters and metrics; csv: the same, one "
                             "flattened row per cell; parquet: the tidy metrics (a row per cell and metric), "
                             "every other table beside it as STEM.TABLE.parquet (series, trials, …)")
    export.add_argument("-o", "--output", metavar="FILE",
                        help="output file (default: the database's name with the format's suffix, e.g. vpnbench.csv)")

    sub.add_parser("cleanup", help="remove what killed runs left behind (namespaces, daemons, key files)")

    provision = sub.add_parser("provision", help="install what a campaign needs on an Ansible inventory's hosts")
    provision.add_argument("inventory", help="Ansible inventory (INI or YAML) naming the lab's hosts")
    provision.add_argument("--check", action="store_true", help="list what would change, change nothing")
    provision.add_argument("--campaign", help="campaign TOML file or preset name (default: everything any "
                                              "technique or measurement may need)")
    provision.add_argument("--hosts", help="comma-separated inventory host names (default: all)")
    provision.add_argument("--gen", action="append", default=[], metavar="ARCH=PATH",
                           help="a vpnbench-gen built for ARCH (e.g. aarch64=...); hosts of an architecture "
                                "without one build their own with cargo")
    provision.add_argument("--forks", type=int, default=5, help="hosts worked on at once (default: 5)")
    provision.add_argument("--trust-new-host-keys", action="store_true",
                           help="first contact: accept a host key known_hosts lacks and add it there "
                                "(ssh accept-new; a changed key is still refused)")

    trend = sub.add_parser("trend", help="every run of a campaign over time, with regressions and progressions")
    add_db_options(trend, f"results file or {DB_URL} URL holding the runs (default: $VPNBENCH_DB, else {DEFAULT_DB})")
    trend.add_argument("--campaign", required=True, help="the campaign's name")
    trend.add_argument("-o", "--output", metavar="FILE.html", help="also write the trend page with a figure per metric")
    trend.add_argument("--min-change", metavar="PCT",
                       help="tell a change point when its step is at least PCT %% of the level before "
                            "(default: when the step is beyond its standard error from the runs' own noise, "
                            "tested at 1 %% a series)")

    site = sub.add_parser("site", help="write the archive as a static site (open DIR/index.html, or publish DIR): "
                                       "campaigns, testbeds, a page per technique version, trends, runs, reports")
    add_db_arguments(site)
    site.add_argument("-o", "--output", metavar="DIR",
                      help="the site's directory, made if missing (default: the database's name with -site, "
                           "e.g. vpnbench-site)")
    site.add_argument("--reports", metavar="N", default=str(SITE_REPORTS),
                      help=f"write the full report of the newest N runs (default: {SITE_REPORTS}); every run has "
                           "a page of its cells either way (a report costs about a second a run)")
    site.add_argument("--min-change", metavar="PCT", help="the trend pages' threshold, as `trend --min-change`")

    gate = sub.add_parser("check", help="a CI gate: exit 1 when a run regressed against a reference, beyond its "
                                        "threshold and beyond the noise (docs/ci.md)")
    add_db_options(gate, f"results file or {DB_URL} URL holding the runs (default: $VPNBENCH_DB, else {DEFAULT_DB})")
    gate.add_argument("--run", help="the run checked (default: the newest in the database)")
    gate.add_argument("--against", required=True, metavar="RUN|previous|trend",
                      help="a run id, previous (the campaign's newest run before it) or trend (its last level)")
    gate.add_argument("--threshold", action="append", default=[], metavar="MEASUREMENT.METRIC:LIMIT",
                      help="e.g. tcp.throughput_bps:-5%% (may not fall by more than 5 %%), setup.setup_time_s:+20%%, "
                           "ping.rtt_avg_ms:off; over the campaign's [check] and the headline defaults (10 %%)")
    gate.add_argument("--junit", metavar="FILE.xml", help="also write the outcome as JUnit XML")

    db = sub.add_parser("db", help="the results database itself")
    db_sub = db.add_subparsers(dest="db_command", metavar="{upgrade}", required=True, parser_class=Parser)
    upgrade = db_sub.add_parser("upgrade", help="create or migrate the schema (as the database's owner), "
                                                "so that roles allowed only SELECT read it")
    add_db_options(upgrade, f"an SQLite file or a {DB_URL} URL (default: $VPNBENCH_DB)")
    return parser


def add_db_options(parser: argparse.ArgumentParser, help_text: str) -> None:
    """--db FILE/URL and --db-file FILE (a 0600 file holding the URL): a URL's password in argv
    is in every user's `ps` for as long as the command runs."""
    parser.add_argument("--db", metavar="DB", help=f"{help_text}; a URL's password belongs in $VPNBENCH_DB, "
                                                   "--db-file, $PGPASSWORD or ~/.pgpass, not here (ps shows argv)")
    parser.add_argument("--db-file", metavar="FILE", help="a file only you can read (0600) holding the database")


def add_db_arguments(parser: argparse.ArgumentParser) -> None:
    """The results a read-only command reads: a positional FILE, or --db FILE/URL, or --db-file, or $VPNBENCH_DB."""
    parser.add_argument("db_path", nargs="?", metavar="db",
                        help=f"results: an SQLite file or a {DB_URL} URL (default: $VPNBENCH_DB, else {DEFAULT_DB})")
    add_db_options(parser, "the same, as an option")


def database(args, default: str | None = DEFAULT_DB) -> str:
    """The database the command names: its FILE argument, --db or --db-file, else $VPNBENCH_DB,
    else default (the file `run` writes), said on stderr so the reader knows which file it read."""
    given = [value for value in (getattr(args, "db_path", None), args.db) if value]
    if len(set(given)) > 1 or (given and args.db_file):
        raise UserError(f"{args.command}: give the database once (a FILE, --db or --db-file)")
    if args.db_file:
        from vpnbench.store.db_url import read_url_file

        return read_url_file(args.db_file)
    if given:
        return given[0]
    if os.environ.get("VPNBENCH_DB"):
        return os.environ["VPNBENCH_DB"]
    if not default:
        raise UserError(f"{args.command}: give the database with --db or --db-file (or set VPNBENCH_DB)")
    if args.command != "run":
        if not Path(default).exists():  # one line: what was looked for, and how to name another
            raise UserError(f"--db: no database given, and the default {default} (what `vpnbench run` writes) does "
                            "not exist here; give a FILE, --db or --db-file, or set VPNBENCH_DB")
        err_console.print(f"{args.command}: reading {default} (no database given)", highlight=False)
    return default


def default_output(db: str, suffix: str) -> str:
    """-o when not given: the database file's name with this suffix, in the current directory
    (a server's URL: vpnbench.SUFFIX)."""
    from vpnbench.store.database import is_url

    return ("vpnbench" if is_url(db) else Path(db).stem) + suffix


def timed_by(params_class):
    """How --duration's seconds set a kind's parameters: its `duration`; or, for a kind that counts
    probes at an interval (ping), the count that fills the seconds at its default interval;
    None for a kind with neither."""
    fields = params_class.model_fields
    if "duration" in fields:
        return lambda seconds: {"duration": seconds}
    if "count" in fields and "interval" in fields:
        interval = fields["interval"].default
        return lambda seconds: {"count": max(1, math.ceil(seconds / interval - 1e-9))}
    return None


def campaign_from_flags(args) -> Campaign:
    if not args.technique or not args.measure:
        raise UserError("run: give a campaign file, or both --technique and --measure")
    kinds = [kind.strip() for kind in args.measure.split(",") if kind.strip()]
    measurements = [{"kind": kind} for kind in kinds]
    if args.duration is not None:
        if not (math.isfinite(args.duration) and args.duration > 0):
            raise UserError(f"--duration: seconds above 0 (e.g. 5), not {args.duration:g}")
        timed = [m for m in measurements if m["kind"] in MEASUREMENTS and timed_by(MEASUREMENTS[m["kind"]].Params)]
        if not timed and all(kind in MEASUREMENTS for kind in kinds):  # an unknown kind: the campaign's own line
            raise UserError(f"--duration: none of {', '.join(kinds)} has a duration; measurements that have one: "
                            + ", ".join(k for k, cls in MEASUREMENTS.items() if timed_by(cls.Params)))
        for measurement in timed:
            measurement.update(timed_by(MEASUREMENTS[measurement["kind"]].Params)(args.duration))
    data = {
        "campaign": {"name": args.name or "cli", **({"repetitions": args.repetitions} if args.repetitions else {})},
        "technique": [{"kind": kind.strip()} for kind in args.technique.split(",") if kind.strip()],
        "measurement": measurements,
    }
    if args.netem:
        # A profile's name as itself, anything else as netem's words: both checked like a campaign file's.
        from vpnbench.impair.profiles import PROFILES

        data["impairment"] = [{"profile": spec} if spec in PROFILES else {"netem": spec} for spec in args.netem]
    return campaign_from_dict(data)


def require_root(command: str) -> None:
    if os.geteuid() != 0:
        raise UserError(f"{command}: must run as root (it creates network namespaces); try: sudo vpnbench {command}")


def check_db_path(path: str) -> Path | str:
    """An SQLite file that can be made or written here; a server's URL is checked when it is opened."""
    from vpnbench.store.database import is_url

    if is_url(path):
        return path
    db = Path(path)
    try:
        if not db.parent.is_dir():
            raise UserError(f"--db: directory {str(db.parent)!r} does not exist")
        if db.exists() and not os.access(db, os.W_OK):
            raise UserError(f"--db: {path!r} is not writable")
    except PermissionError:
        raise UserError(f"--db: {path!r} is not accessible") from None
    return db


def preset_files() -> dict[str, object]:
    presets = package_files.files("vpnbench.campaign").joinpath("presets")
    return {entry.name.removesuffix(".toml"): entry for entry in sorted(presets.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".toml")}


def is_preset(name: str) -> bool:
    return not Path(name).exists() and name in preset_files()


def load_campaign_or_preset(name: str) -> Campaign:
    """A path when such a file exists, else a preset name, else the missing-file error."""
    if is_preset(name):
        return campaign_from_dict(tomllib.loads(preset_files()[name].read_text()))
    return load_campaign(name)


def ask_user(question: str) -> bool:
    """A yes/no question on an interactive terminal; never asked in a pipe or CI."""
    if not sys.stdin.isatty():
        return False
    err_console.print(f"{question} [y/N] ", end="")
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_presets() -> int:
    from rich.table import Table

    from vpnbench.commands.presets import duration_text, preset_needs

    table = Table("preset", "cells", "measuring", "builds (vpnbench doctor --install …)", "description",
                  title="presets (vpnbench run NAME)", title_justify="left")
    for name, campaign in presets().items():
        needs = preset_needs(campaign)
        table.add_row(name, str(needs.cells), duration_text(needs.measuring_seconds),
                      " ".join(needs.builds) or "none", campaign.info.description or "")
    console.print(table)
    console.print("measuring: the measurements' own time; bring-ups and impairment changes add to it. "
                  f"Files: {preset_files()['demo'].parent}", highlight=False)
    return 0


def presets() -> dict[str, Campaign]:
    """Every preset, validated. Their warnings (a study's weak IKE proposal, kept as asked) belong to
    running one, not to listing them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: campaign_from_dict(tomllib.loads(entry.read_text())) for name, entry in preset_files().items()}


def runnable_presets(report: dict) -> tuple[list[str], list[str]]:
    """The presets doctor's report says this machine can run whole, and the others."""
    from vpnbench.commands.presets import needed_builds, runnable

    available = {row["technique"] for row in report["techniques"] if row["available"]}
    built = {row["daemon"] for row in report["builds"] if row["installed"]}
    can, cannot = [], []
    for name, campaign in presets().items():
        kinds = {technique.kind for technique in campaign.techniques}
        (can if runnable(needed_builds(campaign), kinds, available, built) else cannot).append(name)
    return can, cannot


def presets_runnable_line(report: dict) -> str:
    """doctor's first line: the presets this machine can run now, whole (a preset run skips what
    is unavailable, so the others still run in part)."""
    can, cannot = runnable_presets(report)
    probed = "" if report["root"] else " (as this user: run as root to probe the kernel)"
    return (f"presets this machine can run now{probed}: {', '.join(can) or 'none'}"
            + (f"; in part only (see below): {', '.join(cannot)}" if cannot else ""))


def check_report_path(path: str | None, flag: str = "--report") -> Path | None:
    if path is None:
        return None
    out = Path(path)
    if not out.parent.is_dir():
        raise UserError(f"{flag}: directory {str(out.parent)!r} does not exist")
    return out


def cmd_report(db: str, output: str, run_id: str | None, figures: str | None = None, timeseries: bool = False) -> int:
    from vpnbench.views.report import write_report

    out = check_report_path(output)
    run_id = write_report(db, out, run_id, Path(figures) if figures else None, timeseries)
    console.print(f"wrote the report of run {plain(run_id)} to {out}")
    return 0


MAX_SENTENCES = 30


def cmd_compare(runs: list[str], output: str | None) -> int:
    from vpnbench.views.compare import terminal_table, version_lines, write_compare

    sources, rows = write_compare(runs, Path(output) if output else None)
    for source in sources:
        console.print(plain(source.title))
    console.print(terminal_table(sources, rows))
    for line in version_lines(rows):
        console.print(plain(line))
    sentences = [row.sentence for row in rows if row.sentence]
    for sentence in sentences[:MAX_SENTENCES]:
        console.print(plain(sentence))
    if len(sentences) > MAX_SENTENCES:
        console.print(f"… and {len(sentences) - MAX_SENTENCES} more (all in the HTML with -o)")
    if output:
        console.print(f"wrote the comparison to {output}")
    return 0


def cmd_run(campaign: Campaign, db_path: Path | str, resume: bool, report: Path | None = None,
            skip_unavailable: bool = False) -> int:
    from vpnbench.commands.startup import WarmUp
    from vpnbench.run.runner import Runner
    from vpnbench.store.database import Store, display_name, is_url

    created = not is_url(db_path) and not db_path.exists()
    store = Store(db_path)
    try:
        # The summary after the run needs pandas (~0.45 s to import): imported while the runner
        # builds the testbed (which mostly waits on `ip` and daemons), not after the last cell.
        with WarmUp(lambda: importlib.import_module("vpnbench.answers.verdicts")) as warm_up:
            outcome = Runner(campaign, store, resume=resume, console=err_console, skip_unavailable=skip_unavailable,
                             ask=ask_user, before_cells=warm_up.finish).run()
        from vpnbench.answers.verdicts import verdicts
        from vpnbench.views.tables import summary_tables  # imported by now (warmed during the run)

        cells = store.cells(outcome.run_id)
        answers = verdicts(cells)
        for table in summary_tables(cells, answers, width=console.width):  # fitted: split, never wrapped
            console.print(table)
        print_findings(answers.warnings, report, display_name(db_path))
    except UserError:
        if created and store.latest_run() is None:  # refused before anything ran: leave no empty file
            store.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db_path}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        store.close()
    unavailable = f", {outcome.unavailable} unavailable here" if outcome.unavailable else ""
    console.print(f"{outcome.ok} ok, {outcome.failed} failed, {outcome.skipped} skipped (already done){unavailable}"
                  f" — results in {display_name(db_path)} (run {outcome.run_id})")
    if report is not None:
        from vpnbench.views.report import write_report

        write_report(db_path, report, outcome.run_id, answers=answers)  # the answers the tables printed
        console.print(f"report: {report}")
    else:  # the next step, in the words that read this database back (none when it is the default)
        named = "" if str(db_path) in (DEFAULT_DB, os.environ.get("VPNBENCH_DB")) else f" {display_name(db_path)}"
        console.print(f"report: vpnbench report{named} -o FILE.html", highlight=False)
    if outcome.interrupted:
        return 130
    return 1 if outcome.failed else 0


FINDING_LINES = 20  # methodology findings the terminal shows: one screen; the report holds them all


def print_findings(warnings: list, report: Path | None, db: str) -> None:
    """The methodology findings, as many as fit in FINDING_LINES lines of this terminal, then one
    line saying where the rest are."""
    used, width = 0, max(console.width, 40)
    for index, warning in enumerate(warnings):
        text = f"methodology: {warning.message} ({warning.code})"
        lines, rest = math.ceil(len(text) / width), len(warnings) - index - 1
        if used + lines + (1 if rest else 0) > FINDING_LINES:
            where = report or f"the report (vpnbench report {db} -o FILE.html)"
            console.print(f"[yellow]methodology: {len(warnings) - index} more finding(s) in {plain(str(where))}[/]")
            return
        console.print(f"[yellow]methodology: {plain(warning.message)}[/] ({warning.code})")
        used += lines


def cmd_doctor(as_json: bool) -> int:
    from rich.table import Table

    from vpnbench.commands.doctor import diagnose, ipsec_rows

    report = diagnose()
    if as_json:
        report["presets_runnable"], report["presets_in_part"] = runnable_presets(report)
        print(json.dumps(report, indent=1))
        return 0
    console.print(presets_runnable_line(report), highlight=False)
    console.print(f"kernel {report['kernel']}, {report['cpus']} CPUs, root: {report['root']}; {report['pinning']}")
    tools = Table("tool", "available", "package / how to install", title="tools", title_justify="left")
    for tool in report["tools"]:
        tools.add_row(tool["name"], "yes" if tool["available"] else "[red]no[/]",
                      tool["package"] if tool["available"] else tool["install"])
    console.print(tools)
    techniques = Table("technique", "backend", "needs", "available", "why not", title="techniques",
                       title_justify="left")
    for row in report["techniques"]:
        techniques.add_row(row["technique"], row["backend"], row["needs"], "yes" if row["available"] else "[red]no[/]",
                           row["reason"])
    if not all(row["available"] for row in report["techniques"]):
        console.print("Kernel backends this machine lacks run in QEMU VMs: [testbed] kind = \"vm\" (docs/lab.md).")
    console.print(techniques)
    ipsec = Table("ipsec backend", "ciphers / features", "available", "why not", title="ipsec", title_justify="left")
    for row in ipsec_rows(report["ipsec"]):
        ipsec.add_row(*row[:2], row[2] if row[2] == "yes" else f"[red]{row[2]}[/]", row[3])
    console.print(ipsec)
    impairments = Table("impairment backend", "available", "auto picks it", "why not", title="impairments",
                        title_justify="left")
    for row in report["impairments"]:
        impairments.add_row(row["backend"], "yes" if row["available"] else "[red]no[/]", "yes" if row["auto"] else "",
                            row["reason"])
    console.print(impairments)
    daemons = Table("daemon", "pinned", "built here", "a build needs", "toolchain here", "buildable", "why not",
                    title="builds (vpnbench doctor --install NAME\\[@VERSION])", title_justify="left")
    for row in report["builds"]:
        daemons.add_row(row["daemon"], row["default"] or "", ", ".join(row["installed"]) or "none", row["needs"],
                        row["toolchain"], "yes" if row["buildable"] else "[red]no[/]", row["reason"])
    console.print(daemons)
    features = report["kernel_features"]
    console.print("kernel: " + ", ".join(f"{k} {'yes' if v else 'no'}" if isinstance(v, bool) else v
                                         for k, v in features.items()))
    return 0


def cmd_doctor_install(items: list[str]) -> int:
    """Build what is asked, one line each: "built in X s" or "cached"; while a build runs, its
    progress on stderr (the step a child process runs, as builds_install starts them)."""
    from vpnbench.commands.doctor import build_step
    from vpnbench.foundation.progress import LongWork, child_command
    from vpnbench.hosts.builds_install import install, parse_targets

    targets = parse_targets(items)
    require_root("doctor --install")
    with LongWork("build", total=len(targets), console=err_console,
                  watch=lambda: child_command(build_step)) as progress:
        for name, version in targets:
            progress.begin(f"{name} {version}")
            console.print(install(name, version).line(), highlight=False)
            progress.advance()
    return 0


def cmd_doctor_testbed(path: str, as_json: bool) -> int:
    """Host × capability table of an ssh or vm testbed; exit 1 when a host cannot be reached."""
    from rich.table import Table

    from vpnbench.campaign.spec import load_testbed
    from vpnbench.commands.doctor import diagnose_testbed

    spec = load_testbed(path)
    if spec.kind == "local":
        raise UserError("--testbed: the file's [testbed] kind is 'local'; use plain `vpnbench doctor`")
    require_root("doctor --testbed")
    report = diagnose_testbed(spec)
    if as_json:
        print(json.dumps(report, indent=1))
        return 1 if "error" in report else 0
    if "error" in report:
        console.print(f"[red]testbed ({spec.kind}) not reachable:[/] {report['error']}")
        return 1
    for key, value in report["facts"].items():
        console.print(f"{key}: {value}")
    roles = list(report["hosts"])
    table = Table("capability", *roles, title=f"{spec.kind} testbed", title_justify="left")
    table.add_row("kernel", *(report["hosts"][r]["kernel"] for r in roles))
    for capability in [k for k in report["hosts"][roles[0]] if k != "kernel"]:
        table.add_row(capability, *("yes" if report["hosts"][r][capability] else "[red]no[/]" for r in roles))
    console.print(table)
    return 0


def cmd_export(db: str, fmt: str, output: str) -> int:
    from vpnbench.store.database import Store, missing_file
    from vpnbench.views.export import export_csv, export_json, export_parquet

    if missing_file(db):
        raise UserError(f"export: database {db!r} does not exist")
    out = Path(output)
    if not out.parent.exists():
        raise UserError(f"-o: directory {str(out.parent)!r} does not exist")
    store = Store(db, read_only=True)
    try:
        count = {"json": export_json, "csv": export_csv, "parquet": export_parquet}[fmt](store, out)
    finally:
        store.close()
    console.print(f"wrote {count} cells to {out}")
    return 0


def min_change_share(text: str | None) -> float | None:
    """--min-change PCT as a share of the level (5 -> 0.05); None when not given."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1000:
        raise UserError(f"--min-change: a step in percent of the level before, above 0 and at most 1000 "
                        f"(e.g. 5), not {text!r}")
    return value / 100


def cmd_trend(db: str, campaign: str, output: str | None, min_change: str | None = None) -> int:
    from rich.table import Column, Table

    from vpnbench.answers import trend
    from vpnbench.foundation.progress import LongWork
    from vpnbench.store.database import Store, missing_file

    threshold = min_change_share(min_change)
    if missing_file(db):
        raise UserError(f"--db: database {db!r} does not exist")
    out = check_report_path(output, "-o")
    store = Store(db, read_only=True)
    try:
        with LongWork(f"trend of {campaign}: reading its runs", console=err_console):
            history = trend.load_history(store, campaign)
    finally:
        store.close()

    def searched(done: int, total: int) -> None:
        progress.set_total(total)
        progress.advance()

    with LongWork("series", console=err_console, may_count=True) as progress:
        progress.begin(f"{campaign}: change-point search")
        found = trend.trends(history, threshold, searched)
    rows, columns = trend.summary_rows(found), list(trend.SUMMARY_COLUMNS)
    version = columns.index("version")
    if all(row[version] == "–" for row in rows):  # no daemon named a version: no empty column taking width
        columns.pop(version)
        rows = [row[:version] + row[version + 1:] for row in rows]
    # Folded, never cut: a version is read whole (a Go pseudo-version is 34 characters).
    table = Table(*(Column(name, overflow="fold") for name in columns),
                  title=f"{plain(campaign)}: {len(history.runs)} runs")
    for row in rows:
        table.add_row(*map(plain, row))
    console.print(table)
    for unsearched in (t for t in found if t.note.startswith(trend.NOT_SEARCHED)):
        console.print(f"{plain(unsearched.key.title)}: {plain(unsearched.note)}")
    changes = sum(len(t.changes) for t in found)
    too_few = sum(trend.TOO_FEW in t.note for t in found)
    beyond = (f"at least {threshold:.1%} of the level" if threshold is not None
              else f"beyond the runs' noise at {trend.ALPHA:.0%} a series")
    console.print(f"{changes} change point(s) in {len(found)} series (steps {beyond}, at least {trend.MIN_SUPPORT} "
                  f"runs on each side)" + (f"; {too_few} series with too few runs to tell at a boundary" if too_few else ""))
    if out:
        out.write_text(trend.render_html(history, found))
        console.print(f"wrote the trend page to {out}")
    return 0


def site_directory(output: str) -> Path:
    """-o of `site`: a directory, new (its parent exists) or existing; never a file."""
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise UserError(f"-o: {output!r} is a file; the site is a directory (give a new or existing directory)")
    if not out.exists() and not out.parent.is_dir():
        raise UserError(f"-o: directory {str(out.parent)!r} does not exist")
    return out


def cmd_site(db: str, output: str, reports: str, min_change: str | None) -> int:
    """Everything checked and read before the first file is written: bad input writes nothing."""
    from vpnbench.answers.site import read_archive
    from vpnbench.foundation.progress import LongWork
    from vpnbench.store.database import Store, missing_file
    from vpnbench.views.site import write_site

    if not reports.isdigit():
        raise UserError(f"--reports: how many of the newest runs get a full report, 0 or more (e.g. 20), "
                        f"not {reports!r}")
    threshold = min_change_share(min_change)
    if missing_file(db):
        raise UserError(f"--db: database {db!r} does not exist")
    out = site_directory(output)
    store = Store(db, read_only=True)
    try:
        with LongWork("site: reading the archive", console=err_console) as progress:
            archive = read_archive(store, threshold, progress.begin)
        with LongWork("site", console=err_console, may_count=True) as progress:
            def written(what: str, done: int, total: int) -> None:
                progress.begin(f"{what} {done}/{total}")

            counts = write_site(archive, out, store, int(reports), written)
    finally:
        store.close()
    console.print(f"wrote the site of {counts['runs']} runs to {out}/index.html: {counts['techniques']} technique "
                  f"versions, {counts['trends']} trend pages, {counts['reports']} full reports", highlight=False)
    return 0


def cmd_db_upgrade(db: str) -> int:
    """The schema created or migrated, the lab's queue tables with it: what `run` and `worker`
    do on open, done once by the database's owner so readers need only SELECT."""
    from vpnbench.store.database import SCHEMA_VERSION, Store, is_url, missing_file

    if missing_file(db):
        raise UserError(f"db upgrade: database {db!r} does not exist")
    store = Store(db)
    try:
        if is_url(db):
            from vpnbench.lab.queue import WorkQueue

            WorkQueue(store)
    finally:
        store.close()
    console.print(f"{plain(store.name)}: results schema {SCHEMA_VERSION}" + (", queue tables ready" if is_url(db) else ""),
                  highlight=False)
    return 0


def cmd_cleanup() -> int:
    from vpnbench.hosts.resources import cleanup_stale

    removed = cleanup_stale()
    for item in removed:
        console.print(f"removed {item}")
    console.print(f"cleanup: {len(removed)} leftovers removed" if removed else "cleanup: nothing left behind")
    return 0


def cmd_provision(args) -> int:
    """What changed (or would), host by host; exit 1 when a host failed or was unreachable."""
    from vpnbench.provision import provision

    if args.forks < 1:
        raise UserError(f"--forks: {args.forks} is not allowed; allowed values: 1 or more")
    campaign = load_campaign_or_preset(args.campaign) if args.campaign else None
    outcome, needs = provision(args.inventory, args.check, campaign, args.hosts, args.gen, args.forks,
                               args.trust_new_host_keys)
    for line in outcome.lines:
        console.print(line, highlight=False)
    for line in outcome.failed:
        err_console.print(f"[red]{line}[/]", highlight=False, soft_wrap=True)  # a host's line stays one line
    what = f"{len(needs.packages)} packages" + (", vpnbench-gen" if needs.gen else "") + \
        (f", {len(needs.sysctls)} sysctls" if needs.sysctls else "")
    if args.check:
        verdict = f"{len(outcome.lines)} changes would be made" if outcome.lines else "no change needed"
    else:
        verdict = f"{outcome.changed_hosts} hosts changed" if outcome.changed_hosts else "no change"
    console.print(f"provision{' --check' if args.check else ''}: {outcome.hosts} hosts, {what}: {verdict}"
                  + (f"; {len(outcome.failed)} failed" if outcome.failed else ""), highlight=False)
    return 1 if outcome.failed else 0


def dispatch(args) -> int:
    if args.command == "doctor":
        if args.install:
            return cmd_doctor_install(args.install)
        if args.testbed:
            return cmd_doctor_testbed(args.testbed, args.json)
        return cmd_doctor(args.json)
    if args.command == "run":
        campaign = load_campaign_or_preset(args.campaign) if args.campaign else campaign_from_flags(args)
        if args.campaign and (args.technique or args.measure or args.repetitions or args.name
                              or args.duration is not None or args.netem):
            raise UserError("run: give either a campaign file or --technique/--measure flags "
                            "(with --duration, --netem), not both")
        if args.rehearse:
            campaign = rehearsal(campaign)
        if args.queue:
            if args.resume or args.report:
                raise UserError("run --queue: --resume and --report belong to a run here; workers continue a job")
            from vpnbench.commands.lab import enqueue

            return enqueue(campaign, database(args), console, args.signing_key, args.expires, args.every)
        report = check_report_path(args.report)
        require_root("run")
        skip = args.skip_unavailable or bool(args.campaign and is_preset(args.campaign))
        return cmd_run(campaign, check_db_path(database(args)), args.resume, report, skip)
    if args.command == "demo":
        campaign = load_campaign_or_preset("demo")
        report = check_report_path(args.report)
        require_root("demo")
        return cmd_run(campaign, check_db_path(args.db), resume=False, report=report)
    if args.command == "report":
        if args.queue:
            from vpnbench.commands.lab import report_job

            return report_job(database(args, None), args.queue, args.output or f"{args.queue}.html", console)
        db = database(args)
        return cmd_report(db, args.output or default_output(db, ".html"), args.run, args.figures, args.timeseries)
    if args.command == "compare":
        runs = args.runs
        if len(runs) == 1 and (os.environ.get("VPNBENCH_DB") or Path(DEFAULT_DB).exists()):
            runs = [os.environ.get("VPNBENCH_DB") or DEFAULT_DB, *runs]  # the one given, against what `run` wrote
            err_console.print(f"compare: {runs[1]} against {runs[0]} (one results file given)", highlight=False)
        return cmd_compare(runs, args.output)
    if args.command == "presets":
        return cmd_presets()
    if args.command == "export":
        db = database(args)
        return cmd_export(db, args.format, args.output or default_output(db, f".{args.format}"))
    if args.command == "provision":
        return cmd_provision(args)
    if args.command == "trend":
        return cmd_trend(database(args), args.campaign, args.output, args.min_change)
    if args.command == "site":
        db = database(args)
        return cmd_site(db, args.output or default_output(db, "-site"), args.reports, args.min_change)
    if args.command == "check":
        from vpnbench.commands.check import cmd_check

        return cmd_check(database(args), args.run, args.against, args.threshold, args.junit, console)
    if args.command == "keygen":
        from vpnbench.commands.lab import keygen

        return keygen(args.output, console)
    if args.command in ("worker", "status", "cancel", "scheduler"):
        from vpnbench.commands import lab

        db = database(args, None)  # a queue is a server's database: no file default
        if args.command == "cancel":
            return lab.cancel(db, args.queue, console)
        if args.command == "scheduler":
            return lab.scheduler(db, console)
        if args.command == "status":
            return lab.status(db, args.queue, args.all, console)
        require_root("worker")
        return lab.work(db, args.testbed, args.queue, args.name, args.lease, err_console, args.follow)
    if args.command == "db":
        return cmd_db_upgrade(database(args, None))
    if args.command == "cleanup":
        require_root("cleanup")
        return cmd_cleanup()
    raise AssertionError(args.command)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning about the user's settings is one line, not a trace into the library that raised it."""
    print(f"vpnbench: warning: {message}", file=sys.stderr if file is None else file)


def entry() -> int:
    """The `vpnbench` command: main, then the process ends. Freezing the heap first spares the
    interpreter's last collection a walk over every object pandas and pydantic made (~0.1 s of a
    short run's wall time, bench/overhead.py)."""
    code = main()
    gc.freeze()
    return code


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = show_warning
    try:
        args = build_parser().parse_args(argv)
        return dispatch(args)
    except UserError as exc:
        print(f"vpnbench: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("vpnbench: interrupted", file=sys.stderr)
        return 130
