#!/usr/bin/python3
"""BMTK's legacy GLIF templates, with real processes, on the vendored point_450glifs network:

(dt = 0.1 ms, 500 ms.)
1. every GLIF v1 node type's template rewritten to nest:glif_lif_asc_psc with its NEST parameters unchanged: the
   spikes of `dpointnet simulate` equal those of the original network exactly, and the log says that the
   legacy template is read as nest:glif_psc;
2. every GLIF v1 node type given an Allen Cell Types neuron_config instead ("type": "GLIF", El_reference, th_inf,
   coeffs, ...: made here from the NEST parameters, with coefficients other than 1) under nest:glif_lif_asc_psc,
   against the same network with the NEST parameters that BMTK's converter (glif_utils.converter_builtin,
   transcribed below in its order of operations) computes from those configs: identical spikes;
   and the same under nest:glif_lif_psc (GLIF1, no after-spike currents);
3. an Allen config under nest:glif_psc is still refused, naming the file and pointing to the conversion.

  test_legacy_glif.py --bin build/dpointnet
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi"))
from mpi_common import report  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bmtk")


def bmtk_glif_lif_psc(config):
    """bmtk.simulator.pointnet.glif_utils.converter_builtin('nest:glif_lif_psc', config) (GLIF1)."""
    coeffs = config["coeffs"]
    return {
        "V_m": config["El"] * 1.0e03 + config["El_reference"] * 1.0e03,
        "V_th": coeffs["th_inf"] * config["th_inf"] * 1.0e03 + config["El_reference"] * 1.0e03,
        "g": coeffs["G"] / config["R_input"] * 1.0e09,
        "E_L": config["El"] * 1.0e03 + config["El_reference"] * 1.0e03,
        "C_m": coeffs["C"] * config["C"] * 1.0e12,
        "t_ref": config["spike_cut_length"] * config["dt"] * 1.0e03,
        "V_reset": config["El_reference"] * 1.0e03,
        "tau_syn": [5.5, 8.5, 2.8, 5.8],
        "spike_dependent_threshold": False,
        "after_spike_currents": False,
        "adapting_threshold": False,
    }


def bmtk_glif_lif_asc_psc(config):
    """bmtk.simulator.pointnet.glif_utils.converter_builtin('nest:glif_lif_asc_psc', config): GLIF1's parameters
    and the after-spike currents."""
    coeffs = config["coeffs"]
    return dict(bmtk_glif_lif_psc(config),
                asc_init=list(np.array(config["init_AScurrents"]) * 1.0e12),
                asc_decay=list(1.0 / np.array(config["asc_tau_array"]) * 1.0e-03),
                asc_amps=list(np.array(config["asc_amp_array"]) * np.array(coeffs["asc_amp_array"]) * 1.0e12),
                after_spike_currents=True)


def allen_config(nest):
    """An Allen neuron_config whose BMTK conversion is close to the NEST parameters (coefficients != 1)."""
    return {
        "type": "GLIF", "El_reference": nest["E_L"] * 1e-3 - 0.002, "El": 0.002, "dt": 5e-05,  # V_reset 2 mV < E_L
        "th_inf": (nest["V_th"] - nest["E_L"]) * 1e-3 / 1.1, "R_input": 1.0 / (nest["g"] * 1e-9) * 0.9,
        "C": nest["C_m"] * 1e-12 / 1.05, "spike_cut_length": round(nest["t_ref"] / 5e-05 * 1e-3),
        "init_AScurrents": [0.0, 0.0], "asc_tau_array": [1.0 / (d * 1e3) for d in nest["asc_decay"]],
        "asc_amp_array": [a * 1e-12 / 0.8 for a in nest["asc_amps"]],
        "coeffs": {"th_inf": 1.1, "G": 0.9, "C": 1.05, "asc_amp_array": [0.8, 0.8]},
    }


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1",
                                                                       OMP_PROC_BIND="false"), timeout=600)
    return r.returncode, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_legacy_glif_")
    fails = []
    try:
        def variant(name, rewrite):
            """A copy of the example whose v1 node types table rows go through rewrite(row, models_dir)."""
            root = os.path.join(tmp, name)
            shutil.copytree(DATA, root)
            net = os.path.join(root, "point_450glifs")
            models = os.path.join(root, "point_components", "cell_models")
            path = os.path.join(net, "network", "v1_node_types.csv")
            rows = list(csv.reader(open(path), delimiter=" "))
            head = rows[0]
            for r in rows[1:]:
                if dict(zip(head, r))["model_template"] == "nest:glif_psc":  # the GLIF types, not the others
                    rewrite(dict(zip(head, r)), r, head, models)
            with open(path, "w") as f:
                csv.writer(f, delimiter=" ", lineterminator="\n").writerows(rows)
            cfg = json.load(open(os.path.join(net, "config.simulation.json")))
            cfg["run"].update({"tstop": 500.0, "dt": 0.1})
            cfg["output"] = {"output_dir": os.path.join(root, "out"), "spikes_file": "spikes.h5", "log_file": "log.txt"}
            p = os.path.join(net, "sim.json")
            json.dump(cfg, open(p, "w"))
            rc, out = run([a.bin, "simulate", p])
            if rc != 0:
                fails.append(f"{name}: simulate exited {rc}: {out[-1500:]}")
                return None, out
            with h5py.File(os.path.join(root, "out", "spikes.h5"), "r") as f:
                g = f["spikes"][list(f["spikes"])[0]]
                return (np.asarray(g["node_ids"][()]), np.asarray(g["timestamps"][()])), out

        def template(tmpl):
            def rw(d, r, head, models):
                r[head.index("model_template")] = tmpl
            return rw

        def allen(tmpl, with_bmtk_conversion):
            def rw(d, r, head, models):
                nest = json.load(open(os.path.join(models, d["dynamics_params"])))
                cfgfile = "allen_" + d["dynamics_params"]
                conf = allen_config(nest)
                bmtk = bmtk_glif_lif_psc if tmpl == "nest:glif_lif_psc" or with_bmtk_conversion == "glif1" else \
                    bmtk_glif_lif_asc_psc
                json.dump(bmtk(conf) if with_bmtk_conversion else conf,
                          open(os.path.join(models, cfgfile), "w"))
                r[head.index("dynamics_params")] = cfgfile
                r[head.index("model_template")] = tmpl
            return rw

        base, _ = variant("original", lambda *args: None)
        legacy, out = variant("legacy_name", template("nest:glif_lif_asc_psc"))
        if base is not None and legacy is not None:
            same = all(np.array_equal(x, y) for x, y in zip(base, legacy))
            print(f"  nest:glif_lif_asc_psc with NEST parameters: {len(legacy[0])} spikes, identical: {same}")
            if not same or len(base[0]) == 0:
                fails.append("the legacy template name changed the spikes")
            if "model_template nest:glif_lif_asc_psc read as nest:glif_psc" not in out:
                fails.append("no log line for the legacy template")
        conv, out = variant("allen_converted_here", allen("nest:glif_lif_asc_psc", False))
        ref, _ = variant("bmtk_converted", allen("nest:glif_psc", True))
        if conv is not None and ref is not None:
            same = all(np.array_equal(x, y) for x, y in zip(conv, ref))
            print(f"  Allen configs under nest:glif_lif_asc_psc: {len(conv[0])} spikes, identical to BMTK's "
                  f"conversion: {same}")
            if not same or len(conv[0]) == 0:
                fails.append("the Allen-config conversion differs from BMTK's")
            if "(Allen GLIF config converted with BMTK's formulas)" not in out:
                fails.append("no log line for the Allen-config conversion")
        conv1, _ = variant("allen_glif1_converted_here", allen("nest:glif_lif_psc", False))
        ref1, _ = variant("bmtk_glif1_converted", allen("nest:glif_psc", "glif1"))
        if conv1 is not None and ref1 is not None:
            same = all(np.array_equal(x, y) for x, y in zip(conv1, ref1))
            print(f"  Allen configs under nest:glif_lif_psc (GLIF1): {len(conv1[0])} spikes, identical to BMTK's "
                  f"conversion: {same}")
            if not same or len(conv1[0]) == 0 or np.array_equal(conv1[0], conv[0]):
                fails.append("the GLIF1 Allen-config conversion differs from BMTK's (or equals GLIF3's)")
        _, out = variant("allen_under_glif_psc", allen("nest:glif_psc", False))
        if "raw Allen Cell Types GLIF configs are not supported" not in out or "allen_" not in out:
            fails.append(f"an Allen config under nest:glif_psc was not refused naming it: {out[-800:]}")
        else:
            fails[:] = [f for f in fails if not f.startswith("allen_under_glif_psc")]
            print("  Allen config under nest:glif_psc: refused, naming the file")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
