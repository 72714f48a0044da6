"""What tests/core/test_build.py shares with tests/core/test_logging.py: kept here because test
modules do not import each other."""

from __future__ import annotations

import numpy as np


def _providers(algorithms, block=(128, 1, 1)):
    from cuda.coop.core import spec
    from cuda.coop.core.cpp import make_provider
    from cuda.coop.ops.load_store import plan_load

    launch = spec.LaunchFacts(block=block, cc=(9, 0))
    out = []
    for algo in algorithms:
        plan = plan_load(spec.GroupArg("block"), spec.ArrayArg(np.dtype("int32"), 1, True),
                         spec.PayloadArg(None, 4), algorithm=spec.StringArg(algo))
        out.append(make_provider(plan, launch))
    return out
