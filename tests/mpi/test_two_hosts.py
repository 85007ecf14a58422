#!/usr/bin/python3
"""Two hosts: `dpointnet-mpi train` on two "hosts" over TCP, against the serial run.

The hosts are made on this machine: two Linux network namespaces, dpn2h-a-PID (10.200.0.1/24) and
dpn2h-b-PID (10.200.0.2/24), joined by one veth link (`dpn0` on both sides), each with `lo` up, its own
/etc/hosts naming both hosts (/etc/netns/NS/hosts, which `ip netns exec` mounts over /etc/hosts) and, for
the processes started there, its own UTS namespace whose hostname is the host's name. mpirun runs on host a
(as on the first node of an allocation) with a hostfile of the two names, one rank per host
(`--map-by ppr:1:node`); Open MPI reaches host b through its rsh launcher with tests/mpi/netns_agent.sh as the
"ssh" (`--mca plm_rsh_agent`), which starts the orted inside namespace b with a clean environment. The
transport is TCP only: `--mca pml ob1 --mca btl tcp,self` (no vader/sm shared memory, no UCX), with
`btl_tcp_if_include` and `oob_tcp_if_include` the veth subnet, so the ranks can talk only across the link.

Checks:
  * equivalence: the two-host run (2 x local batch 4) equals the serial run of the global batch 8 through
    `--gradient-check` (losses of three updates, every gradient, the weights after each update, terminal
    states): relative L2 below 1e-6 (docs/multi-gpu.md), and no sign-constraint violation;
  * two hosts: each rank reports (from a shell that execs the driver) its hostname, network namespace and
    addresses: rank 0 ran in namespace a with 10.200.0.1, rank 1 in namespace b with 10.200.0.2 (namespace
    identities compared with /run/netns/NS); both are local rank 0 (Open MPI saw two nodes); the agent
    launched the orted on host b;
  * TCP path: the veth counters grew in both directions by at least the exchanged gradients (3 updates x
    every trainable gradient x 4 bytes);
  * sample ownership: rank 0 drew [8k, 8k+4), rank 1 [8k+4, 8k+8) of update k+1.

Needs root and iproute2 (`ip`) and util-linux (`unshare`); without them it fails saying why (it does not
skip). The namespaces are removed at the end, on failure and on SIGTERM/SIGINT too; namespaces left by an
earlier run that was killed (its pid gone) are removed at the start.

  test_two_hosts.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi
"""
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import (MPI_ENV, MPIRUN, make_network, parse_binaries, read_h5, rel_l2, report, run,  # noqa: E402
                        train_config)

GLOBAL_BATCH = 8
UPDATES = 3
PREFIX = "dpn2h"
SUBNET = "10.200.0"
IFACE = "dpn0"
SYSTEM_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"
RUN_TIMEOUT = 180  # s; the run takes about 2 s
AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns_agent.sh")
# printed by every rank before it execs the driver: the evidence of where it ran
RANK_ID = ('echo "two_hosts: rank $OMPI_COMM_WORLD_RANK hostname $(cat /proc/sys/kernel/hostname) '
           'netns $(readlink /proc/self/ns/net) addresses $(ip -4 -o addr show scope global | '
           'awk \'{print $4}\' | tr \'\\n\' \' \')" >&2; exec "$@"')
# forwarded to the ranks when set (the agent gives host b a clean environment): scripts/test-sanitize's
# sanitizer settings (suppressions, report files) and its OpenMP wait policy
FORWARD_IF_SET = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "OMP_WAIT_POLICY")
# a batch scheduler's environment would make Open MPI take its hosts and launcher from there
SCHEDULER_VARS = ("SLURM_", "PBS_", "LSB_", "PE_HOSTFILE", "JOB_ID", "FLUX_", "PALS_")


def ip(*args, check=True):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"`ip {' '.join(args)}` failed ({r.returncode}): {r.stderr.strip()}")
    return r


