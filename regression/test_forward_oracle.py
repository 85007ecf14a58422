#!/usr/bin/python3
"""Forward regression: dpointnet (C++) against the independent Python oracle on the same config.

  test_forward_oracle.py --bin build/dpointnet --case bmtk450 [--precision float64|float32]
  test_forward_oracle.py --bin build/dpointnet --case generated --generated-dir DIR

bmtk450: BMTK's point_450glifs (vendored in tests/data/bmtk) with its LGN spike file, dt = 1 ms, 1 s.
generated: a network made by `dpointnet generate` with Bernoulli LGN and Poisson background inputs (this
checks the counter-based random draws across the two implementations), batch 2.
--per-node-dynamics (generated): every V1 node gets its own V_th, C_m, tau_syn[4] and asc_amps[2] (its type's
values scaled by factors in [0.7, 1.3]) in /nodes/v1/0/dynamics_params (SONATA per-node overrides);
the oracle reads them with its own reader.
--double-alpha (generated): the node types of every other V1 population row become nest:glif_psc_double_alpha
(tau_syn_fast = tau_syn, tau_syn_slow = 3 tau_syn, amp_slow 0.25..0.4 per port).

float64 runs must agree exactly. float32 runs are compared and every difference is reported: the first
differing spike, and the fraction of spikes in common (which must stay above --min-common).
Prints 'N passed, M failed' and exits non-zero on failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from network_variants import add_per_node_dynamics, make_double_alpha

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BMTK = os.path.join(REPO, "tests", "data", "bmtk")


def read_spikes(path):
    out = {}
    with h5py.File(path, "r") as f:
        for pop in f["spikes"]:
            g = f["spikes"][pop]
            t = np.round(np.asarray(g["timestamps"][()], dtype=np.float64), 6)
            n = np.asarray(g["node_ids"][()], dtype=np.int64)
            out[pop] = set(zip(t.tolist(), n.tolist()))
    return out


def compare(a_path, b_path, label, exact, min_common):
    a, b = read_spikes(a_path), read_spikes(b_path)
    ok = True
    for pop in sorted(set(a) | set(b)):
        sa, sb = a.get(pop, set()), b.get(pop, set())
        common = len(sa & sb)
        frac = common / max(1, max(len(sa), len(sb)))
        first = min((sa ^ sb), default=None)
        print(f"  [{label}] population {pop}: dpointnet {len(sa)} spikes, oracle {len(sb)}, in common {common} "
              f"({100 * frac:.3f}%), first difference (t ms, node): {first}")
        if exact and sa != sb:
            ok = False
        if not exact and frac < min_common:
            ok = False
    return ok


def run(cmd, **kw):
    print("  $ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print(r.stdout[-3000:])
        print(r.stderr[-3000:])
        raise SystemExit(f"command failed with exit code {r.returncode}")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--case", choices=["bmtk450", "generated"], required=True)
    ap.add_argument("--precision", default="float64", choices=["float64", "float32"])
    ap.add_argument("--tstop", type=float, default=1000.0)
    ap.add_argument("--neurons", type=int, default=300)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--min-common", type=float, default=0.95)
    ap.add_argument("--per-node-dynamics", action="store_true")
    ap.add_argument("--double-alpha", action="store_true")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="dpointnet_oracle_")
    try:
        if args.case == "bmtk450":
            if not os.path.exists(os.path.join(BMTK, "point_450glifs", "config.circuit.json")):
                print(f"FAIL: test data missing: {BMTK}/point_450glifs (the vendored BMTK example, needed by "
                      "this test)")
                print("0 passed, 1 failed")
                return 1
            base = os.path.join(BMTK, "point_450glifs")
            cfg = {
                "network": os.path.join(base, "config.circuit.json"),
                "run": {"dt": 1.0, "tstop": args.tstop, "batch_size": 1, "precision": args.precision},
                "inputs": {"LGN_spikes": {"input_type": "spikes", "module": "sonata",
                                          "input_file": os.path.join(base, "inputs", "lgn_spikes.h5"),
                                          "node_set": "lgn"}},
                "output": {"output_dir": os.path.join(tmp, "cpp"), "spikes_file": "spikes.h5"},
            }
            batch = 1
        else:
            net = os.path.join(tmp, "net")
            run([args.bin, "generate", "--out", net, "--neurons", str(args.neurons), "--seed", "11",
                 "--tstop", str(args.tstop)])
            with open(os.path.join(net, "config.simulation.json")) as f:
                cfg = json.load(f)
            cfg["network"] = os.path.join(net, cfg["network"])
            cfg.setdefault("manifest", {})
            cfg["run"].update({"batch_size": args.batch, "precision": args.precision, "seed": 20261201})
            cfg["output"] = {"output_dir": os.path.join(tmp, "cpp"), "spikes_file": "spikes.h5"}
            batch = args.batch
            if args.per_node_dynamics:
                add_per_node_dynamics(net)
            if args.double_alpha:
                make_double_alpha(net)
        cfg_path = os.path.join(tmp, "sim.json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=1)
        run([args.bin, "simulate", cfg_path, "--no-progress"])
        run(["/usr/bin/python3", os.path.join(HERE, "run_oracle.py"), cfg_path, "--out", os.path.join(tmp, "oracle"),
             "--batch-size", str(batch)])
        exact = args.precision == "float64"
        ok = True
        for b in range(batch):
            cpp = os.path.join(tmp, "cpp", "spikes.h5" if batch == 1 else f"spikes_sample{b}.h5")
            orc = os.path.join(tmp, "oracle", f"spikes_sample{b}.h5")
            ok = compare(cpp, orc, f"{args.case} {args.precision} sample {b}", exact, args.min_common) and ok
        if batch > 1:
            s0 = read_spikes(os.path.join(tmp, "cpp", "spikes_sample0.h5"))
            s1 = read_spikes(os.path.join(tmp, "cpp", "spikes_sample1.h5"))
            if s0 == s1:
                print("  samples 0 and 1 are identical although their noise must differ")
                ok = False
        print(("PASS" if ok else "FAIL") + f": {args.case} {args.precision} "
              + ("(exact agreement required)" if exact else f"(>= {100 * args.min_common:.0f}% spikes in common)"))
        print(f"{1 if ok else 0} passed, {0 if ok else 1} failed")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
