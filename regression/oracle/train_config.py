"""The "train" section of a config (surrogate, dampers, trainable surfaces, losses, optimizer), with defaults."""
import numpy as np

from .autograd_ops import TrainError
from . import v1_losses, v1_sync_osi


LOSS_TYPES = ('TargetFiringRate', 'VoltageRegularization', 'WeightRegularization', 'RateDistribution',
              'EMDWeightRegularization', 'Synchronization', 'OrientationSelectivity')


def read_observed_rates(path, group_by='node_type_id', rate_column='rate_hz'):
    """{group value (str): sorted rates (Hz)} from a space-separated table (columns group_by and rate_column,
    "quoted values", NaN rates skipped) or an HDF5 file (/node_type_id + /rate_hz, or /observed/<value>)."""
    if path.endswith('.h5') or path.endswith('.hdf5'):
        import h5py
        with h5py.File(path, 'r') as f:
            if 'observed' in f:
                return {k: np.sort(np.asarray(f['observed'][k][()], np.float64)) for k in f['observed']}
            keys = np.array([str(int(t)) for t in f['node_type_id'][()]], dtype=object)
            hz = np.asarray(f['rate_hz'][()], np.float64)
    else:
        return v1_losses.read_rate_table(path, group_by, rate_column)
    return {k: np.sort(hz[keys == k]) for k in sorted(set(keys.tolist()))}


