"""Shared machinery of the bad-input test scripts (bad_inputs.py, bad_train.py).

Each script defines its own sandbox, mutations and CASES (name -> spec dict) and a run_case; this module holds
what they have in common: running the binary as a subprocess, checking the `dpointnet: error: ` line, checking
that nothing was written to the output directory, the temp-dir frame of a case with its report, and main()
(`--list`, `--case NAME --bin PATH [--data DIR] [--all] [--keep]`). A script imports it after putting its own
directory on sys.path. Must run with Debian's /usr/bin/python3.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

RUN_TIMEOUT_S = 50


class CaseFailure(Exception):
    pass


def require_h5py_numpy(script):
    """Returns (h5py, numpy), or exits 1 saying that `script` needs them."""
    try:
        import h5py
        import numpy as np
    except ImportError as e:  # pragma: no cover
        sys.stderr.write("%s: FAIL: needs h5py and numpy (run it with Debian's /usr/bin/python3): %s\n" % (script, e))
        sys.exit(1)
    return h5py, np


def env():
    e = dict(os.environ)
    e.setdefault("OMP_NUM_THREADS", "1")
    e.setdefault("OMP_PROC_BIND", "false")
    return e


def call(cmd, cwd, who=None):
    """Runs cmd (printing it); returns (exit code, stdout, stderr). who names it in the timeout failure
    (default: the command line)."""
    print("run: %s" % " ".join(cmd))
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise CaseFailure("%s did not finish within %d s\nstderr:\n%s" %
                          (who or " ".join(cmd), RUN_TIMEOUT_S, (e.stderr or b"").decode(errors="replace")))
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def output_listing(output_dir):
    """{relative path: (mtime_ns, sha256)} of every file under output_dir (None when absent)."""
    if not os.path.exists(output_dir):
        return None
    out = {}
    for dp, _, fns in os.walk(output_dir):
        for fn in fns:
            p = os.path.join(dp, fn)
            with open(p, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            out[os.path.relpath(p, output_dir)] = (os.stat(p).st_mtime_ns, digest)
    return out


def error_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("dpointnet: error: ")]


def field_check(spec, line):
    """The default field check: the line names one of spec["fields"] as field '<name>'."""
    named = [x for x in spec["fields"] if "field '%s'" % x in line]
    return "names field '%s'" % named[0] if named else None


def check_error(spec, rc, stderr, problems, checks, root, fields=field_check):
    """Exit code 2, no internal error, and a last `dpointnet: error: ` line naming one of spec["files"], a field
    (fields(spec, line) returns the check's text, or None when no field is named), one of spec["sections"] as
    `: <section>: ` when the spec has any, and one of spec["phrases"]."""
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
    named = fields(spec, line)
    if named:
        checks.append(named)
    else:
        problems.append("error line names none of the fields %s (as field '<name>')" %
                        ", ".join("'%s'" % x for x in spec["fields"]))
    if spec.get("sections"):
        sec = [x for x in spec["sections"] if (": %s: " % x) in line]
        if sec:
            checks.append("names section %s" % sec[0])
        else:
            problems.append("error line names none of the sections %s" % spec["sections"])
    ph = [x for x in spec["phrases"] if x in line]
    if ph:
        checks.append("has key phrase '%s'" % ph[0])
    else:
        problems.append("error line has none of the key phrases %s" % spec["phrases"])


def check_no_output(listing, problems, checks):
    """listing: output_listing() of the output directory."""
    if listing is None:
        checks.append("output directory was not created")
    elif not listing:
        checks.append("output directory exists but is empty")
    else:
        problems.append("files were written to the output directory: %s" % sorted(listing))


def run_in_tempdir(binary, prefix, keep, body):
    """Checks the binary, makes a temp dir and calls body(root, problems, checks), which runs the case and
    returns the stderr to show on failure; prints the checks and problems; removes the temp dir unless keep.
    Returns True when there were no problems."""
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise CaseFailure("binary %s does not exist or is not executable" % binary)
    root = tempfile.mkdtemp(prefix=prefix)
    problems, checks = [], []
    try:
        err = body(root, problems, checks)
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


def main(doc, script, cases, run_case, data_args):
    """The command line. run_case(name, binary, data_dir, keep) returns True on a pass or raises CaseFailure;
    data_args are the keyword arguments of --data (default, help)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("--case", help="run one case")
    ap.add_argument("--all", action="store_true", help="run every case")
    ap.add_argument("--bin", help="the dpointnet binary")
    ap.add_argument("--data", **data_args)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    if a.list:
        print("\n".join(cases))
        return 0
    if not a.bin or not (a.case or a.all):
        ap.error("give --list, or --case NAME (or --all) with --bin PATH")
    names = list(cases) if a.all else [a.case]
    for n in names:
        if n not in cases:
            ap.error("unknown case %r (see --list)" % n)
    failed = []
    for n in names:
        print("=== case %s" % n)
        try:
            ok = run_case(n, os.path.abspath(a.bin), a.data, a.keep)
        except CaseFailure as e:
            print("  FAIL: %s" % e)
            sys.stderr.write("%s: %s: FAIL: %s\n" % (script, n, e))
            ok = False
        print("=== %s: %s" % (n, "PASS" if ok else "FAIL"))
        if not ok:
            failed.append(n)
    if a.all:
        print("\n%d/%d passed; failed: %s" % (len(names) - len(failed), len(names), " ".join(failed) or "none"))
    return 1 if failed else 0
