"""SONATA configuration loading (SONATA.md section 1), independent of BMTK.

* manifest: keys lose their leading '$'; values may use other variables ($VAR or ${VAR});
  resolved iteratively; built-ins configdir (directory of *this* file), workingdir (CWD),
  configfname. A cycle or an unknown variable inside the manifest is an error.
* substitution runs over every string of the tree except the manifest; unknown variables are
  left alone; a string that is exactly one variable with a non-string value gives that value.
* `network` / `simulation` child files: path relative to the parent's directory; shallow
  merge, the child's keys win (network first, then simulation).
* every relative path is resolved against the directory of the JSON file that contains it.
* run.duration takes precedence over run.tstop.
"""
import json
import math
import os
import re

VAR_RE = re.compile(r'\$\{?(\w+)\}?')


class ConfigError(Exception):
    pass


def _subst_str(s, variables):
    m = VAR_RE.fullmatch(s)
    if m and m.group(1) in variables and not isinstance(variables[m.group(1)], str):
        return variables[m.group(1)]

    def rep(mm):
        name = mm.group(1)
        if name in variables:
            return str(variables[name])
        return mm.group(0)
    return VAR_RE.sub(rep, s)


def _subst(obj, variables):
    if isinstance(obj, str):
        return _subst_str(obj, variables)
    if isinstance(obj, dict):
        return {k: (v if k == 'manifest' else _subst(v, variables)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_subst(v, variables) for v in obj]
    return obj


def resolve_manifest(manifest, builtins, path='<config>'):
    pending = {}
    for k, v in (manifest or {}).items():
        pending[k[1:] if k.startswith('$') else k] = v
    resolved = dict(builtins)
    for k in pending:          # manifest entries shadow built-ins of the same name
        resolved.pop(k, None)
    while pending:
        progress = False
        for k in list(pending):
            v = pending[k]
            if not isinstance(v, str):
                resolved[k] = v
                del pending[k]
                progress = True
                continue
            refs = VAR_RE.findall(v)
            if all(r in resolved for r in refs):
                resolved[k] = _subst_str(v, resolved)
                del pending[k]
                progress = True
        if not progress:
            raise ConfigError('%s: Unable to resolve manifest variables %s' % (path, sorted(pending)))
    return resolved


def _anchor(p, base):
    if isinstance(p, str) and p != '' and not os.path.isabs(p):
        return os.path.normpath(os.path.join(base, p))
    if isinstance(p, str) and p != '':
        return os.path.normpath(p)
    return p


def _anchor_paths(conf, base):
    """Resolve the relative path values of one file's own tree against its directory."""
    comps = conf.get('components')
    if isinstance(comps, dict):
        for k, v in list(comps.items()):
            if isinstance(v, str):
                comps[k] = _anchor(v, base)
    nets = conf.get('networks')
    if isinstance(nets, dict):
        for key, fields in (('nodes', ('nodes_file', 'node_types_file')),
                            ('edges', ('edges_file', 'edge_types_file')),
                            ('gap_juncs', ('gap_juncs_file',))):
            for entry in nets.get(key) or []:
                if isinstance(entry, dict):
                    for f in fields:
                        if f in entry:
                            entry[f] = _anchor(entry[f], base)
    inputs = conf.get('inputs')
    if isinstance(inputs, dict):
        for inp in inputs.values():
            if isinstance(inp, dict):
                for f in ('input_file', 'file'):
                    if f in inp:
                        inp[f] = _anchor(inp[f], base)
    out = conf.get('output')
    if isinstance(out, dict) and 'output_dir' in out:
        out['output_dir'] = _anchor(out['output_dir'], base)
    for f in ('node_sets_file', 'network', 'simulation'):
        if isinstance(conf.get(f), str):
            conf[f] = _anchor(conf[f], base)


def load_config(path, _depth=0):
    if _depth > 16:
        raise ConfigError('%s: network/simulation nesting too deep' % path)
    path = os.path.abspath(path)
    with open(path) as fh:
        try:
            raw = json.load(fh)
        except json.JSONDecodeError as e:
            raise ConfigError('%s: invalid JSON: %s' % (path, e))
    cdir = os.path.dirname(path)
    builtins = {'configdir': cdir, 'workingdir': os.getcwd(), 'configfname': os.path.basename(path)}
    variables = resolve_manifest(raw.get('manifest', {}), builtins, path)
    conf = _subst(raw, variables)
    _anchor_paths(conf, cdir)
    for child_key in ('network', 'simulation'):
        child = conf.get(child_key)
        if isinstance(child, str):
            if not os.path.exists(child):
                raise ConfigError('%s: %s file %s not found' % (path, child_key, child))
            conf.update(load_config(child, _depth + 1))
    if _depth == 0:
        out = conf.get('output')
        if isinstance(out, dict) and isinstance(out.get('output_dir'), str):
            od = out['output_dir']
            for k, v in list(out.items()):
                if (k == 'log_file' or k.startswith('spikes_file')) and isinstance(v, str) \
                        and not os.path.isabs(v) and not v.startswith(od):
                    out[k] = os.path.join(od, v)
        conf['config_path'] = path
        conf['config_dir'] = cdir
    return conf


class RunParams:
    def __init__(self, conf):
        run = conf.get('run') or {}
        if 'dt' not in run:
            raise ConfigError('run.dt missing')
        self.dt = float(run['dt'])
        if not (self.dt > 0):
            raise ConfigError('run.dt must be > 0')
        if 'duration' in run:
            self.tstop = float(run['duration'])
        elif 'tstop' in run:
            self.tstop = float(run['tstop'])
        else:
            raise ConfigError('run.tstop / run.duration missing')
        self.n_steps = int(round(self.tstop / self.dt))   # round half to even
        self.seed = int(run.get('seed', 0)) & 0xFFFFFFFF
        self.batch_size = int(run.get('batch_size', 1))
        self.dynamics = run.get('dynamics', 'discrete')  # docs/model-nest.md

    def __repr__(self):
        return 'RunParams(dt=%g, tstop=%g, T=%d, seed=%d, batch=%d)' % (
            self.dt, self.tstop, self.n_steps, self.seed, self.batch_size)
