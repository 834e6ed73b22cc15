"""The namespace testbed on the real kernel."""

import time

import pytest

from vpnbench.hosts.base import Host
from vpnbench.hosts.resources import RUN_ROOT, RunResources, cleanup_stale
from vpnbench.measure.monitor import Monitor
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.spec import TestbedSpec, plan_pinning

pytestmark = pytest.mark.netns


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_client_reaches_server_through_the_router(testbed, family):
    server = testbed.underlay_addr("server", family)
    result = testbed.client.run(["ping", "-n", "-c", "2", "-i", "0.05", "-W", "1", server], check=False)
    assert result.ok, result.stdout + result.stderr
    assert "ttl=63" in result.stdout or "hlim=63" in result.stdout  # one hop: the router forwarded it


def test_direct_link_without_router(clean_machine):
    resources = RunResources()
    bed = LocalTestbed(TestbedSpec(router=False), resources)
    try:
        bed.up()
        assert bed.router is None
        out = bed.client.run(["ping", "-n", "-c", "1", "-W", "1", bed.underlay_addr("server", "ipv4")]).stdout
        assert "ttl=64" in out
        # no third box: each end is watched for what it sends (its incoming side shows what it decrypted)
        assert [(p.host.role, p.iface, p.direction) for p in bed.capture_points()] == [
            ("client", bed.links[0].a_iface, "out"), ("server", bed.links[0].b_iface, "out")]
        # Each veth end's index differs from its peer's (iflink): with equal ones the kernel delays
        # the carrier event and IPv6 stays deaf for up to a second (Testbed._veth).
        link = bed.links[0]
        client_index, client_peer = _indexes(bed.client, link.a_iface)
        server_index, server_peer = _indexes(bed.server, link.b_iface)
        assert (client_peer, server_peer) == (server_index, client_index)
        assert client_index != client_peer
    finally:
        bed.down()
        resources.close()


def _indexes(host: Host, iface: str) -> tuple[int, int]:
    out = host.run(["cat", f"/sys/class/net/{iface}/ifindex", f"/sys/class/net/{iface}/iflink"]).stdout.split()
    return int(out[0]), int(out[1])


def test_pinning_plan():
    cpus, note = plan_pinning("auto", 2)
    assert cpus == {"client": [0], "server": [1]} and "pinned" in note
    assert plan_pinning("auto", 1)[0] == {} and "cannot pin" in plan_pinning("auto", 1)[1]
    assert plan_pinning("off", 8)[0] == {}


def test_pinned_processes_run_on_their_cores(testbed):
    if testbed.client.cpus is None:
        pytest.skip("machine has a single CPU: nothing to pin")
    for host in (testbed.client, testbed.server):
        status = host.run(["grep", "Cpus_allowed_list", "/proc/self/status"]).stdout
        allowed = status.split()[-1]
        cpus = host.cpus
        assert allowed == (str(cpus[0]) if len(cpus) == 1 else f"{cpus[0]}-{cpus[-1]}")


def _seconds(word: str) -> float:
    """bash's `times` format: 0m0.990s."""
    minutes, seconds = word.rstrip("s").split("m")
    return 60 * float(minutes) + float(seconds)


# It reads each core's busy share (the server's must stay under 40 %): another test's load beside it
# lands on those cores (stop 58's run two at a time: the server's core 65 % busy)
@pytest.mark.exclusive
def test_monitor_attributes_cpu_to_the_busy_host(testbed):
    monitor = Monitor(testbed.hosts, 0.1)
    started = time.monotonic()
    monitor.start()
    # A busy loop in the client namespace for 1 s: a whole core where the core is free, less
    # where it is shared (a slower host). bash's `times` says what the loop really got.
    times = testbed.client.run(["bash", "-c", "timeout 1 sh -c 'while :; do :; done'; times"], check=False).stdout
    summary = monitor.stop()
    window = time.monotonic() - started
    user, system = (_seconds(word) for word in times.splitlines()[1].split())
    got = 100 * (user + system) / window  # the children's CPU: timeout and the loop
    client, server = summary["client"], summary["server"]
    assert got > 25, times  # the loop ran: the check below has something to see
    # at most what it got; at least half of it (the sampler misses the CPU after a process's last sample)
    assert 0.5 * got <= client["procs_cpu_pct"].get("sh", 0) <= 1.15 * got + 5, (got, client)
    assert server["proc_cpu_pct"] < 20, server
    if client["cpu_pinned"]:
        # the core-level figure holds at least the loop's share of the client's core
        assert client["cpu_pct"] >= 0.8 * client["procs_cpu_pct"].get("sh", 0) - 5, (got, client)
        if got > 75:  # the loop had its core to itself: no other load shares these cores
            assert client["cpu_pct"] > 60 and server["cpu_pct"] < 40, (got, client, server)
    assert client["samples"] >= 5
    assert client["mem_used_bytes"] > 0 and len(client["cpu_per_core_pct"]) == len(client["cores"])
    assert {"cpu_system_pct", "cpu_softirq_pct", "temperature_c", "freq_mhz"} <= client.keys()


def test_cleanup_leaves_live_runs_alone(clean_machine):
    resources = RunResources()  # owned by this (live) process
    try:
        assert cleanup_stale() == []
        assert resources.dir.exists()
    finally:
        resources.close()
    assert not (RUN_ROOT / resources.run_id).exists()


@pytest.mark.parametrize("udp", [False, True])
def test_listening_reads_the_namespace_socket_table(testbed, udp):
    """NetnsHost.listening answers from /proc without `ss`: false before the daemon binds, true
    after, and only for its port; `ss` (the default for remote hosts) agrees."""
    port = 5399
    script = (f"import socket,time; s=socket.socket(socket.AF_INET6, socket.{'SOCK_DGRAM' if udp else 'SOCK_STREAM'}); "
              f"time.sleep(0.3); s.bind(('::', {port})); {'' if udp else 's.listen(); '}time.sleep(5)")
    proc = testbed.server.spawn(["python3", "-c", script], name="listener")
    try:
        assert not testbed.server.listening(proc, port, udp)
        deadline = time.monotonic() + 5
        while not testbed.server.listening(proc, port, udp):
            assert time.monotonic() < deadline and proc.alive(), proc.output()
            time.sleep(0.005)
        assert not testbed.server.listening(proc, port + 1, udp)
        assert not testbed.client.listening(proc, port, udp)  # not the client's namespace
        assert Host.listening(testbed.server, proc, port, udp)
    finally:
        proc.stop(1)
