"""A technique and an impairment backend written only in this file show up everywhere a
built-in one does (doctor, the MTU expectation, host facts, the schema, the runner, the
methodology checks, the report and the export), with no other file edited: each is one class
and one registration, as the toy measurement kind of test_results_model.py is."""

import dataclasses
import json
import re
from typing import Literal

import pytest
from rich.console import Console

from vpnbench.foundation.errors import ImpairmentError, UserError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.tools import known_packages, missing_tool_reason
from vpnbench.impair.model import Impairment
from vpnbench.impair.registry import BACKENDS
from vpnbench.impair.spec import NetemSpec
from vpnbench.measure.rate_search import RateSearch, RateSearchParams
from vpnbench.measure.tcp import Tcp, TcpParams
from vpnbench.measure.udp import Udp, UdpParams
from vpnbench.techniques import TECHNIQUES, expect, is_reference, register
from vpnbench.techniques.base import BackendStatus, Technique, Tunnel
from vpnbench.techniques.overhead import UDP_HEADER, Expectation, expectation_of
from vpnbench.testbeds.impair_backends import ImpairmentBackend
from vpnbench.testbeds.probe import KernelProbe, NoProbe

PAD = 8  # the toy technique's pretend header


class PlainPadParams(TechniqueParams):
    kind: Literal["plainpad"] = "plainpad"


class PlainPad(Technique):
    """A toy technique: plain IP over the underlay, declaring an 8-byte encapsulation."""

    kind = "plainpad"
    Params = PlainPadParams
    description = "toy: plain IP, declared with an 8-byte header"
    versions = {"plainpad": "echo plainpad 1.0"}

    @classmethod
    def kernel_rows(cls, probe: KernelProbe) -> dict[str, bool]:
        return {"plainpad": True}

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        return expectation_of(lambda n: n + UDP_HEADER, underlay_mtu, None, False, f"plainpad: UDP {UDP_HEADER}")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [BackendStatus("userspace", True)]

    def up(self, backend: str) -> Tunnel:
        self.tunnel = Tunnel(backend, dict(self.ctx.underlay["server"]), dict(self.ctx.underlay["client"]),
                             "none", None)
        return self.tunnel

    def down(self) -> None:
        self.tunnel = None


class TbfBackend(ImpairmentBackend):
    """A toy impairment backend: a tbf qdisc on each endpoint's egress, for rate limits only."""

    name = "tbf"

    @classmethod
    def default_limit(cls, spec: dict) -> int | None:
        return 10

    @classmethod
    def unavailable(cls, probe) -> str | None:
        return None if cls.kernel_rows(probe)["tbf"] else "the kernel has no sch_tbf"

    @classmethod
    def kernel_rows(cls, probe) -> dict[str, bool]:
        # tbf, unlike netem, takes no qdisc without its rate, burst and latency
        return {"tbf": probe.accepts([["ip", "link", "set", "lo", "up"], ["tc", "qdisc", "add", "dev", "lo", "root",
                                      "tbf", "rate", "1mbit", "burst", "32kb", "latency", "50ms"]])}

    @classmethod
    def create(cls, testbed) -> "TbfBackend":
        return cls(testbed)

    def __init__(self, testbed):
        def own_iface(role: str) -> str:  # the endpoint's underlay interface, whichever end of its link
            return next(link.a_iface if link.a == role else link.b_iface for link in testbed.links
                        if role in (link.a, link.b))
        self.ends = {"egress": (testbed.client, own_iface("client")), "ingress": (testbed.server, own_iface("server"))}
        self.active: set[str] = set()

    def placement_of(self, impairment: Impairment) -> str:
        return "endpoints"

    def apply(self, impairment: Impairment) -> None:
        for direction, spec in (("egress", impairment.egress), ("ingress", impairment.ingress)):
            if dataclasses.replace(spec, rate_bps=0.0) != NetemSpec():
                raise ImpairmentError(f"tbf applies a rate only, not '{spec}'")
            host, iface = self.ends[direction]
            if spec.rate_bps:
                host.run(["tc", "qdisc", "replace", "dev", iface, "root", "tbf", "rate", f"{int(spec.rate_bps)}bit",
                          "burst", "32kb", "latency", "100ms"])
                self.active.add(direction)
            elif direction in self.active:
                host.run(["tc", "qdisc", "del", "dev", iface, "root"], check=False)
                self.active.discard(direction)


@pytest.fixture
def toy_technique():
    TECHNIQUES["plainpad"] = PlainPad
    yield
    del TECHNIQUES["plainpad"]


@pytest.fixture
def toy_backend():
    BACKENDS["tbf"] = TbfBackend
    yield
    del BACKENDS["tbf"]


def test_the_mtu_expectation_asks_the_technique(toy_technique):
    got = expect({"kind": "plainpad"}, 1500)
    assert (got.protocol_mtu, got.overhead, got.how) == (1500 - PAD, PAD, "plainpad: UDP 8")
    assert not is_reference({"kind": "plainpad"}) and is_reference({"kind": "baseline"})


def test_the_schema_allows_a_registered_backend_and_names_it_when_refusing(toy_technique, toy_backend):
    from vpnbench.campaign import campaign_from_dict

    pings = {**TBF_CAMPAIGN, "measurement": [{"kind": "ping", "count": 2}]}
    assert campaign_from_dict(pings).impairment_backend_asked() == "tbf"
    with pytest.raises(UserError, match=r"impairment\[1\]\.backend: 'tc' is not allowed; allowed values: "
                                        r"'auto', 'netem', 'linkem', 'tbf'"):
        campaign_from_dict({**pings, "impairment": [{"rate": "50mbit", "backend": "tc"}]})


