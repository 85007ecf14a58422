"""Mutations of bad_inputs.py. Each takes a Sandbox (config not yet written) and returns nothing."""
import json
import os
import shutil

import harness

h5py, np = harness.require_h5py_numpy("bad_inputs.py")

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


def m_runs(**kv):
    def f(s):
        s.config["run"].update(kv)
    return f


def m_all(*mutations):
    def f(s):
        for m in mutations:
            m(s)
    return f


def m_input(key, value):
    def f(s):
        s.config["inputs"]["LGN_spikes"][key] = value
    return f


def m_lgn(stimulus, **extra):
    """The LGN population driven by an LGN input (input_type lgn) with this stimulus instead of its spike file."""
    def f(s):
        spec = {"input_type": "lgn", "node_set": "lgn"}
        if stimulus is not None:
            spec["stimulus"] = stimulus
        spec.update(extra)
        s.config["inputs"]["LGN_spikes"] = spec
    return f


def m_output(key, value):
    def f(s):
        s.config.setdefault("output", {})[key] = value
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


def m_node_dynamics(name, data):
    """/nodes/v1/0/dynamics_params/<name> = data (SONATA per-node overrides of the node types' parameters)."""
    def f(s):
        with h5py.File(os.path.join(s.net, "v1_nodes.h5"), "r+") as h:
            h["/nodes/v1/0"].create_group("dynamics_params").create_dataset(name, data=data)
    return f


def m_double_alpha(edit=None, fname=GLIF_E):
    """Node type 100 (or, with fname None, every nest:glif_psc type) as nest:glif_psc_double_alpha (tau_syn as
    tau_syn_fast, 3 x as tau_syn_slow, amp_slow 0.3), then edit(params) spoils type 100's."""
    def f(s):
        p = os.path.join(s.net, "v1_node_types.csv")
        header, rows = s.read_csv(p)
        files = []
        for r in rows:
            dp = r[header.index("dynamics_params")]
            if dp == fname or (fname is None and r[header.index("model_template")] == "nest:glif_psc"):
                r[header.index("model_template")] = "nest:glif_psc_double_alpha"
                files.append(dp)
        s.write_csv(p, header, rows)

        def conv(d):
            tau = d.pop("tau_syn")
            d.update(tau_syn_fast=tau, tau_syn_slow=[3 * t for t in tau], amp_slow=[0.3] * len(tau))
        for dp in sorted(set(files)):
            s.edit_json(os.path.join(s.cells, dp), conv)
        if edit:
            s.edit_json(os.path.join(s.cells, GLIF_E), edit)
    return f


def m_double_alpha_port(port):
    """Every glif_psc type as double alpha (4 ports, 8 channels) and the e2e synapses on receptor port `port`."""
    da = m_double_alpha(fname=None)
    syn = m_syn_receptor(port)

    def f(s):
        da(s)
        syn(s)
    return f
