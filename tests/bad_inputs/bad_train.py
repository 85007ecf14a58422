#!/usr/bin/python3
"""Bad-input tests for `dpointnet train`.

Each case generates a small network into a fresh temporary directory (`dpointnet generate --neurons 60
--seed 2`), writes a training config next to it (the generated simulation config with T = 20 ms, batch 2,
output_dir inside the temp dir, overwrite off, and a `train` section of 2 steps with one TargetFiringRate
loss and Adam), applies ONE mutation, runs `dpointnet train` as a subprocess and checks:

  * the exit code is 2 (clean input error, not a crash or an internal error);
  * stderr has the line `dpointnet: error: ...` naming the expected file (basename: the config, or the
    checkpoint for the --resume cases), the offending key as `field '<name>'`, the config section when one
    is expected (e.g. `train.optimizer`) and a key phrase;
  * nothing was written to the output directory (it is absent or empty).

The --resume cases first train 1 step (into a separate output directory) to get a checkpoint:
  checkpoint_from_other_network  the network files are then regenerated with --seed 3: fails on network_hash
  checkpoint_from_other_config   the loss cost is then changed: fails on config_hash
  resume_missing_file            --resume names a file that does not exist

`valid_train` is the control: the unmutated setup must exit 0 and write metrics.csv with 2 rows,
checkpoints/step_2.h5 and network/v1_v1_edges.h5 with the input's edge count (and syn_weight * nsyns equal to
the checkpoint's recurrent weight_pA).

Usage:
  bad_train.py --list
  bad_train.py --case NAME --bin PATH [--data DIR] [--keep]
  bad_train.py --all --bin PATH            (every case; summary at the end)

--data is accepted for the same command line as bad_inputs.py; the cases generate their own network and do
not read it. Must run with Debian's /usr/bin/python3 (h5py, numpy).
"""

import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import CaseFailure, call  # noqa: E402

N_NEURONS = 60
NET_SEED = 2
CFG_NAME = "config.train.json"

h5py, np = harness.require_h5py_numpy("bad_train.py")


# --------------------------------------------------------------------------------------------
# The sandbox: a generated network and a training config
# --------------------------------------------------------------------------------------------
class Sandbox:
    def __init__(self, binary, root):
        self.binary = binary
        self.root = root
        self.net = os.path.join(root, "net")               # generated network (config files + network/)
        self.output_dir = os.path.join(root, "output")     # the output directory under test
        self.config_path = os.path.join(root, CFG_NAME)
        self.resume = None                                 # --resume argument, set by the resume cases
        self.generate(NET_SEED)
        with open(os.path.join(self.net, "config.simulation.json")) as f:
            cfg = json.load(f)
        cfg["network"] = os.path.join(self.net, cfg["network"])
        cfg["run"].update({"tstop": 20.0, "dt": 1.0, "batch_size": 2})
        cfg["output"] = {"output_dir": self.output_dir, "log_file": "log.txt", "overwrite_output_dir": False}
        cfg["train"] = {
            "steps": 2,
            "checkpoint_interval": 10,
            "trainable": {"recurrent": True, "lgn": False, "bkg": False},
            "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 5.0}],
            "optimizer": {"type": "adam", "lr": 0.01},
        }
        self.config = cfg

    def generate(self, seed):
        rc, _, err = call([self.binary, "generate", "--out", self.net, "--neurons", str(N_NEURONS), "--seed",
                           str(seed), "--overwrite"], self.root)
        if rc != 0:
            raise CaseFailure("dpointnet generate (seed %d) failed: exit %d\nstderr:\n%s" % (seed, rc, err))

    @property
    def train(self):
        return self.config["train"]

    def write_config(self, path=None, config=None):
        with open(path or self.config_path, "w") as f:
            json.dump(config or self.config, f, indent=2)

    def pretrain(self, steps=1):
        """Trains `steps` updates of the current config into <root>/pre_output; returns the last checkpoint."""
        cfg = json.loads(json.dumps(self.config))
        cfg["output"]["output_dir"] = os.path.join(self.root, "pre_output")
        cfg["train"]["steps"] = steps
        path = os.path.join(self.root, "config.pretrain.json")
        self.write_config(path, cfg)
        rc, _, err = call([self.binary, "train", path, "--no-progress"], self.root)
        ck = os.path.join(self.root, "pre_output", "checkpoints", "step_%d.h5" % steps)
        if rc != 0 or not os.path.isfile(ck):
            raise CaseFailure("pre-training run (for a checkpoint) failed: exit %d, %s %s\nstderr:\n%s" %
                              (rc, ck, "exists" if os.path.isfile(ck) else "missing", err))
        return ck

    def output_listing(self):
        return harness.output_listing(self.output_dir)


