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

import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import CaseFailure  # noqa: E402

# The BMTK example vendored in tests/data/bmtk, found from this script's own location.
DEFAULT_DATA = os.environ.get("DPOINTNET_BMTK_DIR", os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "bmtk")))
EXAMPLE = "point_450glifs"
COMPONENTS = "point_components"

h5py, np = harness.require_h5py_numpy("bad_inputs.py")


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
        return harness.output_listing(self.output_dir)


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
    return harness.call([binary, "simulate", s.config_path, "--no-progress"], s.root, who="the binary")


def field_named(line, field):
    """field '<f>' (the message format), or an HDF5 object path whose last component is f."""
    if "field '%s'" % field in line:
        return "field '%s'" % field
    m = re.search(r"HDF5 object '([^']*)'", line)
    if m and m.group(1).rstrip("/").split("/")[-1] == field:
        return "HDF5 object '%s'" % m.group(1)
    return None


def field_check(spec, line):
    named = [field_named(line, x) for x in spec["fields"]]
    named = [x for x in named if x]
    if not named and spec.get("loose_field"):
        named = ["'%s' (quoted in the message text)" % x for x in spec["fields"]
                 if re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(x), line)]
    return "names field as %s" % named[0] if named else None


def check_error(spec, rc, stderr, problems, checks, root):
    harness.check_error(spec, rc, stderr, problems, checks, root, fields=field_check)


def check_no_output(s, problems, checks):
    if os.path.exists(s.spikes_file):
        problems.append("the spikes file %s was written" % s.spikes_file)
    harness.check_no_output(s.output_listing(), problems, checks)


def run_case(name, binary, data_dir, keep):
    spec = CASES[name]
    if not os.path.isdir(os.path.join(data_dir, EXAMPLE)) or not os.path.isdir(os.path.join(data_dir, COMPONENTS)):
        raise CaseFailure("the BMTK example data is missing: expected %s and %s (the default is the copy "
                          "vendored in tests/data/bmtk; --data or DPOINTNET_BMTK_DIR override it); this test "
                          "cannot run without it" %
                          (os.path.join(data_dir, EXAMPLE), os.path.join(data_dir, COMPONENTS)))

    def body(root, problems, checks):
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
        return err

    return harness.run_in_tempdir(binary, "dpointnet_badinput_", keep, body)


def main():
    return harness.main(__doc__, "bad_inputs.py", CASES, run_case,
                        dict(default=DEFAULT_DATA, help="directory holding %s and %s (default %s)" %
                             (EXAMPLE, COMPONENTS, DEFAULT_DATA)))


if __name__ == "__main__":
    sys.exit(main())