def missing_prerequisites():
    why = []
    if os.geteuid() != 0:
        why.append("it must run as root (it creates network namespaces and a veth link; CI runs as root)")
    for tool, package in (("ip", "iproute2"), ("unshare", "util-linux")):
        found = shutil.which(tool) or shutil.which(tool, path=SYSTEM_PATH)
        if found is None:
            why.append(f"'{tool}' is not on PATH nor in {SYSTEM_PATH} (Debian package {package})")
        elif shutil.which(tool) is None:
            # e.g. /usr/sbin missing from a non-login PATH: the agent and the ranks call it by name too
            for env in (os.environ, MPI_ENV):
                env["PATH"] = os.path.dirname(found) + os.pathsep + env.get("PATH", "")
    return why


class Hosts:
    """Two network namespaces joined by a veth link; removed by down() whatever happened."""

    def __init__(self, tag):
        self.names = [f"{PREFIX}-a-{tag}", f"{PREFIX}-b-{tag}"]
        self.addrs = [f"{SUBNET}.1", f"{SUBNET}.2"]
        self.made_etc_netns = False

    def up(self):
        for ns in self.names:
            try:
                ip("netns", "add", ns)
            except RuntimeError as e:
                raise RuntimeError(f"cannot create the network namespace {ns}: {e}; the test needs root with "
                                   "CAP_SYS_ADMIN and CAP_NET_ADMIN (a privileged container or a VM)")
        a, b = self.names
        ip("link", "add", IFACE, "netns", a, "type", "veth", "peer", "name", IFACE, "netns", b)
        for ns, addr in zip(self.names, self.addrs):
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "addr", "add", f"{addr}/24", "dev", IFACE)
            ip("-n", ns, "link", "set", IFACE, "up")
        if not os.path.isdir("/etc/netns"):
            os.makedirs("/etc/netns")
            self.made_etc_netns = True
        hosts = "127.0.0.1 localhost\n" + "".join(f"{addr} {ns}\n" for ns, addr in zip(self.names, self.addrs))
        for ns in self.names:
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write(hosts)

    def netns_id(self, ns):
        return f"net:[{os.stat(f'/run/netns/{ns}').st_ino}]"

    def counters(self, ns):
        r = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{IFACE}/statistics/tx_bytes",
                            f"/sys/class/net/{IFACE}/statistics/rx_bytes"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cannot read the counters of {IFACE} in {ns}: {r.stderr.strip()}")
        tx, rx = (int(x) for x in r.stdout.split())
        return tx, rx

    def down(self):
        remove(self.names)
        if self.made_etc_netns:
            try:
                os.rmdir("/etc/netns")
            except OSError:
                pass


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def remove(names):
    """Ends the processes left in the namespaces (only ours: the namespaces are this test's), deletes the
    namespaces (which deletes the veth ends in them) and their /etc/netns files."""
    for ns in names:
        r = ip("netns", "pids", ns, check=False)
        pids = [int(p) for p in r.stdout.split() if p.isdigit()] if r.returncode == 0 else []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if pids:
            print(f"  ended {len(pids)} process(es) left in {ns}: {pids}", flush=True)
        deadline = time.time() + 5
        while pids and time.time() < deadline:
            pids = [p for p in pids if os.path.exists(f"/proc/{p}") and not zombie(p)]
            time.sleep(0.05)
        ip("netns", "del", ns, check=False)
        shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)


def remove_stale():
    """Namespaces of an earlier run of this test that was killed before its clean-up (its pid is gone)."""
    r = ip("netns", "list", check=False)
    stale = []
    for line in r.stdout.splitlines():
        m = re.match(rf"({PREFIX}-[ab]-(\d+))\b", line)
        if m:
            try:
                os.kill(int(m.group(2)), 0)
            except ProcessLookupError:
                stale.append(m.group(1))
    if stale:
        print("  removing namespaces of an earlier, killed run: " + ", ".join(stale), flush=True)
        remove(stale)