from bad_train_mutations import *  # noqa: E402,F401,F403 (m_* and ALL_TYPES)


# --------------------------------------------------------------------------------------------
# Cases: name -> (mutation, expected files (any), expected fields (any), sections (any; [] = not checked),
# key phrases (any))
# --------------------------------------------------------------------------------------------
CASES = {}


def case(name, mutate, fields, phrases, sections=(), files=(CFG_NAME,)):
    CASES[name] = dict(mutate=mutate, files=list(files), fields=list(fields), sections=list(sections),
                       phrases=list(phrases))


CASES["valid_train"] = dict(mutate=m_none, control=True)
case("unknown_loss", m_loss("type", "SpikeCountLoss"), ["type"], ["not a known loss"], ["train.losses[0]"])
case("negative_cost", m_loss("cost", -1.0), ["cost"], [">= 0"], ["train.losses[0]"])
case("missing_cost", m_del_loss("cost"), ["cost"], ["required"], ["train.losses[0]"])
case("batch_size_zero", m_run("batch_size", 0), ["batch_size"], [">= 1"], ["run"])
case("does_not_fit_memory", m_run("batch_size", 2000000), ["batch_size"], ["checkpoint_interval", "available"], ["run"])
case("nonexistent_surface", m_trainable("thalamus", True), ["thalamus"], ["not a surface"], ["train.trainable"])
case("trainable_not_bool", m_trainable("lgn", "yes"), ["lgn"], ["true or false"], ["train.trainable"])
case("unknown_optimizer", m_optimizer("type", "sgd"), ["type"], ["not supported"], ["train.optimizer"])
case("negative_lr", m_optimizer("lr", -0.01), ["lr"], ["> 0"], ["train.optimizer"])
case("beta1_ge_1", m_optimizer("beta1", 1.0), ["beta1"], ["< 1"], ["train.optimizer"])
case("loss_scale_without_float16", m_optimizer("loss_scale", {"initial_scale": 1024}), ["loss_scale"],
     ["float16", "float32"], ["train.optimizer"])


def m_float16_scale(key, value):
    def f(s):
        s.config["run"]["precision"] = "float16"
        s.train["optimizer"]["loss_scale"] = {key: value}
    return f


case("loss_scale_not_power_of_two", m_float16_scale("initial_scale", 1000), ["initial_scale"], ["power of two"],
     ["train.optimizer.loss_scale"])
case("loss_scale_growth_zero", m_float16_scale("dynamic_growth_steps", 0), ["dynamic_growth_steps"], [">= 1"],
     ["train.optimizer.loss_scale"])
case("loss_scale_unknown_key", m_float16_scale("multiplier", 3), ["multiplier"], ["not a known key"],
     ["train.optimizer.loss_scale"])
case("unknown_surrogate", m_surrogate_type, ["type"], ["not supported"], ["train.surrogate"])
case("unknown_train_key", m_train("learning_rate", 0.01), ["learning_rate"], ["not a known key"], ["train"])
case("steps_zero", m_train("steps", 0), ["steps"], [">= 1"], ["train"])
case("conditions_empty", m_train("conditions", []), ["conditions"], ["non-empty"], ["train"])
case("conditions_unknown_input", m_train("conditions", [{"VISUAL": {"input_type": "rates", "node_set": "lgn",
                                                                    "rate": 5.0}}]),
     ["VISUAL"], ["is not an input"], ["train.conditions[0]"])
case("conditions_node_set_changed", m_train("conditions", [{"LGN": {"input_type": "rates", "node_set": "bkg",
                                                                    "rate": 5.0}}]),
     ["node_set"], ["must be the node_set"], ["train.conditions[0].LGN"])
case("unknown_approach", m_train("approach", "parallel"), ["approach"],
     ["not supported (accumulate, series or series_accumulate)"], ["train"])
case("condition_object_unknown_key", m_train("conditions", [{"name": "evoked", "LGN": {"input_type": "rates",
                                                                                      "node_set": "lgn"}}]),
     ["LGN"], ["not a key of a condition object"], ["train.conditions[0]"])
case("condition_names_repeat", m_train("conditions", [{"name": "a"}, {"name": "a"}]), ["name"],
     ["names two conditions"], ["train.conditions[1]"])
