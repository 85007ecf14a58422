#!/usr/bin/python3
"""Bad-input tests for `dpointnet simulate`.

Each case copies the 450-cell BMTK example (network, spike input, point_components) into a fresh
temporary directory, writes a simulation config (dt 1 ms, tstop 100 ms, output_dir inside the temp
dir, LGN spike input), applies ONE mutation, runs the binary as a subprocess and checks:

  * the exit code is 2 (clean input error, not a crash or an internal error);
  * stderr has the line `dpointnet: error: ...` naming the expected file (basename), the expected
    field (as `field '<name>'`, or as the last component of an `HDF5 object '<path>'`) and a key phrase;
  * nothing was written to the output directory (no spikes file; the directory is absent or empty).

`valid_runs` is the control: the unmutated copy must exit 0 and write the spikes file.
`output_exists_without_overwrite` runs twice and checks the first run's outputs are left untouched.

Usage:
  bad_inputs.py --list
  bad_inputs.py --case NAME --bin PATH [--data DIR] [--keep]
  bad_inputs.py --all --bin PATH            (every case; summary at the end)

Must run with Debian's /usr/bin/python3 (h5py, numpy).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEFAULT_DATA = os.environ.get("DPOINTNET_BMTK_DIR", "/work/shared/data/bmtk")
EXAMPLE = "point_450glifs"
COMPONENTS = "point_components"
RUN_TIMEOUT_S = 50

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    sys.stderr.write("bad_inputs.py: FAIL: needs h5py and numpy (run it with Debian's /usr/bin/python3): %s\n" % e)
    sys.exit(1)


class CaseFailure(Exception):
    pass


# --------------------------------------------------------------------------------------------
# The sandbox: a copy of the example and a simulation config
# --------------------------------------------------------------------------------------------
class Sandbox:
    def __init__(self, data_dir, root):
        self.root = root
        self.base = os.path.join(root, EXAMPLE)          # config files live here
        self.net = os.path.join(self.base, "network")
        self.inputs = os.path.join(self.base, "inputs")
        self.comp = os.path.join(root, COMPONENTS)
        self.cells = os.path.join(self.comp, "cell_models")
        self.syns = os.path.join(self.comp, "synaptic_models")
        self.output_dir = os.path.join(root, "output")
        src = os.path.join(data_dir, EXAMPLE)
        os.makedirs(self.base)
        shutil.copytree(os.path.join(src, "network"), self.net)
        shutil.copytree(os.path.join(src, "inputs"), self.inputs)
        shutil.copy2(os.path.join(src, "config.circuit.json"), os.path.join(self.base, "config.circuit.json"))
        shutil.copytree(os.path.join(data_dir, COMPONENTS), self.comp)
        self.config_path = os.path.join(self.base, "config.simulation.json")
        self.config = {
            "run": {"dt": 1.0, "tstop": 100.0},
            "inputs": {
                "LGN_spikes": {
                    "input_type": "spikes",
                    "module": "sonata",
                    "input_file": "$BASE_DIR/inputs/lgn_spikes.h5",
                    "node_set": "lgn",
                }
            },
            "output": {
                "output_dir": self.output_dir,
                "log_file": "log.txt",
                "spikes_file": "spikes.h5",
                "overwrite_output_dir": False,
            },
            "manifest": {"$BASE_DIR": "."},
            "network": "config.circuit.json",
        }
        self.spikes_file = os.path.join(self.output_dir, "spikes.h5")

    # --- helpers used by mutations ---
    def write_config(self):
        with open(self.config_path, "w") as f:
            json.dump(self.config, f, indent=2)

    def edit_json(self, path, fn, raw=None):
        """fn(dict) mutates the parsed JSON; or raw=text replaces the file verbatim."""
        if raw is not None:
            with open(path, "w") as f:
                f.write(raw)
            return
        with open(path) as f:
            d = json.load(f)
        fn(d)
        with open(path, "w") as f:
            json.dump(d, f, indent=2)

    def read_csv(self, path):
        with open(path) as f:
            rows = [line.split() for line in f if line.strip()]
        return rows[0], rows[1:]

    def write_csv(self, path, header, rows):
        with open(path, "w") as f:
            f.write(" ".join(header) + "\n")
            for r in rows:
                f.write(" ".join(r) + "\n")

    def set_csv(self, path, key_col, key, col, value):
        header, rows = self.read_csv(path)
        k, c = header.index(key_col), header.index(col)
        hit = False
        for r in rows:
            if r[k] == str(key):
                r[c] = value
                hit = True
        if not hit:
            raise RuntimeError("mutation failed: no row %s=%s in %s" % (key_col, key, path))
        self.write_csv(path, header, rows)

    def replace_dataset(self, path, ds, values):
        with h5py.File(path, "r+") as h:
            old = h[ds]
            attrs = dict(old.attrs)
            dtype = old.dtype
            del h[ds]
            new = h.create_dataset(ds, data=np.asarray(values, dtype=dtype))
            for k, v in attrs.items():
                new.attrs[k] = v

    def output_listing(self):
        """{relative path: (mtime_ns, sha256)} of every file under output_dir (None when absent)."""
        if not os.path.exists(self.output_dir):
            return None
        out = {}
        for dp, _, fns in os.walk(self.output_dir):
            for fn in fns:
                p = os.path.join(dp, fn)
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                out[os.path.relpath(p, self.output_dir)] = (os.stat(p).st_mtime_ns, digest)
        return out


# --------------------------------------------------------------------------------------------
# Mutations. Each takes a Sandbox (config not yet written) and returns nothing.
# --------------------------------------------------------------------------------------------
GLIF_E = "593618144_glif_lif_asc_psc.json"   # node type 100 (glif_psc, e, inner)
IAF_E = "IntFire1_exc_point.json"            # node type 105 (iaf_psc_alpha)


def m_none(s):
    pass


def m_rm(*rel):
    def f(s):
        os.remove(os.path.join(s.base, *rel))
    return f


def m_del_dataset(rel, ds):
    def f(s):
        with h5py.File(os.path.join(s.net, rel), "r+") as h:
            del h[ds]
    return f


def m_cell(key, value, fname=GLIF_E):
    def f(s):
        s.edit_json(os.path.join(s.cells, fname), lambda d: d.__setitem__(key, value))
    return f


def m_cell_raw(fname, fn_text):
    def f(s):
        p = os.path.join(s.cells, fname)
        with open(p) as fh:
            txt = fh.read()
        s.edit_json(p, None, raw=fn_text(txt))
    return f


def m_syn_receptor(value, fname="e2e.json"):
    def f(s):
        s.edit_json(os.path.join(s.syns, fname), None, raw=json.dumps({"receptor_type": value}) + "\n")
    return f


def m_run(key, value):
    def f(s):
        s.config["run"][key] = value
    return f


def m_input(key, value):
    def f(s):
        s.config["inputs"]["LGN_spikes"][key] = value
    return f


def m_unknown_model_template(s):
    s.set_csv(os.path.join(s.net, "v1_node_types.csv"), "node_type_id", 100, "model_template", "nest:aeif_cond_exp")


def m_delay_below_one_step(s):
    s.set_csv(os.path.join(s.net, "v1_v1_edge_types.csv"), "edge_type_id", 100, "delay", "0.4")


def m_missing_syn_weight(s):
    p = os.path.join(s.net, "v1_v1_edge_types.csv")
    header, rows = s.read_csv(p)
    c = header.index("syn_weight")
    s.write_csv(p, header[:c] + header[c + 1:], [r[:c] + r[c + 1:] for r in rows])
    with h5py.File(os.path.join(s.net, "v1_v1_edges.h5"), "r") as h:
        assert "syn_weight" not in h["/edges/v1_to_v1/0"], "the example unexpectedly has an h5 syn_weight column"


def m_set_element(rel, ds, index, value):
    def f(s):
        with h5py.File(os.path.join(s.base, rel), "r+") as h:
            h[ds][index] = value
    return f


def m_inconsistent_lengths(s):
    p = os.path.join(s.net, "v1_v1_edges.h5")
    with h5py.File(p, "r") as h:
        v = h["/edges/v1_to_v1/edge_type_id"][:]
    s.replace_dataset(p, "/edges/v1_to_v1/edge_type_id", v[:-10])


def m_edges_into_virtual(s):
    with h5py.File(os.path.join(s.net, "lgn_v1_edges.h5"), "r+") as h:
        h["/edges/lgn_to_v1/target_node_id"].attrs["node_population"] = "lgn"


def m_mixed_virtual(s):
    p = os.path.join(s.net, "v1_node_types.csv")
    header, rows = s.read_csv(p)
    new = ["NONE"] * len(header)
    new[header.index("node_type_id")] = "107"
    new[header.index("model_type")] = "virtual"
    new[header.index("ei")] = "e"
    new[header.index("placement")] = "inner"
    s.write_csv(p, header, rows + [new])
    with h5py.File(os.path.join(s.net, "v1_nodes.h5"), "r+") as h:
        h["/nodes/v1/node_type_id"][0] = 107


def m_spike_time_nonpositive(s):
    src = os.path.join(s.inputs, "lgn_spikes.h5")
    dst = os.path.join(s.inputs, "lgn_spikes_t0.h5")
    shutil.copy2(src, dst)
    with h5py.File(dst, "r+") as h:
        h["/spikes/lgn/timestamps"][0] = 0.0
    s.config["inputs"]["LGN_spikes"]["input_file"] = "$BASE_DIR/inputs/lgn_spikes_t0.h5"


def m_spike_node_not_in_population(s):
    with h5py.File(os.path.join(s.inputs, "lgn_spikes.h5"), "r+") as h:
        h["/spikes/lgn/node_ids"][0] = 9999


def m_manifest_cycle(s):
    s.config["manifest"]["$CYC_A"] = "$CYC_B/a"
    s.config["manifest"]["$CYC_B"] = "$CYC_A/b"
    s.config["inputs"]["LGN_spikes"]["input_file"] = "$CYC_A/lgn_spikes.h5"


# --------------------------------------------------------------------------------------------
# Cases: name -> (mutation, expected files (any), expected fields (any), key phrases (any))
# --------------------------------------------------------------------------------------------
SIM_CFG = "config.simulation.json"
CASES = {}


def case(name, mutate, files, fields, phrases, loose_field=False):
    CASES[name] = dict(mutate=mutate, files=list(files), fields=list(fields), phrases=list(phrases),
                       loose_field=loose_field)


CASES["valid_runs"] = dict(mutate=m_none, control=True)
case("missing_nodes_file", m_rm("network", "v1_nodes.h5"), ["v1_nodes.h5"], ["nodes_file"],
     ["does not exist", "missing", "not found"])
case("missing_edges_file", m_rm("network", "v1_v1_edges.h5"), ["v1_v1_edges.h5"], ["edges_file"],
     ["does not exist", "missing", "not found"])
case("missing_node_types_file", m_rm("network", "v1_node_types.csv"), ["v1_node_types.csv"], ["node_types_file"],
     ["does not exist", "missing", "not found", "cannot open"])
case("missing_dataset_node_type_id", m_del_dataset("v1_nodes.h5", "/nodes/v1/node_type_id"), ["v1_nodes.h5"],
     ["node_type_id"], ["missing"])
case("missing_dataset_target_node_id", m_del_dataset("v1_v1_edges.h5", "/edges/v1_to_v1/target_node_id"),
     ["v1_v1_edges.h5"], ["target_node_id"], ["missing"])
case("unknown_model_template", m_unknown_model_template, ["v1_node_types.csv"], ["model_template"],
     ["not supported"])
case("receptor_port_out_of_range", m_syn_receptor(7), ["v1_v1_edge_types.csv", "e2e.json"], ["receptor_type"],
     ["outside", "out of range"])
case("receptor_port_zero_glif", m_syn_receptor(0), ["v1_v1_edge_types.csv", "e2e.json"], ["receptor_type"],
     ["outside", "out of range"])
case("delay_below_one_step", m_delay_below_one_step, ["v1_v1_edges.h5", "v1_v1_edge_types.csv"], ["delay"],
     ["at least 1 step", "rounds to 0"])
case("missing_syn_weight", m_missing_syn_weight, ["v1_v1_edge_types.csv", "v1_v1_edges.h5"], ["syn_weight"],
     ["missing", "required"])
case("non_finite_parameter", m_cell_raw(GLIF_E, lambda t: re.sub(r'"V_th":\s*[-0-9.eE]+', '"V_th": 1e999', t)),
     [GLIF_E], ["V_th"], ["finite"])
case("non_finite_parameter_string", m_cell("V_th", "NaN"), [GLIF_E], ["V_th"], ["must be a number", "finite"])
# Python's json.dump writes a bare NaN; nlohmann::json cannot parse it, so the parse error (which quotes
# the text around "V_th") is accepted as naming the field.
case("non_finite_parameter_nan_literal",
     m_cell_raw(GLIF_E, lambda t: re.sub(r'"V_th":\s*[-0-9.eE]+', '"V_th": NaN', t)),
     [GLIF_E], ["V_th"], ["finite", "NaN", "invalid JSON"], loose_field=True)
case("mis_signed_parameter", m_cell("C_m", -68.14), [GLIF_E], ["C_m"], ["must be > 0"])
case("g_zero", m_cell("g", 0.0), [GLIF_E], ["g"], ["must be > 0"])
case("t_ref_negative", m_cell("t_ref", -1.0), [GLIF_E], ["t_ref"], ["must be > 0"])
case("tau_syn_negative", m_cell("tau_syn", [5.5, -8.5, 2.8, 5.8]), [GLIF_E], ["tau_syn"], ["must be > 0"])
case("vth_below_el", m_cell("V_th", -80.0), [GLIF_E], ["V_th"], ["above E_L"])
case("dt_zero", m_run("dt", 0.0), [SIM_CFG], ["dt"], ["must be > 0"])
case("dt_negative", m_run("dt", -1.0), [SIM_CFG], ["dt"], ["must be > 0"])
case("tstop_not_multiple", m_run("tstop", 100.5), [SIM_CFG], ["tstop"], ["whole number"])
case("ids_out_of_range", m_set_element("network/v1_v1_edges.h5", "/edges/v1_to_v1/target_node_id", 5, 9999),
     ["v1_v1_edges.h5"], ["target_node_id"], ["9999"])
case("source_ids_out_of_range", m_set_element("network/lgn_v1_edges.h5", "/edges/lgn_to_v1/source_node_id", 5, 9999),
     ["lgn_v1_edges.h5"], ["source_node_id"], ["9999"])
case("inconsistent_dataset_lengths", m_inconsistent_lengths, ["v1_v1_edges.h5"], ["edge_type_id"],
     ["entries", "length"])
case("edges_into_virtual_population", m_edges_into_virtual, ["lgn_v1_edges.h5"], ["target_node_id"], ["virtual"])
case("mixed_virtual_population", m_mixed_virtual, ["v1_nodes.h5", "v1_node_types.csv"], ["model_type"],
     ["mixes virtual"])
case("spike_time_nonpositive", m_spike_time_nonpositive, ["lgn_spikes_t0.h5"], ["timestamps"], ["not > 0"])
case("spike_file_missing", m_input("input_file", "$BASE_DIR/inputs/no_such_spikes.h5"), ["no_such_spikes.h5"],
     ["input_file"], ["does not exist", "missing", "not found"])
case("spike_node_not_in_population", m_spike_node_not_in_population, ["lgn_spikes.h5"], ["node_ids"], ["9999"])
case("unknown_input_type", m_input("input_type", "voltage_clamp"), [SIM_CFG], ["input_type"],
     ["not supported", "unknown"])
case("input_node_set_unknown", m_input("node_set", "retina"), [SIM_CFG], ["node_set"], ["not a population"])
case("input_node_set_not_virtual", m_input("node_set", "v1"), [SIM_CFG], ["node_set"], ["not a virtual population"])
case("batch_size_zero", m_run("batch_size", 0), [SIM_CFG], ["batch_size"], [">= 1"])
case("manifest_cycle", m_manifest_cycle, [SIM_CFG], ["$CYC_A", "$CYC_B", "manifest"], ["cycle"])
case("missing_network_child_file", lambda s: s.config.__setitem__("network", "no_such_circuit.json"),
     ["no_such_circuit.json"], ["network"], ["does not exist"])
CASES["output_exists_without_overwrite"] = dict(
    mutate=m_none, twice=True, files=[SIM_CFG, "spikes.h5"], fields=["overwrite_output_dir"], phrases=["exists"])
case("glif2_refused", m_cell("spike_dependent_threshold", True), [GLIF_E], ["spike_dependent_threshold"],
     ["not supported"])
case("iaf_nonzero_I_e", m_cell("I_e", 5.0, fname=IAF_E), [IAF_E], ["I_e"], ["not supported"])
case("unknown_precision", m_run("precision", "float16"), [SIM_CFG], ["precision"], ["float32"])


# --------------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------------
def run_binary(binary, s):
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OMP_PROC_BIND", "false")
    cmd = [binary, "simulate", s.config_path, "--no-progress"]
    print("run: %s" % " ".join(cmd))
    try:
        p = subprocess.run(cmd, cwd=s.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise CaseFailure("the binary did not finish within %d s\nstderr:\n%s" %
                          (RUN_TIMEOUT_S, (e.stderr or b"").decode(errors="replace")))
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def error_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("dpointnet: error: ")]


def field_named(line, field):
    """field '<f>' (the message format), or an HDF5 object path whose last component is f."""
    if "field '%s'" % field in line:
        return "field '%s'" % field
    m = re.search(r"HDF5 object '([^']*)'", line)
    if m and m.group(1).rstrip("/").split("/")[-1] == field:
        return "HDF5 object '%s'" % m.group(1)
    return None


def check_error(spec, rc, stderr, problems, checks, root):
    if rc < 0:
        problems.append("the binary crashed (signal %d)" % -rc)
    elif rc != 2:
        problems.append("exit code %d, expected 2" % rc)
    else:
        checks.append("exit code 2")
    if "internal error" in stderr:
        problems.append("stderr reports an internal error")
    lines = error_lines(stderr)
    if not lines:
        problems.append("no 'dpointnet: error: ' line on stderr")
        return
    # The temp dir is replaced by <tmp> so that its name cannot satisfy a check by accident.
    line = lines[-1].replace(os.path.realpath(root), "<tmp>").replace(root, "<tmp>")
    checks.append("error line: %s" % line)
    f = [x for x in spec["files"] if x in line]
    if f:
        checks.append("names file %s" % f[0])
    else:
        problems.append("error line names none of the files %s" % spec["files"])
    named = [field_named(line, x) for x in spec["fields"]]
    named = [x for x in named if x]
    if not named and spec.get("loose_field"):
        named = ["'%s' (quoted in the message text)" % x for x in spec["fields"]
                 if re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(x), line)]
    if named:
        checks.append("names field as %s" % named[0])
    else:
        problems.append("error line names none of the fields %s (as field '<name>')" %
                        ", ".join("'%s'" % x for x in spec["fields"]))
    ph = [x for x in spec["phrases"] if x in line]
    if ph:
        checks.append("has key phrase '%s'" % ph[0])
    else:
        problems.append("error line has none of the key phrases %s" % spec["phrases"])


def check_no_output(s, problems, checks):
    listing = s.output_listing()
    if os.path.exists(s.spikes_file):
        problems.append("the spikes file %s was written" % s.spikes_file)
    if listing is None:
        checks.append("output directory was not created")
    elif not listing:
        checks.append("output directory exists but is empty")
    else:
        problems.append("files were written to the output directory: %s" % sorted(listing))


def run_case(name, binary, data_dir, keep):
    spec = CASES[name]
    if not os.path.isdir(os.path.join(data_dir, EXAMPLE)) or not os.path.isdir(os.path.join(data_dir, COMPONENTS)):
        raise CaseFailure("the shared example data is missing: expected %s and %s (set --data or "
                          "DPOINTNET_BMTK_DIR); this test cannot run without it" %
                          (os.path.join(data_dir, EXAMPLE), os.path.join(data_dir, COMPONENTS)))
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise CaseFailure("binary %s does not exist or is not executable" % binary)
    root = tempfile.mkdtemp(prefix="dpointnet_badinput_")
    problems, checks = [], []
    try:
        s = Sandbox(data_dir, root)
        spec["mutate"](s)
        s.write_config()
        if spec.get("control"):
            rc, out, err = run_binary(binary, s)
            if rc != 0:
                problems.append("exit code %d, expected 0" % rc)
            else:
                checks.append("exit code 0")
            if os.path.isfile(s.spikes_file):
                with h5py.File(s.spikes_file, "r") as h:
                    n = h["/spikes/v1/node_ids"].shape[0] if "/spikes/v1/node_ids" in h else -1
                checks.append("spikes file written (%d v1 spikes)" % n)
                if n < 0:
                    problems.append("the spikes file has no /spikes/v1/node_ids")
            else:
                problems.append("no spikes file %s" % s.spikes_file)
        elif spec.get("twice"):
            rc1, _, err1 = run_binary(binary, s)
            if rc1 != 0 or not os.path.isfile(s.spikes_file):
                raise CaseFailure("first run (to create outputs) failed: exit %d\nstderr:\n%s" % (rc1, err1))
            before = s.output_listing()
            checks.append("first run: exit 0, outputs %s" % sorted(before))
            rc, out, err = run_binary(binary, s)
            check_error(spec, rc, err, problems, checks, s.root)
            after = s.output_listing()
            if after != before:
                changed = sorted(set(before or {}) ^ set(after or {}) |
                                 {k for k in (before or {}) if k in (after or {}) and before[k] != after[k]})
                problems.append("the second run changed the output directory: %s" % changed)
            else:
                checks.append("output files unchanged (mtime_ns and sha256)")
        else:
            rc, out, err = run_binary(binary, s)
            check_error(spec, rc, err, problems, checks, s.root)
            check_no_output(s, problems, checks)
        for c in checks:
            print("  ok: %s" % c)
        if problems:
            for p in problems:
                print("  FAIL: %s" % p)
            print("---- actual stderr ----")
            print(err.rstrip())
            print("-----------------------")
            return False
        return True
    finally:
        if keep:
            print("kept %s" % root)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("--case", help="run one case")
    ap.add_argument("--all", action="store_true", help="run every case")
    ap.add_argument("--bin", help="the dpointnet binary")
    ap.add_argument("--data", default=DEFAULT_DATA, help="directory holding %s and %s (default %s)" %
                    (EXAMPLE, COMPONENTS, DEFAULT_DATA))
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if not a.bin or not (a.case or a.all):
        ap.error("give --list, or --case NAME (or --all) with --bin PATH")
    names = list(CASES) if a.all else [a.case]
    for n in names:
        if n not in CASES:
            ap.error("unknown case %r (see --list)" % n)
    failed = []
    for n in names:
        print("=== case %s" % n)
        try:
            ok = run_case(n, os.path.abspath(a.bin), a.data, a.keep)
        except CaseFailure as e:
            print("  FAIL: %s" % e)
            sys.stderr.write("bad_inputs.py: %s: FAIL: %s\n" % (n, e))
            ok = False
        print("=== %s: %s" % (n, "PASS" if ok else "FAIL"))
        if not ok:
            failed.append(n)
    if a.all:
        print("\n%d/%d passed; failed: %s" % (len(names) - len(failed), len(names), " ".join(failed) or "none"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