def test_the_methodology_check_reads_the_backends_default_queue_limit(toy_backend):
    from vpnbench.answers.methodology import queue_below_bdp

    spec = {"delay_us": 20_000, "jitter_us": 0, "rate_bps": 100e6, "limit": None}
    cells = [{"impairment": "slow", "technique_params": {"kind": "baseline"}, "metrics": {},
              "impairment_params": {"backend": "tbf", "egress_spec": spec, "ingress_spec": spec}}]
    findings = queue_below_bdp(cells)
    assert len(findings) == 1 and "tbf's default queue limit of 10 packets" in findings[0].message


def test_auto_picks_a_registered_backend_where_the_built_in_ones_cannot_run(toy_backend):
    from vpnbench.testbeds.impair_backends import choose_backend

    class TbfOnly(NoProbe):  # a kernel with sch_tbf but no sch_netem
        def accepts(self, commands: list[list[str]]) -> bool:
            return "tbf" in commands[-1]

        def has_command(self, name: str) -> bool:
            return True

    assert choose_backend("auto", "ssh", TbfOnly()) == "tbf"  # netem missing, linkem local only
    with pytest.raises(UserError, match="'netem' is not available: the kernel has no sch_netem; "
                                        "allowed here: auto, tbf"):
        choose_backend("netem", "ssh", TbfOnly())


@pytest.mark.netns
def test_doctor_lists_the_toy_technique_and_backend(toy_technique, toy_backend, clean_machine):
    from vpnbench.commands.doctor import diagnose

    report = diagnose()
    assert {"technique": "plainpad", "backend": "userspace", "available": True, "needs": "",
            "reason": ""} in report["techniques"]
    assert report["kernel_features"]["plainpad"] is True and report["kernel_features"]["tbf"] is True
    assert {"backend": "tbf", "available": True, "reason": "", "auto": False} in report["impairments"]


TBF_CAMPAIGN = {"campaign": {"name": "toys", "repetitions": 1},
                "technique": [{"kind": "baseline"}, {"kind": "plainpad"}],
                "impairment": [{"label": "slow", "rate": "40mbit", "backend": "tbf"}]}


@pytest.mark.netns
def test_a_run_with_both_toys_records_facts_report_and_export(tmp_path, toy_technique, toy_backend,
                                                              clean_machine):
    from vpnbench.campaign import campaign_from_dict
    from vpnbench.run.runner import Runner
    from vpnbench.store.database import Store
    from vpnbench.views.export import export_json
    from vpnbench.views.report import write_report

    campaign = campaign_from_dict({**TBF_CAMPAIGN, "measurement": [
        {"kind": "mtu"}, {"kind": "tcp", "duration": "1s"}]})
    store = Store(tmp_path / "toys.db")
    outcome = Runner(campaign, store, console=Console(file=open("/dev/null", "w"))).run()
    assert (outcome.ok, outcome.failed) == (4, 0)
    facts = store.host_facts(outcome.run_id)
    assert {f.facts["versions"].get("plainpad") for f in facts} == {"plainpad 1.0"}  # each host asked
    cells = {(c.technique, c.measurement_label): c for c in store.cells(outcome.run_id)}
    mtu = cells[("plainpad", "mtu")].metrics
    assert (mtu["mtu_expected_bytes"], mtu["overhead_bytes"]) == (mtu["underlay_mtu_bytes"] - PAD, PAD)
    tcp = cells[("plainpad", "tcp")]
    assert tcp.impairment_params["backend"] == "tbf"
    assert tcp.metrics["throughput_bps"] < 40e6 * 1.1  # the toy backend's tbf really shaped it
    store.close()
    export_json(Store(tmp_path / "toys.db"), tmp_path / "toys.json")
    exported = json.loads((tmp_path / "toys.json").read_text())
    assert {r["technique"] for r in exported} == {"baseline", "plainpad"}
    write_report(tmp_path / "toys.db", tmp_path / "toys.html")
    html = (tmp_path / "toys.html").read_text()
    assert "plainpad" in html and re.search(r"tbf", html)


def test_a_class_is_known_by_its_registration_not_by_being_defined():
    """Defining a technique class reaches no global (not even the install hints); register()
    puts it in the registry and its packages in the hints."""
    class Hinted(PlainPad):
        kind = "hinted"
        packages = {"plainpadctl": "plainpad-tools"}

    assert "plainpadctl" not in known_packages() and "hinted" not in TECHNIQUES
    try:
        register(Hinted)
        assert TECHNIQUES["hinted"] is Hinted
        assert "apt-get install plainpad-tools" in missing_tool_reason("plainpadctl")
    finally:
        del TECHNIQUES["hinted"]


def test_an_instance_leaves_its_class_declared_tools_alone():
    """The class's `tools` are what doctor and the testbed check read; a cell's params choose
    what that cell needs (needed_tools), without writing over the class's declaration on the instance."""
    for cls, params, needed in ((Tcp, TcpParams(tool="iperf2"), (("iperf",), ("iperf", "ss"))),
                                (Udp, UdpParams(tool="gen"), ((), ())),
                                (RateSearch, RateSearchParams(tool="gen"), (("ip",), ("ip",))),
                                (Tcp, TcpParams(), (Tcp.tools, Tcp.server_tools))):
        measurement = cls(params)
        assert measurement.needed_tools() == needed
        assert not {"tools", "server_tools"} & set(vars(measurement)), cls
        assert measurement.tools is cls.tools