case("condition_name_slash", m_train("conditions", [{"name": "a/b"}]), ["name"], ["without '/'"],
     ["train.conditions[0]"])
case("condition_losses_unknown_type", m_train("conditions", [{"losses": [{"type": "Nope", "cost": 1.0}]}]),
     ["type"], ["not a known loss"], ["train.conditions[0].losses[0]"])
case("rate_distribution_missing_file", m_rate_distribution(None), ["target_file"], ["does not exist"],
     ["train.losses[1]"])
case("rate_distribution_missing_type", m_rate_distribution("node_type_id rate_hz\n999999 5.0\n"), ["target_file"],
     ["no observed rates of node type"], ["train.losses[1]"])
case("rate_distribution_missing_column", m_rate_distribution("node_type_id rate\n1 5.0\n"), ["rate_hz"],
     ["column is missing"], [], files=("observed_rates.csv",))
case("rate_distribution_negative_rate", m_rate_distribution("node_type_id rate_hz\n1 -5.0\n"), ["rate_hz"],
     [">= 0"], [], files=("observed_rates.csv",))
case("rate_distribution_unknown_penalty", m_rate_distribution(ALL_TYPES, penalty="cubic"), ["penalty"],
     ["not supported"], ["train.losses[1]"])
case("rate_distribution_group_by_unknown_column", m_rate_distribution("layer rate_hz\nL4 5.0\n", group_by="layer"),
     ["layer"], ["column is missing", "group_by"], [], files=("node_types.csv",))
case("rate_distribution_group_by_missing_value", m_rate_distribution("ei rate_hz\ne 5.0\n", group_by="ei"),
     ["target_file"], ["no observed rates of ei \"i\""], ["train.losses[1]"])
case("rate_distribution_cell_type_not_v1_name", m_rate_distribution(ALL_TYPES, group_by="cell_type"), ["pop_name"],
     ["not a V1 population name"], [], files=("node_types.csv",))
case("rate_distribution_rate_column_missing", m_rate_distribution(ALL_TYPES, rate_column="Ave_Rate(Hz)"),
     ["Ave_Rate(Hz)"], ["column is missing"], [], files=("observed_rates.csv",))
case("rate_distribution_annulus_without_core", m_rate_distribution(ALL_TYPES, annulus_weight=0.5), ["annulus_weight"],
     ["needs core_radius"], ["train.losses[1]"])
case("rate_distribution_empty_core", m_rate_distribution(ALL_TYPES, core_radius=1e-6), ["core_radius"],
     ["no neuron lies within"], ["train.losses[1]"])
case("loss_window_leaves_no_step", m_loss("post_ms", 20.0), ["post_ms"], ["leaves no step"], ["train.losses[0]"])
case("loss_window_not_whole_steps", m_loss("pre_ms", 2.5), ["pre_ms"], ["whole number"], ["train.losses[0]"])
case("emd_recurrent_frozen", m_emd_frozen, ["type"], ["not trainable"], ["train.losses[1]"])
case("sync_targets_without_table", m_loss_added({"type": "Synchronization", "cost": 1.0, "targets": "evoked",
                                                 "pool": "all"}), ["targets"], ["300 ms window only"],
     ["train.losses[1]"])
case("sync_pool_too_small", m_loss_added({"type": "Synchronization", "cost": 1.0, "targets": [1.0] * 7}), ["pool"],
     ["at least 15"], ["train.losses[1]"])
case("initial_state_with_carry_state", m_train_many(carry_state=True, initial_state={"type": "from_input"}),
     ["initial_state"], ["carry_state"], ["train"])
case("initial_state_unknown_type", m_train("initial_state", {"type": "from_checkpoint"}), ["type"],
     ["from_input"], ["train.initial_state"])
case("checkpoint_interval_zero", m_train("checkpoint_interval", 0), ["checkpoint_interval"], [">= 1"], ["train"])
case("accumulate_zero", m_train("accumulate", 0), ["accumulate"], [">= 1"], ["train"])
case("accumulate_not_integer", m_train("accumulate", 1.5), ["accumulate"], ["integer"], ["train"])
case("warmup_not_whole_steps", m_train("warmup_ms", 2.5), ["warmup_ms"], ["whole number"], ["train"])
case("warmup_negative", m_train("warmup_ms", -1.0), ["warmup_ms"], [">= 0"], ["train"])
case("carry_state_not_bool", m_train("carry_state", "yes"), ["carry_state"], ["true or false"], ["train"])
case("target_blocks_zero", m_train("target_blocks", 0), ["target_blocks"], [">= 1"], ["train"])
case("target_blocks_word", m_train("target_blocks", "fast"), ["target_blocks"], ["\"auto\"", "fast"], ["train"])
case("target_blocks_too_many", m_train("target_blocks", 65), ["target_blocks"], ["1..64", "65"], ["train"])
case("missing_losses", m_del_train("losses"), ["losses"], ["non-empty list", "required"], ["train"])
case("checkpoint_from_other_network", m_other_network, ["network_hash"], ["another network"],
     files=["step_1.h5"])
