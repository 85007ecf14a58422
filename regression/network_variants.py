"""Variants of a `dpointnet generate` network for the regression tests: per-node
dynamics_params overrides and glif_psc_double_alpha node types. Written here with h5py and plain files, so the
tests' expected values come from the oracle reading what these functions wrote."""
import json
import os

import h5py
import numpy as np


def add_per_node_dynamics(net):
    """Writes /nodes/v1/0/dynamics_params: each node's type values of V_th (above E_L), C_m, asc_amps and tau_syn
    (for double-alpha types, after make_double_alpha: tau_syn_fast), scaled by the node's own factors in
    [0.7, 1.3] (seeded). A group mixing the two models gets both list columns; each node's model reads one."""
    rng = np.random.default_rng(7)
    types = {}
    with open(os.path.join(net, "network", "v1_node_types.csv")) as f:
        head = f.readline().split()
        for line in f:
            row = dict(zip(head, line.split()))
            with open(os.path.join(net, "components", "cell_models", row["dynamics_params"])) as g:
                types[int(row["node_type_id"])] = json.load(g)
    with h5py.File(os.path.join(net, "network", "v1_nodes.h5"), "r+") as f:
        pop = f["nodes"]["v1"]
        ntid, gidx = pop["node_type_id"][()], pop["node_group_index"][()]
        m = int(gidx.max()) + 1
        cols = {"V_th": np.zeros(m), "C_m": np.zeros(m), "asc_amps": np.zeros((m, 2))}
        lists = [k for k in ("tau_syn", "tau_syn_fast") if any(k in p for p in types.values())]
        for k in lists:
            cols[k] = np.zeros((m, 4))
        for t, r in zip(ntid, gidx):
            p = types[int(t)]
            cols["V_th"][r] = p["E_L"] + (p["V_th"] - p["E_L"]) * rng.uniform(0.7, 1.3)
            cols["C_m"][r] = p["C_m"] * rng.uniform(0.7, 1.3)
            cols["asc_amps"][r] = np.array(p.get("asc_amps", [0.0, 0.0])) * rng.uniform(0.7, 1.3, 2)  # (iaf: unread)
            own = np.array(p.get("tau_syn", p.get("tau_syn_fast", [2.0] * 4))) * rng.uniform(0.7, 1.3, 4)
            for k in lists:
                cols[k][r] = own  # the column of the other model is not read by this node
        g = pop["0"].create_group("dynamics_params")
        for k, v in cols.items():
            g.create_dataset(k, data=v)
    print(f"  per-node dynamics_params for {m} V1 nodes: {', '.join(cols)}")


def make_double_alpha(net):
    """Every other V1 node type (in node-types table order) becomes nest:glif_psc_double_alpha: the type's
    tau_syn as tau_syn_fast, 3 x tau_syn as tau_syn_slow and amp_slow 0.25, 0.3, 0.35, 0.4 (cycled)."""
    path = os.path.join(net, "network", "v1_node_types.csv")
    with open(path) as f:
        head = f.readline().split()
        rows = [line.split() for line in f if line.strip()]
    models = os.path.join(net, "components", "cell_models")
    changed = []
    for k, row in enumerate(rows):
        if k % 2:
            continue
        r = dict(zip(head, row))
        with open(os.path.join(models, r["dynamics_params"])) as g:
            p = json.load(g)
        tau = p.pop("tau_syn")
        p["tau_syn_fast"] = tau
        p["tau_syn_slow"] = [3.0 * t for t in tau]
        p["amp_slow"] = [0.25 + 0.05 * (q % 4) for q in range(len(tau))]
        name = "double_alpha_" + r["dynamics_params"]
        with open(os.path.join(models, name), "w") as g:
            json.dump(p, g, indent=1)
        row[head.index("model_template")] = "nest:glif_psc_double_alpha"
        row[head.index("dynamics_params")] = name
        changed.append(r["node_type_id"])
    with open(path, "w") as f:
        f.write(" ".join(head) + "\n" + "".join(" ".join(r) + "\n" for r in rows))
    print(f"  glif_psc_double_alpha node types: {', '.join(changed)}")


def make_iaf(net):
    """The inhibitory V1 node types (ei == 'i') become nest:iaf_psc_alpha (C_m, tau_m = C_m / g, E_L, V_th,
    V_reset, t_ref of the type, tau_syn_ex / tau_syn_in its first and third port, I_e 20 pA, V_min E_L + 4 (above V_reset and V_m: the clamp acts),
    V_m E_L + 2); the edge types into them get receptor_type 0 (an empty synapse JSON)."""
    path = os.path.join(net, "network", "v1_node_types.csv")
    with open(path) as f:
        head = f.readline().split()
        rows = [line.split() for line in f if line.strip()]
    models = os.path.join(net, "components", "cell_models")
    changed = 0
    for row in rows:
        r = dict(zip(head, row))
        if r["ei"] != "i":
            continue
        with open(os.path.join(models, r["dynamics_params"])) as g:
            p = json.load(g)
        tau = p.get("tau_syn", p.get("tau_syn_fast"))  # (after make_double_alpha: its fast kernels)
        q = {"C_m": p["C_m"], "tau_m": p["C_m"] / p["g"], "E_L": p["E_L"], "V_th": p["V_th"],
             "V_reset": p["V_reset"], "t_ref": p["t_ref"], "tau_syn_ex": tau[0],
             "tau_syn_in": tau[2], "I_e": 20.0, "V_min": p["E_L"] + 4.0, "V_m": p["E_L"] + 2.0}
        name = "iaf_%s.json" % r["node_type_id"]
        with open(os.path.join(models, name), "w") as g:
            json.dump(q, g)
        row[head.index("model_template")] = "nest:iaf_psc_alpha"
        row[head.index("dynamics_params")] = name
        changed += 1
    with open(path, "w") as f:
        f.write(" ".join(head) + "\n" + "".join(" ".join(r) + "\n" for r in rows))
    syn = os.path.join(net, "components", "synaptic_models")
    with open(os.path.join(syn, "to_iaf.json"), "w") as g:
        json.dump({}, g)
    for fname in os.listdir(os.path.join(net, "network")):
        if not fname.endswith("_edge_types.csv"):
            continue
        p = os.path.join(net, "network", fname)
        with open(p) as f:
            head = f.readline().split()
            erows = [line.split() for line in f if line.strip()]
        for row in erows:
            if row[head.index("target_query")].startswith("ei=='i'"):
                row[head.index("dynamics_params")] = "to_iaf.json"
        with open(p, "w") as f:
            f.write(" ".join(head) + "\n" + "".join(" ".join(r) + "\n" for r in erows))
    print(f"  {changed} inhibitory node types as nest:iaf_psc_alpha (I_e, V_min, V_m)")
