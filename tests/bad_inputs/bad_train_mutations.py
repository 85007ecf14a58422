"""Mutations of `dpointnet train` configs for tests/bad_inputs/bad_train.py: each takes a Sandbox (config not yet
written) and returns nothing, or builds such a function."""
import os

OTHER_NET_SEED = 3


def m_none(s):
    pass


def m_train(key, value):
    def f(s):
        s.train[key] = value
    return f


def m_del_train(key):
    def f(s):
        del s.train[key]
    return f


def m_loss(key, value):
    def f(s):
        s.train["losses"][0][key] = value
    return f


def m_del_loss(key):
    def f(s):
        del s.train["losses"][0][key]
    return f


def m_optimizer(key, value):
    def f(s):
        s.train["optimizer"][key] = value
    return f


def m_run(key, value):
    def f(s):
        s.config["run"][key] = value
    return f


def m_trainable(key, value):
    def f(s):
        s.train["trainable"][key] = value
    return f


def m_rate_distribution(rows=None, **keys):
    """Adds a RateDistribution loss; rows: the observed-rates table written next to the config (None: no file)."""
    def f(s):
        path = os.path.join(s.root, "observed_rates.csv")
        if rows is not None:
            with open(path, "w") as out:
                out.write(rows)
        loss = {"type": "RateDistribution", "cost": 1.0, "target_file": path}
        loss.update(keys)
        s.train["losses"].append(loss)
    return f


ALL_TYPES = "node_type_id rate_hz\n" + "".join(f"{t} 5.0\n" for t in range(1000))


def m_loss_added(loss):
    def f(s):
        s.train["losses"].append(loss)
    return f


def m_train_many(**keys):
    def f(s):
        s.train.update(keys)
    return f


def m_emd_frozen(s):
    s.train["trainable"]["recurrent"] = False
    s.train["losses"].append({"type": "EMDWeightRegularization", "cost": 1.0, "group_by": "ei"})


def m_surrogate_type(s):
    s.train["surrogate"] = {"type": "sigmoid", "dampening_factor": 0.3}


def m_other_network(s):
    s.resume = s.pretrain(1)
    s.generate(OTHER_NET_SEED)   # same paths, other network: only the network hash differs


def m_other_config(s):
    s.resume = s.pretrain(1)
    s.train["losses"][0]["cost"] = 2.0


def m_resume_missing(s):
    s.resume = os.path.join(s.root, "no_such_checkpoint.h5")
