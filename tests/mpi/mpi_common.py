"""Shared helpers of the MPI tests: a generated network, a train config, running the drivers."""
import json
import os
import subprocess

import h5py
import numpy as np

MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
               OMP_PROC_BIND="false", OMPI_MCA_rmaps_base_oversubscribe="1")


def run(cmd, check=True, timeout=600):
    print("  $ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=MPI_ENV, timeout=timeout)
    if check and r.returncode != 0:
        print(r.stdout[-3000:])
        print(r.stderr[-3000:])
        raise SystemExit(f"command failed ({r.returncode})")
    return r


# The launcher: DPOINTNET_MPIRUN (tests/CMakeLists.txt sets it to the one found at configure time), else mpirun.
MPIRUN = os.environ.get("DPOINTNET_MPIRUN") or "mpirun"


def mpirun(n, args, **kw):
    return run([MPIRUN, "-n", str(n), "--oversubscribe"] + args, **kw)


def make_network(binary, out, neurons=60, seed=4, visual=False):
    """A generated network; visual: LGN units with the V1 model's filter attributes (2 x 1 tiles, 232 units)."""
    extra = ["--visual", "--lgn-tiles-x", "2", "--lgn-tiles-y", "1"] if visual else []
    run([binary, "generate", "--out", out, "--neurons", str(neurons), "--seed", str(seed)] + extra)


def train_config(path, net_dir, output_dir, batch, steps=3, distribution=None, global_batch=None, extra_train=None,
                 precision="float32"):
    c = json.load(open(os.path.join(net_dir, "config.simulation.json")))
    c["network"] = os.path.join(net_dir, c["network"])
    c["run"].update({"tstop": 40.0, "batch_size": batch, "seed": 12, "precision": precision})
    if distribution is not None:
        c["run"]["distribution"] = distribution
    if global_batch is not None:
        c["run"]["global_batch_size"] = global_batch
    c["output"] = {"output_dir": output_dir}
    c["train"] = {"steps": steps, "checkpoint_interval": 10,
                  "trainable": {"recurrent": True, "lgn": True, "bkg": True},
                  "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 5.0},
                             {"type": "VoltageRegularization", "cost": 0.1},
                             {"type": "WeightRegularization", "cost": 0.1}],
                  "optimizer": {"lr": 0.01}}
    if extra_train:
        c["train"].update(extra_train)
        if "epochs" in extra_train:  # epochs x steps_per_epoch instead of steps
            del c["train"]["steps"]
    json.dump(c, open(path, "w"), indent=1)
    return path


def read_h5(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, np.asarray(o[()])) if isinstance(o, h5py.Dataset) else None)
    return out


def rel_l2(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / d) if d > 0 else float(np.linalg.norm(a - b))


def parse_binaries(mpi_required=True):
    """The command line every MPI test takes: --bin (serial driver) and --mpi-bin (MPI driver)."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpi-bin", required=mpi_required)
    return ap


def rank_list(text):
    """Parses --ranks: a comma-separated list of positive rank counts ('' for none)."""
    import argparse
    try:
        ranks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of rank counts: '{text}'")
    if any(n < 1 for n in ranks):
        raise argparse.ArgumentTypeError(f"rank counts must be positive: '{text}'")
    return ranks


def add_ranks(ap, default, divides=None):
    """--ranks N: the one mpirun rank count of this run (tests/CMakeLists.txt registers .np1, .np2 and .np4
    entries, each running a single rank count). With divides, N must divide it (the global batch)."""
    def one(text):
        import argparse
        ranks = rank_list(text)
        if len(ranks) != 1 or (divides is not None and divides % ranks[0] != 0):
            raise argparse.ArgumentTypeError(
                f"--ranks takes one rank count{f' dividing {divides}' if divides else ''}: '{text}'")
        return ranks[0]
    ap.add_argument("--ranks", type=one, default=default, metavar="N",
                    help=f"mpirun -n rank count (default {default})")
    return ap


def report(fails):
    """Prints the failures and the closing 'N passed, M failed' line; returns the exit code."""
    for f in fails:
        print("FAIL: " + f)
    print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
    return 1 if fails else 0
