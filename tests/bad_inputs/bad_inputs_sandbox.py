"""The sandbox of bad_inputs.py: a copy of the 450-cell BMTK example and its simulation config."""
import json
import os
import shutil

import harness

EXAMPLE = "point_450glifs"
COMPONENTS = "point_components"

h5py, np = harness.require_h5py_numpy("bad_inputs.py")


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
