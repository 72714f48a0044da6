"""What compile time decides about one call, without a compiler: descriptors -> plan -> C++.

The developer guide follows the quickstart kernel's ``coop.load`` through these steps.
Pure Python: ``tests/docs_examples/test_developer_snapshots.py`` runs it (marker ``unit``)
and checks its output against ``docs/developer/quickstart_plan.txt``.
"""

# example-begin plan
import numpy as np

from cuda.coop.core.cpp import make_provider
from cuda.coop.ops import _registry
from cuda.coop.core.spec import ArrayArg, GroupArg, LaunchFacts, PayloadArg, ScalarArg


def plan_quickstart_load():
    # What typing sees in `coop.load(block, source, items, offset=offset)`:
    group = GroupArg("block")                              # coop.this_block()
    source = ArrayArg(np.dtype("int32"), 1, True)          # int32[::1]
    items = PayloadArg(np.dtype("int32"), 4)               # ThreadData(4), dtype from source
    offset = ScalarArg(np.dtype("int64"))                  # a runtime int64
    spec = {s.name: s for s in _registry.all_specs()}["load"]
    plan = spec.plan(group, source, items, offset=offset)  # validates; raises CoopError subclasses
    # What lowering adds: the launch facts, then one provider per distinct call.
    provider = make_provider(plan, LaunchFacts(block=(128, 1, 1), cc=(9, 0)))
    return plan, provider
# example-end plan


PURE_PYTHON = True  # no kernel: the compile and GPU example tests skip this file


def describe():
    plan, provider = plan_quickstart_load()
    lines = [
        f"op={plan.op} family={plan.family} group={plan.group.label}",
        f"result={plan.result}",
        "operands (the provider's parameters, in order):",
        *[f"  {o.name}: {o.passing} {o.dtype.name} <- {o.source}" for o in plan.operands],
        f"storage={plan.storage} temp_storage={plan.temp_storage} sync={plan.sync}",
        f"params={plan.params}",
        f"symbol={provider.symbol}",
        "",
        provider.source.rstrip(),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(describe(), end="")
