#!/usr/bin/python3
"""Self-test of the Python oracle. Plain script: prints each check, then 'N passed, M failed';
exit status 0 only if all pass. Usage: /usr/bin/python3 regression/test_oracle_selfcheck.py"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from oracle_selfcheck_common import RESULTS, TMP, test   # noqa: E402
import oracle_selfcheck_step                             # noqa: E402
import oracle_selfcheck_inputs                           # noqa: E402
import oracle_selfcheck_files                            # noqa: E402

# in this order: config_loading reads the network that single_glif_psc_peak_and_latency wrote
for fn in oracle_selfcheck_step.TESTS + oracle_selfcheck_inputs.TESTS + oracle_selfcheck_files.TESTS:
    test(fn)

shutil.rmtree(TMP, ignore_errors=True)
npass = sum(1 for _, ok in RESULTS if ok)
nfail = len(RESULTS) - npass
print('%d passed, %d failed' % (npass, nfail))
sys.exit(0 if nfail == 0 and npass > 0 else 1)