case("checkpoint_from_other_config", m_other_config, ["config_hash"], ["another config"], files=["step_1.h5"])
case("resume_missing_file", m_resume_missing, ["--resume", "resume"], ["does not exist"],
     files=["no_such_checkpoint.h5"])


# --------------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------------
def run_train(s):
    cmd = [s.binary, "train", s.config_path, "--no-progress"]
    if s.resume:
        cmd += ["--resume", s.resume]
    return call(cmd, s.root)


def check_no_output(s, problems, checks):
    harness.check_no_output(s.output_listing(), problems, checks)


def check_valid(s, problems, checks):
    out = s.output_dir
    metrics = os.path.join(out, "metrics.csv")
    if not os.path.isfile(metrics):
        problems.append("no metrics.csv")
    else:
        with open(metrics) as f:
            rows = list(csv.DictReader(f))
        if len(rows) != s.train["steps"]:
            problems.append("metrics.csv has %d rows, expected %d" % (len(rows), s.train["steps"]))
        elif [int(r["step"]) for r in rows] != list(range(1, s.train["steps"] + 1)):
            problems.append("metrics.csv steps are %s" % [r["step"] for r in rows])
        else:
            checks.append("metrics.csv has %d rows (columns %s)" % (len(rows), ",".join(rows[0].keys())))
    ck = os.path.join(out, "checkpoints", "step_%d.h5" % s.train["steps"])
    if not os.path.isfile(ck):
        problems.append("no checkpoint %s" % ck)
        return
    checks.append("checkpoints/step_%d.h5 exists" % s.train["steps"])
    src = os.path.join(s.net, "network", "v1_v1_edges.h5")
    dst = os.path.join(out, "network", "v1_v1_edges.h5")
    if not os.path.isfile(dst):
        problems.append("no exported network/v1_v1_edges.h5")
        return
    g = "/edges/v1_to_v1"
    with h5py.File(src, "r") as a, h5py.File(dst, "r") as b, h5py.File(ck, "r") as c:
        n_in = a[g + "/source_node_id"].shape[0]
        n_out = b[g + "/source_node_id"].shape[0]
        if n_in != n_out:
            problems.append("exported edges: %d, input: %d" % (n_out, n_in))
            return
        checks.append("network/v1_v1_edges.h5 loads with h5py, %d edges as the input" % n_out)
        grp = b[g + "/0"]
        nsyns = grp["nsyns"][()].astype(np.float64) if "nsyns" in grp else 1.0
        w_pA = grp["syn_weight"][()] * nsyns
        ck_pA = c["/surfaces/recurrent/weight_pA"][()]
        err = float(np.max(np.abs(w_pA - ck_pA)) / max(float(np.max(np.abs(ck_pA))), 1e-300))
        if err > 1e-6:
            problems.append("exported syn_weight * nsyns differs from the checkpoint's weight_pA (max rel %.3g)" % err)
        else:
            checks.append("exported syn_weight * nsyns = checkpoint recurrent weight_pA (max rel %.2g)" % err)


def run_case(name, binary, data_dir, keep):
    """data_dir (--data) is not used: the network is generated."""
    spec = CASES[name]

    def body(root, problems, checks):
        s = Sandbox(binary, root)
        spec["mutate"](s)
        s.write_config()
        rc, out, err = run_train(s)
        if spec.get("control"):
            if rc != 0:
                problems.append("exit code %d, expected 0" % rc)
            else:
                checks.append("exit code 0")
            check_valid(s, problems, checks)
        else:
            harness.check_error(spec, rc, err, problems, checks, s.root)
            check_no_output(s, problems, checks)
        return err

    return harness.run_in_tempdir(binary, "dpointnet_badtrain_", keep, body)


def main():
    return harness.main(__doc__, "bad_train.py", CASES, run_case,
                        dict(help="accepted for bad_inputs.py's command line; not used (the network is generated)"))


if __name__ == "__main__":
    sys.exit(main())
