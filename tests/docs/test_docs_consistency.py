"""The docs sources agree with the package (pure Python: no Sphinx, no compiler, no browser).

- the explorer datasets are complete and consistent, and computed by the reference models;
- every explorer has a page and every ``coop-explorer`` directive names a known explorer;
- every ``literalinclude`` of an example names a file and a marker pair that exist, and every
  example file is shown somewhere;
- every public name is in the API reference, every environment variable and pip extra is
  on the configuration page.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import coop_explorer_data as explorer_data  # noqa: E402

pytestmark = pytest.mark.unit

DATASETS = explorer_data.available()
RST = {p: p.read_text() for p in DOCS.rglob("*.rst") if "_build" not in p.parts}


@pytest.mark.parametrize("ident", sorted(DATASETS))
def test_dataset_is_consistent(ident):
    data = DATASETS[ident]
    explorer_data.validate_dataset(data)
    assert data["threads"] == 8
    for key, sc in data["scenarios"].items():
        for st in sc["stages"]:
            for i in st["d"]:
                assert i < len(st["v"])


def test_the_explorers_are_the_op_records_explorers():
    """Each operation names its explorer in its op record (OpSpec.explorer_id); the docs
    registry has exactly those, so a new operation without one, or a stale explorer, fails."""
    from cuda.coop.ops._registry import all_specs

    assert set(explorer_data.EXPLORERS) == {spec.explorer_id for spec in all_specs()}


def test_every_explorer_has_a_page_and_every_directive_is_known():
    used = {}
    for path, text in RST.items():
        for ident in re.findall(r"^\.\. coop-explorer:: (\S+)", text, re.M):
            assert ident in explorer_data.EXPLORERS, f"{path.name}: unknown explorer {ident!r}"
            used.setdefault(ident, path)
    missing = sorted(set(DATASETS) - set(used))
    if missing:
        # A family's reference model landed before its docs page: remind, do not block its commit.
        import warnings

        warnings.warn(f"explorers with data but no docs page yet: {missing}")


def test_explorer_json_round_trip(tmp_path):
    written = explorer_data.export(tmp_path, DATASETS)
    assert sorted(written) == sorted(DATASETS)
    for ident in written:
        js = (tmp_path / f"{ident}.js").read_text()
        assert js.startswith("(window.CoopExplorerData = window.CoopExplorerData || {})")
        assert (tmp_path / f"{ident}.json").read_text() in js


@pytest.mark.skipif("load_store" not in DATASETS, reason="no load/store reference model")
def test_load_store_explorer_covers_the_algorithm_tables():
    from cuda.coop.ops.load_store import LOAD_ALGORITHMS
    from cuda.coop.reference import load_store as ref

    data = DATASETS["load_store"]
    keys = [k.split("|") for k in data["scenarios"]]
    for group, width in (("block", None), ("warp4", 4), ("warp2", 2)):
        table = LOAD_ALGORITHMS["block" if width is None else "warp"]
        shown = {k[2] for k in keys if k[1] == group}
        assert shown == set(table), (group, shown)
    # One scenario recomputed here: the picture is the model's answer.
    sc = data["scenarios"]["load|warp4|transpose|3|partial_oob"]
    slots = ref.load(np.arange(24), "transpose", 8, 3, group_width=4, valid_items=8, oob_default=-1)
    assert sc["stages"][1]["v"] == [str(v) for v in slots.ravel()]


def _includes():
    for path, text in RST.items():
        for m in re.finditer(r"\.\. literalinclude:: (\S+)\n((?:   :.*\n)*)", text):
            options = dict(re.findall(r"   :([\w-]+):\s*(.*)", m.group(2)))
            yield path, (path.parent / m.group(1)).resolve(), options


def test_literalincludes_name_existing_markers():
    for page, target, options in _includes():
        assert target.is_file(), f"{page.name}: {target} does not exist"
        text = target.read_text()
        for key in ("start-after", "end-before"):
            if key in options:
                assert options[key] in text, f"{page.name}: marker {options[key]!r} not in {target.name}"
        begin = options.get("start-after", "")
        if begin.startswith("# example-begin "):
            name = begin[len("# example-begin "):]
            assert options.get("end-before") == f"# example-end {name}", (page.name, name)


def test_every_example_file_and_snippet_is_shown():
    shown = {}
    for _page, target, options in _includes():
        shown.setdefault(target, set()).add(options.get("start-after", "").replace("# example-begin ", ""))
    for example in sorted((DOCS / "examples").glob("*.py")):
        names = re.findall(r"^# example-begin (\S+)$", example.read_text(), re.M)
        assert names, f"{example.name} has no example markers"
        assert example.resolve() in shown, f"{example.name} is not shown on any page"
        unused = set(names) - shown[example.resolve()]
        assert not unused, f"{example.name}: snippets {sorted(unused)} are not shown on any page"


def test_api_reference_lists_every_public_name():
    import cuda.coop as coop
    from cuda.coop import _errors
    from cuda.coop.ops._registry import public_operations

    api = RST[DOCS / "api.rst"]
    assert ".. coop-operations::" in api and ".. coop-errors::" in api
    generated = set(public_operations()) | set(_errors.__all__)
    for name in coop.__all__:
        if name in generated or name == "__version__":
            continue
        assert re.search(rf"cuda\.coop\.{name}\b", api), f"{name} is missing from docs/api.rst"


def test_configuration_page_lists_every_variable_and_extra():
    from cuda.coop import _env

    page = RST[DOCS / "configuration.rst"]
    assert ".. coop-env-table::" in page and ".. coop-extras-table::" in page
    read = set()
    for src in (ROOT / "src").rglob("*.py"):
        read |= set(re.findall(r"\b(CUDA_COOP_[A-Z0-9_]+)\b", src.read_text()))
    undocumented = sorted(v for v in read if v not in _env.ENV and f"``{v}``" not in page)
    assert not undocumented, f"environment variables read in src/ but not documented: {undocumented}"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras, "pyproject.toml has no extras"


def _signature_directives():
    """{page: [operation names]} of every ``.. coop-signatures::`` block under docs/ops."""
    found = {}
    for path, text in RST.items():
        for block in re.findall(r"^\.\. coop-signatures::\n\n((?:   .*\n|\n)+)", text, re.M):
            names = [ln.strip().rpartition("=")[2].strip() for ln in block.splitlines()
                     if ln.strip() and not ln.strip().startswith("#")]
            found.setdefault(path.relative_to(DOCS).as_posix(), []).extend(names)
    return found


def test_every_operation_shows_its_generated_signature():
    """Each public operation's signature block is rendered from its stub (docs/_ext/
    coop_signatures.py) on its family's page, so the docs cannot drift from the code."""
    from cuda.coop.ops._registry import all_specs

    found = _signature_directives()
    for spec in all_specs():
        page = f"ops/{spec.family}.rst"
        assert spec.name in found.get(page, []), f"{page} has no coop-signatures line for {spec.name}"
    # and no page hand-writes one any more
    for path, text in RST.items():
        if path.parent.name == "ops":
            assert not re.search(r"^   [\w, ]+ = coop\.\w+\(.*\*,", text, re.M), path.name