def parse_initial_state(spec, carry_state, warmup_ms):
    """train.initial_state: None (every window starts at rest) or {"type": "from_input", "inputs": {input name:
    complete input spec}} (the overrides of the base inputs for the from-input run)."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or spec.get('type') != 'from_input':
        raise TrainError('train.initial_state: {"type": "from_input", "inputs": {...}} (got %r)' % (spec,))
    inputs = spec.get('inputs', {})
    if not isinstance(inputs, dict) or not all(isinstance(v, dict) for v in inputs.values()):
        raise TrainError('train.initial_state.inputs: an object of input name -> input spec')
    if carry_state:
        raise TrainError('train.initial_state "from_input" together with train.carry_state')
    if warmup_ms:
        raise TrainError('train.initial_state "from_input" together with train.warmup_ms')
    return {'type': 'from_input', 'inputs': inputs}


class TrainConfig:
    def __init__(self, train, model):
        if not isinstance(train, dict):
            raise TrainError('config has no "train" section')
        if 'epochs' in train or 'steps_per_epoch' in train:
            if 'steps' in train:
                raise TrainError('train: give either steps or epochs x steps_per_epoch')
            self.epochs, self.steps_per_epoch = int(train.get('epochs', 1)), int(train.get('steps_per_epoch', 1))
            self.steps = self.epochs * self.steps_per_epoch
        else:  # the steps form one epoch
            self.steps = self.steps_per_epoch = int(train.get('steps', 1))
            self.epochs = 1
        if self.steps_per_epoch < 1 or self.epochs < 1:
            raise TrainError('train: epochs and steps_per_epoch (or steps) must be >= 1')
        self.accumulate = int(train.get('accumulate', 1))  # the mean over K x B samples: one batch of K x B
        self.warmup_ms = float(train.get('warmup_ms', 0.0))
        # each sample slot of an update starts from the final state of the previous update's sample in that slot
        self.carry_state = bool(train.get('carry_state', False))
        # train.initial_state "from_input": at the first update of every epoch, slot p's start state is the final
        # state of a no-gradient run from rest of the override inputs (oracle/train.py, Trainer.from_input_state)
        self.initial_state = parse_initial_state(train.get('initial_state'), self.carry_state, self.warmup_ms)
        sur = train.get('surrogate') or {}
        self.surrogate = sur.get('type', 'triangle')
        if self.surrogate not in ('triangle', 'gauss'):
            raise TrainError('train.surrogate.type %r: must be "triangle" or "gauss"' % self.surrogate)
        self.gamma = float(sur.get('dampening_factor', 0.1))
        self.sigma = float(sur.get('sigma', 0.28))
        self.voltage_gradient_dampening = float(train.get('voltage_gradient_dampening', 0.5))
        self.recurrent_dampening_factor = float(train.get('recurrent_dampening_factor', 0.1))
        tr = train.get('trainable') or {}
        for k in tr:
            if k not in model.surface_names:
                raise TrainError('train.trainable: %r is neither "recurrent" nor a virtual population (%s)'
                                 % (k, model.surface_names[1:]))
        self.trainable = {s: bool(tr.get(s, s == 'recurrent')) for s in model.surface_names}
        self.losses = []
        counts = {}
        for i, L in enumerate(train.get('losses') or []):
            ty = L.get('type')
            if ty not in LOSS_TYPES:
                raise TrainError('train.losses[%d]: unknown type %r (%s)' % (i, ty, ', '.join(LOSS_TYPES)))
            counts[ty] = counts.get(ty, 0) + 1
        seen = {}
        for i, L in enumerate(train.get('losses') or []):
            ty = L['type']
            seen[ty] = seen.get(ty, 0) + 1
            name = ty if counts[ty] == 1 else '%s_%d' % (ty, seen[ty])
            spec = dict(L)
            spec['name'] = name
            spec['cost'] = float(L.get('cost', 1.0))
            if ty == 'TargetFiringRate':
                unit = L.get('unit', 'Hz')
                if unit not in ('Hz', 'spikes_per_step'):
                    raise TrainError('train.losses[%d]: unit %r must be "Hz" or "spikes_per_step"' % (i, unit))
                spec['unit'] = unit
                spec['pre_ms'], spec['post_ms'] = float(L.get('pre_ms', 0.0)), float(L.get('post_ms', 0.0))
                if 'target_by_node_type' in L:
                    m = {int(k): float(v) for k, v in L['target_by_node_type'].items()}
                    missing = sorted(set(model.node_type_id.tolist()) - set(m))
                    if missing:
                        raise TrainError('train.losses[%d]: target_by_node_type lacks node types %s'
                                         % (i, missing))
                    spec['target_vec'] = np.array([m[int(t)] for t in model.node_type_id])
                elif 'target' in L:
                    spec['target_vec'] = np.full(model.N, float(L['target']))
                else:
                    raise TrainError('train.losses[%d]: TargetFiringRate needs target or target_by_node_type' % i)
            elif ty == 'RateDistribution':
                group_by = L.get('group_by', 'node_type_id')
                obs = read_observed_rates(L['target_file'], group_by, L.get('rate_column', 'rate_hz'))
                spec.update(v1_losses.rate_distribution_spec(L, model, obs, 'train.losses[%d]' % i))
            elif ty == 'EMDWeightRegularization':
                spec.update(v1_losses.emd_spec(L, model, 'train.losses[%d]' % i))
            elif ty in v1_sync_osi.PER_CONDITION_TYPES:
                spec.update(v1_sync_osi.parse(L, model, 'train.losses[%d] (%s)' % (i, name)))
            elif ty == 'VoltageRegularization':
                mode = L.get('mode', 'range')
                if mode not in ('range', 'threshold'):
                    raise TrainError('train.losses[%d]: mode %r must be "range" or "threshold"' % (i, mode))
                spec['mode'] = mode
            self.losses.append(spec)
        opt = train.get('optimizer') or {}
        self.optimizer_type = opt.get('type', 'adam')
        if self.optimizer_type not in ('adam', 'exp_adam'):
            raise TrainError('train.optimizer.type %r: "adam" or "exp_adam"' % opt.get('type'))
        # how the stimulus conditions make optimizer steps (oracle/train.py)
        self.approach = train.get('approach', 'accumulate')
        if self.approach not in ('accumulate', 'series', 'series_accumulate'):
            raise TrainError('train.approach %r: "accumulate", "series" or "series_accumulate"' % self.approach)
        self.lr = float(opt.get('lr', 0.001))
        self.beta1 = float(opt.get('beta1', 0.9))
        self.beta2 = float(opt.get('beta2', 0.999))
        self.epsilon = float(opt.get('epsilon', 1e-11))
        c = opt.get('clip_global_norm')
        self.clip_global_norm = None if c is None else float(c)
