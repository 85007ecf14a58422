#!/usr/bin/python3
"""Self-test of the training oracle (oracle/train.py, run_grad_oracle.py). Plain script: prints each
check, then 'N passed, M failed'; exit status 0 only if all pass.
Usage: /usr/bin/python3 regression/test_grad_oracle_selfcheck.py"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from grad_selfcheck_common import RESULTS, TMP, test    # noqa: E402
import grad_selfcheck_approach                          # noqa: E402
import grad_selfcheck_forward                           # noqa: E402
import grad_selfcheck_from_input                        # noqa: E402
import grad_selfcheck_gradients                         # noqa: E402
import grad_selfcheck_training                          # noqa: E402
import grad_selfcheck_v1_losses                         # noqa: E402
import grad_selfcheck_v1_sync_osi                       # noqa: E402
import grad_selfcheck_v1_sync_osi_training              # noqa: E402
import grad_selfcheck_v1_training                       # noqa: E402

for fn in (grad_selfcheck_forward.TESTS + grad_selfcheck_gradients.TESTS + grad_selfcheck_training.TESTS
           + grad_selfcheck_v1_losses.TESTS + grad_selfcheck_v1_training.TESTS + grad_selfcheck_approach.TESTS
           + grad_selfcheck_v1_sync_osi.TESTS + grad_selfcheck_v1_sync_osi_training.TESTS
           + grad_selfcheck_from_input.TESTS):
    test(fn)

shutil.rmtree(TMP, ignore_errors=True)
npass = sum(1 for _, ok in RESULTS if ok)
nfail = len(RESULTS) - npass
print('%d passed, %d failed' % (npass, nfail))
sys.exit(0 if nfail == 0 and npass > 0 else 1)