def test_index_page_shows_an_explorer():
    assert re.search(r"^\.\. coop-explorer:: \w+", RST[DOCS / "index.rst"], re.M)


def test_packaging_pin_table_matches_ci_pins():
    """docs/packaging.rst shows every row of ci/pins.toml, with the values of both majors."""
    pins = tomllib.loads((ROOT / "ci" / "pins.toml").read_text())
    page = RST[DOCS / "packaging.rst"]
    table = page.split(".. list-table:: ``ci/pins.toml``", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^   \* - ``(\w+)``\n     - ``([^`]*)``\n     - ``([^`]*)``", table, re.M)
    assert rows, "no pin rows found under the ci/pins.toml list-table of docs/packaging.rst"
    shown = {key: (cu12, cu13) for key, cu12, cu13 in rows}
    want = {key: (str(pins["cu12"][key]), str(pins["cu13"][key])) for key in pins["cu12"] if key != "cuda_major"}
    assert shown == want, "docs/packaging.rst's pin table differs from ci/pins.toml"


def test_every_benchmark_table_names_a_recorded_run():
    """A ``coop-benchmark-table`` renders a run the device recorded: its JSON holds the table's
    rows and says where and when it ran (docs/_ext/coop_bench_tables.py)."""
    import json

    used = [(path, folder, family) for path, text in RST.items()
            for folder, family in re.findall(r"^\.\. coop-benchmark-table:: (\S+) (\S+)", text, re.M)]
    for path, folder, family in used:
        runs = [DOCS / folder / tk / f"bench_{family}.json" for tk in ("cu13", "cu12")]
        runs = [run for run in runs if run.is_file()]
        assert runs, f"{path.name}: no recorded bench_{family}.json under {folder}"
        for run in runs:
            data = json.loads(run.read_text())
            assert data["table"]["rows"], run
            assert all(row["coop"] for row in data["table"]["rows"].values()), run
            meta = data["meta"]
            assert meta["commit"] != "unknown" and meta["date"] and meta["device"].startswith("NVIDIA"), run
