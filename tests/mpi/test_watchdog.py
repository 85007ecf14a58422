#!/usr/bin/python3
"""Hang watchdog (run.distribution.timeout_s), with real processes: `mpirun -n 2` trains with
run.distribution.timeout_s = 5; after two updates rank 1 is stopped with SIGSTOP. Rank 0 then waits in a collective; the job must end non-zero
within timeout + 10 s of the stop, with rank 0's message naming the collective and the update, and no rank may
be left behind.

  test_watchdog.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import MPI_ENV, MPIRUN, make_network, parse_binaries, report, train_config  # noqa: E402
from test_preemption import rank_pids, rows  # noqa: E402

TIMEOUT = 5.0


def main():
    a = parse_binaries().parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_watchdog_")
    fails = []
    pids = {}
    try:
        net = os.path.join(tmp, "net")
        make_network(a.bin, net, neurons=120)
        cfg = train_config(os.path.join(tmp, "t.json"), net, os.path.join(tmp, "out"), 2, 100000,
                           {"mode": "mpi", "timeout_s": TIMEOUT})
        cmd = [MPIRUN, "-n", "2", "--oversubscribe", a.mpi_bin, "train", cfg, "--no-progress"]
        print("  $ " + " ".join(cmd), flush=True)
        p = subprocess.Popen(cmd, env=MPI_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        pids = rank_pids(p.pid, 2)
        metrics = os.path.join(tmp, "out", "metrics.csv")
        t0 = time.time()
        while rows(metrics) < 2 and p.poll() is None and time.time() - t0 < 300:
            time.sleep(0.01)
        os.kill(pids[1], signal.SIGSTOP)
        stopped = time.time()
        print(f"  rank 1 (pid {pids[1]}) stopped after {rows(metrics)} update(s)", flush=True)
        try:
            out, _ = p.communicate(timeout=TIMEOUT + 10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            fails.append(f"the job still ran {TIMEOUT + 10:g} s after the stop")
        took = time.time() - stopped
        print(f"  job ended {took:.1f} s after the stop, exit code {p.returncode}")
        m = re.search(r"rank 0: (MPI_\w+)[^\n]* of update (\d+) has not completed in 5 s \(run\.distribution\.timeout_s\)",
                      out)
        if p.returncode == 0:
            fails.append("the job exited 0")
        if not m:
            fails.append(f"no watchdog message of rank 0 naming the collective and the update:\n{out[-2000:]}")
        else:
            print(f"  message: {m.group(0)}")
        if took < TIMEOUT - 0.5:
            fails.append(f"the job ended {took:.1f} s after the stop, before the timeout")
    finally:
        for pid in pids.values():  # nothing may be left behind (a stopped rank would hang forever)
            deadline, state = time.time() + 10, None
            while time.time() < deadline:
                try:
                    state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
                except OSError:
                    state = None
                if state in (None, "Z", "X"):
                    break
                time.sleep(0.1)
            if state not in (None, "Z", "X"):
                fails.append(f"rank pid {pid} is still there (state {state}) 10 s after the job ended")
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
