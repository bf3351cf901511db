"""The validation's emulated cluster: one network namespace per node behind a router
namespace, every node's egress link emulated by linkemu (user-space NFQUEUE: a serialization
rate and a one-way delay), linkprobe's measure of the links, and the processes run in them.
The harness (harness.py) and gloo_collectives.py build their clusters here."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import IO, Any

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
MTU = 9000
# The emulated nodes' TCP congestion control, whatever the host's is (a new namespace takes
# the host's). dtperf's link is one stream: a node's exchanges cross its uplink in launch
# order. A loss-based control such as cubic (Linux's default) behind a deep FIFO queue comes
# close to that (measured, not traced: presumably the connection in flight has its window
# queued ahead of one that joins it, which starts again from slow start after idling). BBR
# paces every connection at its estimate of its share, so overlapping exchanges share the
# link: AER on 4x1 at 100 Mbit/s and 2 ms ran 247 ms per iteration over 400 iterations
# under BBR (the measuring host's default), wandering between 190 and 310 ms per period;
# under cubic 183 ms (dtperf: 188).
CONGESTION_CONTROL = "cubic"


def sh(*args: str, check: bool = True, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), check=check, capture_output=True, text=True, **kw)


ALLOWED_CONGESTION_CONTROL = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"


class HostAllowance:
    """A namespace may make only an *allowed* congestion control its default: Linux refuses
    any other with "Operation not permitted" outside the host's own namespace
    (tcp_set_default_congestion_control in net/ipv4/tcp_cong.c: "Only init netns can set
    default to a restricted algorithm"). The allowed list is the host's
    (`net.ipv4.tcp_allowed_congestion_control`, typically the host's default and reno: a host
    running BBR refuses cubic in every namespace). While any Cluster that needs it is open,
    its control is added to that list, and the list is restored when the last one closes.
    The list is global: for that time unprivileged sockets on the host may also choose it
    (TCP_CONGESTION). `added` records whether it had to be."""

    users = 0
    before: str | None = None

    def __init__(self, congestion_control: str) -> None:
        self.added = False
        try:
            with open(ALLOWED_CONGESTION_CONTROL) as f:
                allowed = f.read().split()
        except OSError:
            return  # no list to extend: the namespace sysctl says what it says
        if congestion_control in allowed and HostAllowance.users == 0:
            return
        if HostAllowance.users == 0:
            HostAllowance.before = " ".join(allowed)
            with open(ALLOWED_CONGESTION_CONTROL, "w") as f:
                f.write(" ".join(allowed + [congestion_control]))
        HostAllowance.users += 1
        self.added = True

    def release(self) -> None:
        if not self.added:
            return
        self.added = False
        HostAllowance.users -= 1
        if HostAllowance.users == 0 and HostAllowance.before is not None:
            with open(ALLOWED_CONGESTION_CONTROL, "w") as f:
                f.write(HostAllowance.before)
            HostAllowance.before = None


class Cluster:
    """Namespaces for `nodes` nodes behind a router; node i is 198.18.i.2. Every node's TCP
    runs `congestion_control` (a new namespace would take the host's, which may be anything;
    see CONGESTION_CONTROL), set by the namespace's sysctl. Where the host's allowed list
    lacks it, the cluster adds it there for its lifetime (HostAllowance). Where the sysctl
    is refused even so, its error stops the set-up, unless `route_fallback`: then it is set
    on every route a node's connections take (`congctl`, which root may set). Not the
    default: on a 2-core machine that refuses the sysctl, the small grid run that way missed
    by 13-29 % (docs/VALIDATION.md). `congestion_control_set_by` says which way it was set
    ("sysctl", "sysctl, allowed on the host for the run" or "route")."""

    def __init__(self, nodes: int, tag: str, congestion_control: str = CONGESTION_CONTROL,
                 route_fallback: bool = False) -> None:
        self.nodes = nodes
        self.tag = tag
        self.router = f"{tag}sw"
        self.names = [f"{tag}n{i}" for i in range(nodes)]
        self.created: list[str] = []
        self.congestion_control_set_by = "sysctl"
        self.allowance: HostAllowance | None = None
        try:
            self._create(congestion_control, route_fallback)
        except BaseException:
            self.close()  # what was made before the failure
            raise

    def _create(self, congestion_control: str, route_fallback: bool) -> None:
        tag = self.tag
        self.allowance = HostAllowance(congestion_control)
        if self.allowance.added:
            self.congestion_control_set_by = "sysctl, allowed on the host for the run"
        sh("ip", "netns", "add", self.router)
        self.created.append(self.router)
        sh("ip", "netns", "exec", self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        for i, ns in enumerate(self.names):
            sh("ip", "netns", "add", ns)
            self.created.append(ns)
            by_sysctl = sh("ip", "netns", "exec", ns, "sysctl", "-qw",
                           f"net.ipv4.tcp_congestion_control={congestion_control}", check=not route_fallback
                           ).returncode == 0
            veth = f"{tag}s{i}"
            sh("ip", "link", "add", veth, "netns", self.router, "mtu", str(MTU), "type", "veth", "peer", "name",
               "eth0", "netns", ns, "mtu", str(MTU))
            sh("ip", "-n", self.router, "addr", "add", f"198.18.{i}.1/24", "dev", veth)
            sh("ip", "-n", self.router, "link", "set", veth, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "addr", "add", f"198.18.{i}.2/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "route", "add", "default", "via", f"198.18.{i}.1")
            if not by_sysctl:
                self._congestion_control_on_routes(ns, i, congestion_control)
                self.congestion_control_set_by = "route"
            sh("ip", "netns", "exec", self.router, "iptables", "-A", "FORWARD", "-i", veth, "-j", "NFQUEUE",
               "--queue-num", str(i))

    @staticmethod
    def _congestion_control_on_routes(ns: str, i: int, congestion_control: str) -> None:
        """`congctl` on every route a node's TCP connections take: to the other nodes (the
        default route and the node's subnet), and to itself (its address and loopback, for
        ranks on one node), each as the kernel made it."""
        address = f"198.18.{i}.2"
        cc = ["congctl", congestion_control]
        sh("ip", "-n", ns, "route", "replace", "default", "via", f"198.18.{i}.1", *cc)
        sh("ip", "-n", ns, "route", "replace", f"198.18.{i}.0/24", "dev", "eth0", "proto", "kernel", "scope", "link",
           "src", address, *cc)
        for target, dev, src in ((address, "eth0", address), ("127.0.0.0/8", "lo", "127.0.0.1"),
                                 ("127.0.0.1", "lo", "127.0.0.1")):
            sh("ip", "-n", ns, "route", "replace", "local", target, "dev", dev, "table", "local", "proto", "kernel",
               "scope", "host", "src", src, *cc)

    def address(self, node: int) -> str:
        return f"198.18.{node}.2"

    def close(self) -> None:
        for ns in reversed(self.created):
            sh("ip", "netns", "del", ns, check=False)
        self.created = []
        if self.allowance is not None:
            self.allowance.release()
            self.allowance = None


class Processes:
    """The processes started for a run, to stop at its end (or at exit)."""

    def __init__(self) -> None:
        self.live: list[subprocess.Popen[bytes]] = []

    def start(self, args: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(args, **kw)
        self.live.append(p)
        return p

    def stop(self, p: subprocess.Popen[bytes]) -> None:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop_all(self) -> None:
        for p in self.live:
            self.stop(p)


def cpu_ticks() -> list[int]:
    """The whole machine's CPU ticks since boot by kind (all cores; /proc/stat's first line:
    user, nice, system, idle, iowait, irq, softirq, steal, ...)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def cpu_busy_s() -> float:
    """Seconds of CPU time the whole machine has spent busy (all cores, /proc/stat)."""
    fields = cpu_ticks()
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def start_link_emulator(procs: Processes, cluster: Cluster, linkemu: str, rate_gbps: float, delay_us: int, work: str,
                        log: IO[str] | None = None, timeline: str | None = None) -> subprocess.Popen[bytes]:
    """linkemu in the router for every node's egress queue, returned once it is ready. Its
    packet and drop counts per queue go to `log` at exit (an open file), if given, and every
    packet's time on its link's transmitter to the file `timeline` (queue i is node i's
    egress), if given."""
    ready = os.path.join(work, "linkemu.ready")
    if os.path.exists(ready):
        os.remove(ready)
    emulator = procs.start(["ip", "netns", "exec", cluster.router, linkemu, "--queues",
                            ",".join(str(i) for i in range(cluster.nodes)), "--rate-gbps", str(rate_gbps),
                            "--delay-us", str(delay_us), "--mtu", str(MTU), "--buffer-bytes", "16000000",
                            "--ready-file", ready] + (["--timeline", timeline] if timeline else []),
                           stderr=log or subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(ready):
            break
        time.sleep(0.05)
    return emulator


@contextlib.contextmanager
def emulated_cluster(nodes: int, tag: str, linkemu: str, rate_gbps: float,
                     delay_us: int) -> Iterator[tuple[Cluster, Processes, str]]:
    """A cluster of `nodes` emulated nodes behind linkemu, with the processes started on it
    and a scratch folder: (cluster, processes, folder), all removed on leaving, whatever
    happened (the measurement scripts' set-up)."""
    work = tempfile.mkdtemp(prefix="dtperf-netns.")
    procs = Processes()
    cluster = Cluster(nodes, tag)
    try:
        start_link_emulator(procs, cluster, linkemu, rate_gbps, delay_us, work)
        yield cluster, procs, work
    finally:
        procs.stop_all()
        cluster.close()
        shutil.rmtree(work, ignore_errors=True)


def probe(cluster: Cluster, linkprobe: str, procs: Processes, work: str) -> dict[str, float]:
    """What the links deliver: a TCP stream and a one-byte ping-pong, node 0 -> node 1 and
    inside node 0 (loopback); and two streams at once node 0 -> node 1, as two ranks of a
    node crossing nodes together send them (`inter_two_flow_gbps`, their sum)."""
    server = procs.start(["ip", "netns", "exec", cluster.names[1], linkprobe, "serve", "--port", "5201"])
    local = procs.start(["ip", "netns", "exec", cluster.names[0], linkprobe, "serve", "--port", "5202"])
    time.sleep(0.3)

    def value(ns: str, *args: str) -> float:
        out = sh("ip", "netns", "exec", ns, linkprobe, *args).stdout.strip()
        return float(out.split("=")[-1])

    n0 = cluster.names[0]
    # The CPU the path costs per byte: the machine's busy time during the stream (sender,
    # receiver, the router and the link emulator), less what it does when idle.
    busy, wall = cpu_busy_s(), time.perf_counter()
    time.sleep(1.0)
    idle_load = (cpu_busy_s() - busy) / (time.perf_counter() - wall)
    busy, wall = cpu_busy_s(), time.perf_counter()
    inter_gbps = value(n0, "stream", "--host", cluster.address(1), "--port", "5201", "--seconds", "2")
    stream_busy = cpu_busy_s() - busy - idle_load * (time.perf_counter() - wall)
    measured = {
        "inter_gbps": inter_gbps,
        "inter_cpu_ns_per_byte": max(0.0, stream_busy) / (inter_gbps * 1e9 / 8 * 2.0) * 1e9,
        "inter_one_way_us": value(n0, "pingpong", "--host", cluster.address(1), "--port", "5201", "--count", "50"),
        "intra_gbps": value(n0, "stream", "--host", "127.0.0.1", "--port", "5202", "--seconds", "1"),
        "intra_one_way_us": value(n0, "pingpong", "--host", "127.0.0.1", "--port", "5202", "--count", "200"),
    }
    pair = [procs.start(["ip", "netns", "exec", n0, linkprobe, "stream", "--host", cluster.address(1), "--port",
                         "5201", "--seconds", "2"], stdout=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=30)[0].decode() for p in pair]
    if any(p.returncode != 0 for p in pair):
        raise RuntimeError("linkprobe: two streams at once failed")
    measured["inter_two_flow_gbps"] = sum(float(out.strip().split("=")[-1]) for out in outs)
    procs.stop(server)
    procs.stop(local)
    return measured