def agent_path(tmp):
    """netns_agent.sh as Open MPI can exec it (executable, no white space in the path)."""
    if os.access(AGENT, os.X_OK) and not re.search(r"\s", AGENT):
        return AGENT
    dst = os.path.join(tmp, "netns_agent.sh")
    shutil.copy(AGENT, dst)
    os.chmod(dst, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return dst


def check_two_hosts(a, hosts, tmp, fails):
    ns_a, ns_b = hosts.names
    print(f"  hosts: {ns_a} {hosts.addrs[0]} ({hosts.netns_id(ns_a)}), {ns_b} {hosts.addrs[1]} "
          f"({hosts.netns_id(ns_b)}), veth {IFACE}", flush=True)
    net = os.path.join(tmp, "net")
    make_network(a.bin, net)
    serial_h5 = os.path.join(tmp, "serial.h5")
    cfg = train_config(os.path.join(tmp, "serial.json"), net, os.path.join(tmp, "o_serial"), GLOBAL_BATCH,
                       steps=UPDATES)
    run([a.bin, "train", cfg, "--gradient-check", serial_h5, "--gradient-check-updates", str(UPDATES)])

    hostfile = os.path.join(tmp, "hosts")
    with open(hostfile, "w") as f:
        f.write("".join(f"{ns} slots=1\n" for ns in hosts.names))
    two_h5 = os.path.join(tmp, "two_hosts.h5")
    cfg = train_config(os.path.join(tmp, "two_hosts.json"), net, os.path.join(tmp, "o_two_hosts"),
                       GLOBAL_BATCH // 2, steps=UPDATES, distribution={"mode": "mpi"},
                       global_batch=GLOBAL_BATCH)
    subnet = f"{SUBNET}.0/24"
    cmd = (["ip", "netns", "exec", ns_a, "unshare", "--uts", "/bin/sh", "-c",
            'echo "$0" > /proc/sys/kernel/hostname && exec "$@"', ns_a,
            MPIRUN, "--hostfile", hostfile, "-np", "2", "--map-by", "ppr:1:node",
            "--mca", "plm", "rsh", "--mca", "plm_rsh_agent", agent_path(tmp),
            "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
            "--mca", "btl_tcp_if_include", subnet, "--mca", "oob_tcp_if_include", subnet,
            "-x", "OMP_NUM_THREADS", "-x", "OMP_PROC_BIND",
            *[w for v in FORWARD_IF_SET if v in os.environ for w in ("-x", v)],
            "/bin/sh", "-c", RANK_ID, "sh",
            a.mpi_bin, "train", cfg, "--gradient-check", two_h5, "--gradient-check-updates", str(UPDATES)])
    agent_log = os.path.join(tmp, "agent.log")
    MPI_ENV["DPOINTNET_NETNS_AGENT_LOG"] = agent_log
    before = [hosts.counters(ns) for ns in hosts.names]
    t0 = time.time()
    try:
        r = run(cmd, check=False, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        print(out.decode(errors="replace")[-6000:] if isinstance(out, bytes) else out[-6000:])
        fails.append(f"the two-host run did not end within {RUN_TIMEOUT} s (killed; a blocked TCP path?)")
        return
    took = time.time() - t0
    after = [hosts.counters(ns) for ns in hosts.names]
    out = r.stdout + r.stderr
    if r.returncode != 0:
        print(out[-6000:])
        fails.append(f"the two-host run failed (exit code {r.returncode})")
        return
    print(f"  two-host run: {took:.1f} s", flush=True)

    # equivalence with the serial run of the global batch
    ref, got = read_h5(serial_h5), read_h5(two_h5)
    worst = 0.0
    for key in sorted(ref):
        if key not in got:
            fails.append(f"{key} missing from the two-host gradient check")
            continue
        e = rel_l2(got[key], ref[key])
        worst = max(worst, e)
        if e >= 1e-6:
            fails.append(f"{key}: relative L2 {e:.3e} (limit 1e-6)")
        print(f"  {'ok  ' if e < 1e-6 else 'FAIL'} two hosts 2 x 4 vs serial 8: {key} relative L2 {e:.3e}")
    print(f"  worst relative L2: {worst:.3e} (limit 1e-6)")
    if "check/sign_violations_all_replicas" in got and np.any(got["check/sign_violations_all_replicas"] != 0):
        fails.append("sign constraint violated on some replica")

    # the ranks ran on the two hosts
    seen = {int(m.group(1)): m.groups()[1:] for m in re.finditer(
        r"two_hosts: rank (\d+) hostname (\S+) netns (\S+) addresses ([^\n]*)", out)}
    for rank, (ns, addr) in enumerate(zip(hosts.names, hosts.addrs)):
        if rank not in seen:
            fails.append(f"rank {rank} did not report where it ran")
            continue
        hostname, netns, addrs = seen[rank]
        print(f"  rank {rank}: hostname {hostname}, {netns}, addresses {addrs.strip()}")
        if hostname != ns or netns != hosts.netns_id(ns) or f"{addr}/24" not in addrs.split():
            fails.append(f"rank {rank} ran on {hostname} in {netns} with {addrs.strip()}, not on {ns} in "
                         f"{hosts.netns_id(ns)} with {addr}")
    for rank in (0, 1):
        if not re.search(rf"rank {rank}: local rank 0 \(from OMPI_COMM_WORLD_LOCAL_RANK\)", out):
            fails.append(f"rank {rank} is not local rank 0 from OMPI_COMM_WORLD_LOCAL_RANK: Open MPI did not "
                         "see two nodes")
    launches = open(agent_log).read().splitlines() if os.path.exists(agent_log) else []
    for line in launches:
        print("  " + re.sub(r"\s+", " ", line))
    if not any(re.match(rf"netns_agent\.sh: launching on {re.escape(ns_b)} \(ip netns exec {re.escape(ns_b)}\):"
                        r".*(^|[\s/])orted\s", line) for line in launches):
        fails.append(f"the agent did not launch an orted on {ns_b}")

    # the TCP path: the gradients crossed the veth link both ways
    grad_bytes = UPDATES * 4 * sum(v.size for k, v in ref.items() if k.startswith("grad/"))
    a_to_b = after[0][0] - before[0][0]
    b_to_a = after[0][1] - before[0][1]
    print(f"  veth {IFACE}: {a_to_b} bytes {ns_a} -> {ns_b}, {b_to_a} bytes {ns_b} -> {ns_a} "
          f"(each at least the {grad_bytes} bytes of {UPDATES} FP32 gradient exchanges)")
    if min(a_to_b, b_to_a) < grad_bytes:
        fails.append(f"the veth link carried {a_to_b} / {b_to_a} bytes, less than the gradients' {grad_bytes}")
    if after[1][1] - before[1][1] != a_to_b:
        print(f"  note: {ns_b} received {after[1][1] - before[1][1]} bytes on {IFACE}")

    # sample ownership across the hosts
    ranges = re.findall(r"rank (\d+) replica 0: update (\d+) samples \[(\d+), (\d+)\)", out)
    owned = sorted((int(u), int(rk), int(lo), int(hi)) for rk, u, lo, hi in ranges)
    want = sorted((u, rk, (u - 1) * GLOBAL_BATCH + rk * 4, (u - 1) * GLOBAL_BATCH + rk * 4 + 4)
                  for u in range(1, UPDATES + 1) for rk in (0, 1))
    if owned != want:
        fails.append(f"sample ownership {owned}, expected {want}")
    if any(d.startswith("o_") for d in os.listdir(tmp)):
        fails.append("an output directory was created")


def main():
    a = parse_binaries().parse_args()
    why = missing_prerequisites()
    if why:
        print("  cannot run the two-host test: " + "; ".join(why), flush=True)
        return report([f"two-host test not run: {w}" for w in why])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    for k in list(MPI_ENV):
        if k.startswith(SCHEDULER_VARS):
            del MPI_ENV[k]
    t_start = time.time()
    remove_stale()
    tmp = tempfile.mkdtemp(prefix="dpointnet_two_hosts_")
    hosts = Hosts(os.getpid())
    fails = []
    try:
        hosts.up()
        check_two_hosts(a, hosts, tmp, fails)
    except (RuntimeError, OSError) as e:
        print(f"  two-host set-up failed: {e}", flush=True)
        fails.append(f"two-host test not run: {e}")
    finally:
        hosts.down()
        shutil.rmtree(tmp, ignore_errors=True)
        listed = [line.split()[0] for line in ip("netns", "list", check=False).stdout.splitlines() if line.split()]
        left = [ns for ns in hosts.names if ns in listed]
        if left:
            fails.append(f"namespaces left behind: {left}")
        print(f"  total {time.time() - t_start:.1f} s", flush=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
