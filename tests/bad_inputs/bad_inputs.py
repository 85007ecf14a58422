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

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import CaseFailure  # noqa: E402
from bad_inputs_sandbox import Sandbox, EXAMPLE, COMPONENTS  # noqa: E402
from bad_inputs_mutations import (  # noqa: E402
    GLIF_E, IAF_E, m_none, m_rm, m_del_dataset, m_cell, m_cell_raw, m_syn_receptor, m_run, m_input,
    m_all, m_runs, m_unknown_model_template, m_delay_below_one_step, m_missing_syn_weight, m_set_element,
    m_inconsistent_lengths,
    m_edges_into_virtual, m_mixed_virtual, m_spike_time_nonpositive, m_spike_node_not_in_population,
    m_manifest_cycle, m_node_dynamics, m_double_alpha, m_double_alpha_port, m_lgn, m_output)

# The BMTK example vendored in tests/data/bmtk, found from this script's own location.
DEFAULT_DATA = os.environ.get("DPOINTNET_BMTK_DIR", os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "bmtk")))

h5py, np = harness.require_h5py_numpy("bad_inputs.py")


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
case("per_node_dynamics_short", m_node_dynamics("V_th", [-45.0] * 10), ["v1_nodes.h5"], ["dynamics_params/V_th"],
     ["beyond the group's 10 rows"])
case("per_node_dynamics_invalid", m_node_dynamics("V_th", [-200.0] * 300), ["v1_nodes.h5"], ["V_th"], ["above E_L"])
case("per_node_dynamics_unknown_key", m_node_dynamics("V_thresh", [-45.0] * 300), ["v1_nodes.h5"],
     ["dynamics_params/V_thresh", "V_thresh"], ["would change nothing"])
case("per_node_dynamics_not_numeric", m_node_dynamics("C_m", ["big"] * 300), ["v1_nodes.h5"],
     ["dynamics_params/C_m", "C_m"], ["numeric"])
case("double_alpha_amp_slow_length", m_double_alpha(lambda d: d.__setitem__("amp_slow", [0.3, 0.3])), [GLIF_E],
     ["amp_slow"], ["as many entries as tau_syn_fast"])
case("double_alpha_amp_slow_negative", m_double_alpha(lambda d: d.__setitem__("amp_slow", [0.3, -0.1, 0.3, 0.3])),
     [GLIF_E], ["amp_slow"], ["must be > 0"])
case("double_alpha_missing_tau_syn_slow", m_double_alpha(lambda d: d.pop("tau_syn_slow")), [GLIF_E],
     ["tau_syn_slow"], ["missing", "required"])
case("double_alpha_port_beyond_fast", m_double_alpha_port(5), ["v1_v1_edge_types.csv", "e2e.json"],
     ["receptor_type"], ["outside 1..4"])
case("missing_network_child_file", lambda s: s.config.__setitem__("network", "no_such_circuit.json"),
     ["no_such_circuit.json"], ["network"], ["does not exist"])
CASES["output_exists_without_overwrite"] = dict(
    mutate=m_none, twice=True, files=[SIM_CFG, "spikes.h5"], fields=["overwrite_output_dir"], phrases=["exists"])
case("glif2_refused", m_cell("spike_dependent_threshold", True), [GLIF_E], ["spike_dependent_threshold"],
     ["not supported"])
case("iaf_nonzero_I_e", m_cell("I_e", 5.0, fname=IAF_E), [IAF_E], ["I_e"], ["not supported"])
case("unknown_precision", m_run("precision", "float8"), [SIM_CFG], ["precision"], ["float32", "bfloat16"])
# run.dynamics (docs/model-nest.md)
case("unknown_dynamics", m_run("dynamics", "nest3"), [SIM_CFG], ["dynamics"], ["discrete", "nest"])
case("nest_dt_not_whole_microseconds", m_runs(dynamics="nest", dt=0.0005, tstop=100.0), [SIM_CFG], ["dt"],
     ["microseconds"])
case("nest_delay_below_resolution", m_all(m_runs(dynamics="nest", dt=1.0), m_delay_below_one_step),
     ["v1_v1_edges.h5", "v1_v1_edge_types.csv"], ["delay"], ["at least 1 step"])
case("discrete_V_min_refused", m_cell("V_min", -90.0, fname=IAF_E), [IAF_E], ["V_min"], ["not supported", "nest"])
case("discrete_asc_r_refused", m_cell("asc_r", [0.5, 1.0]), [GLIF_E], ["asc_r"], ["not supported", "nest"])
case("nest_asc_r_out_of_range", m_all(m_runs(dynamics="nest"), m_cell("asc_r", [1.5, 1.0])), [GLIF_E], ["asc_r"],
     ["[0, 1]"])
GRATING = {"type": "drifting_grating", "direction": 45}
case("lgn_stimulus_missing", m_lgn(None), [SIM_CFG], ["stimulus"], ["required"])
case("lgn_stimulus_type_unknown", m_lgn({"type": "checkerboard"}), [SIM_CFG], ["type"], ["not a stimulus type"])
case("lgn_direction_missing", m_lgn({"type": "drifting_grating"}), [SIM_CFG], ["direction"], ["required"])
case("lgn_contrast_out_of_range", m_lgn(dict(GRATING, contrast=1.5)), [SIM_CFG], ["contrast"], ["[0, 1]"])
case("lgn_stimulus_unknown_key", m_lgn(dict(GRATING, orientation=90)), [SIM_CFG], ["orientation"],
     ["not a known key"])
case("lgn_direction_convention_unknown", m_lgn(GRATING, direction_convention="cw"), [SIM_CFG],
     ["direction_convention"], ["filternet"])
case("lgn_movie_file_missing", m_lgn({"type": "movie", "movie_file": "no_such_movie.h5"}),
     [SIM_CFG, "no_such_movie.h5"], ["movie_file"], ["does not exist"])
case("lgn_pre_post_too_long", m_lgn(dict(GRATING, pre_ms=2000, post_ms=2000)), [SIM_CFG], ["pre_ms"],
     ["leave no time"])
case("lgn_rates_sample_out_of_range", m_all(m_lgn(GRATING), m_output("lgn_rates", {"samples": [3]})), [SIM_CFG],
     ["samples"], ["not in the batch"])


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
