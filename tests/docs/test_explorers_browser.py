"""The built docs in real headless Chromium: every explorer loads, reacts and follows values.

    python -m pytest -m browser tests/docs

For every explorer: it mounts without console errors and without any network request, its
controls and stage buttons change the picture, clicking a value highlights exactly the
cells of earlier stages that fed it and of later stages that it went into, the reduced-motion preference turns the movement off, and a
screenshot is saved to ``test-artifacts/explorers/<id>.png``.  Per family, following a value
is also checked against the reference model (``cuda.coop.reference``) directly.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from .conftest import DOCS

pytestmark = pytest.mark.browser

sys.path.insert(0, str(DOCS / "_ext"))
import coop_explorer_data as explorer_data  # noqa: E402

DATASETS = explorer_data.available()
IDS = sorted(DATASETS)


def _pages_with_explorers(html: Path) -> dict:
    found = {}
    for page in sorted(html.rglob("*.html")):
        for ident in re.findall(r'data-coop-explorer="([a-z_]+)"', page.read_text()):
            found.setdefault(ident, page)
    return found


@pytest.fixture(scope="session")
def explorer_pages(docs_html):
    return _pages_with_explorers(docs_html)


def _root(ident):
    return f'[data-coop-explorer="{ident}"]'


def open_explorer(page, explorer_pages, ident, *, reduced_motion="no-preference"):
    assert ident in explorer_pages, f"no built page shows explorer {ident!r}"
    page.emulate_media(reduced_motion=reduced_motion)
    page.goto(explorer_pages[ident].as_uri())
    page.wait_for_selector(f"{_root(ident)}[data-coop-ready]", timeout=10_000)
    return page.locator(_root(ident))


def state(page, ident):
    return page.evaluate("""(sel) => {
        const root = document.querySelector(sel);
        const svg = root.querySelector('svg.coop-svg');
        return {key: root.getAttribute('data-scenario'), stage: +root.getAttribute('data-stage'),
                svg: svg ? svg.outerHTML : '', follow: root.getAttribute('data-follow'),
                motion: root.getAttribute('data-motion')};
    }""", _root(ident))


def step_to_end(page, ident):
    sc = DATASETS[ident]["scenarios"][state(page, ident)["key"]]
    for _ in range(len(sc["stages"]) - 1 - state(page, ident)["stage"]):
        page.click(f'{_root(ident)} button[data-action="step"]')
    assert state(page, ident)["stage"] == len(sc["stages"]) - 1


def highlighted(page, ident):
    """(stage, cell) of every highlighted cell."""
    return sorted(tuple(x) for x in page.evaluate("""(sel) => Array.from(
        document.querySelectorAll(sel + ' .coop-cell.coop-hl')).map(
        c => [+c.getAttribute('data-stage'), +c.getAttribute('data-cell')])""", _root(ident)))


def click_cell(page, ident, stage, cell):
    page.click(f'{_root(ident)} .coop-cell[data-stage="{stage}"][data-cell="{cell}"]')


def select(page, ident, control, value):
    page.select_option(f'{_root(ident)} select[data-control="{control}"]', str(value))


def _toks(t):
    return set() if t is None else set(t if isinstance(t, list) else [t])


def expected_highlight(scenario, stage, cell):
    """Earlier cells that fed the followed value, later cells it went into, equal cells in its stage."""
    chosen = _toks(scenario["stages"][stage]["t"][cell])
    out = []
    for si, st in enumerate(scenario["stages"]):
        for ci, t in enumerate(st["t"]):
            mine = _toks(t)
            if not mine:
                continue
            if (si < stage and mine <= chosen) or (si > stage and chosen <= mine) or (si == stage and mine == chosen):
                out.append((si, ci))
    return sorted(out)


# ------------------------------------------------------------------------------------------
# Every explorer
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ident", IDS)
def test_loads_without_errors_or_network(page, browser_context, explorer_pages, ident):
    root = open_explorer(page, explorer_pages, ident)
    s = state(page, ident)
    assert s["key"] == DATASETS[ident]["default"]
    assert root.locator(".coop-explorer-fallback").is_hidden()
    assert root.locator("svg.coop-svg .coop-cell").count() > 0
    assert not page.coop_errors, page.coop_errors
    assert not browser_context.coop_network, browser_context.coop_network


@pytest.mark.parametrize("ident", IDS)
def test_controls_change_the_picture(page, explorer_pages, ident):
    open_explorer(page, explorer_pages, ident)
    for control in DATASETS[ident]["controls"]:
        before = state(page, ident)
        index = [c["name"] for c in DATASETS[ident]["controls"]].index(control["name"])
        current = before["key"].split("|")[index]
        changed = False
        for value, _label in control["options"]:
            if str(value) == current:
                continue
            select(page, ident, control["name"], value)
            after = state(page, ident)
            assert after["key"] in DATASETS[ident]["scenarios"]
            assert after["key"].split("|")[index] == str(value)
            if after["svg"] != before["svg"]:
                changed = True
                break
        assert changed or len(control["options"]) == 1, f"control {control['name']!r} never changed the picture"
    assert not page.coop_errors, page.coop_errors


@pytest.mark.parametrize("ident", IDS)
def test_stage_buttons_and_play(page, explorer_pages, ident):
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")
    stages = len(DATASETS[ident]["scenarios"][DATASETS[ident]["default"]]["stages"])
    # It opens on the finished picture: every stage drawn, no blank rows.
    assert state(page, ident)["stage"] == stages - 1
    assert page.locator(f"{_root(ident)} .coop-stage.coop-hidden").count() == 0
    page.click(f'{_root(ident)} button[data-action="reset"]')
    assert state(page, ident)["stage"] == 0
    hidden = page.locator(f"{_root(ident)} .coop-stage.coop-hidden").count()
    assert hidden == stages - 1
    before = state(page, ident)["svg"]
    step_to_end(page, ident)
    assert page.locator(f"{_root(ident)} .coop-stage.coop-hidden").count() == 0
    assert state(page, ident)["svg"] != before
    page.click(f'{_root(ident)} button[data-action="back"]')
    assert state(page, ident)["stage"] == stages - 2
    step_to_end(page, ident)
    page.click(f'{_root(ident)} button[data-action="reset"]')
    assert state(page, ident)["stage"] == 0
    page.evaluate("(sel) => document.querySelector(sel).setAttribute('data-coop-play-ms', '150')", _root(ident))
    page.click(f'{_root(ident)} button[data-action="play"]')
    page.wait_for_function("(sel) => +document.querySelector(sel).getAttribute('data-stage') === %d"
                           % (stages - 1), arg=_root(ident), timeout=4000 * stages)
    page.wait_for_function("(sel) => !document.querySelector(sel).hasAttribute('data-playing')",
                           arg=_root(ident), timeout=5000)
    assert not page.coop_errors, page.coop_errors


@pytest.mark.parametrize("ident", IDS)
def test_following_highlights_the_cells_sharing_a_token(page, explorer_pages, ident, artifacts):
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")  # a still picture
    step_to_end(page, ident)
    scenario = DATASETS[ident]["scenarios"][state(page, ident)["key"]]
    first = scenario["stages"][0]
    cell = next(i for i, t in enumerate(first["t"]) if t is not None and i not in first["u"])
    click_cell(page, ident, 0, cell)
    assert highlighted(page, ident) == expected_highlight(scenario, 0, cell)
    assert state(page, ident)["follow"]
    # The last stage's cells too: following works backwards.
    last = len(scenario["stages"]) - 1
    target = next((i for i, t in enumerate(scenario["stages"][last]["t"]) if t is not None), None)
    if target is not None:
        click_cell(page, ident, last, target)
        assert highlighted(page, ident) == expected_highlight(scenario, last, target)
    # Keyboard: Enter on a focused cell follows it; Escape stops.
    page.focus(f'{_root(ident)} .coop-cell[data-stage="0"][data-cell="{cell}"]')
    page.keyboard.press("Enter")
    assert highlighted(page, ident) == expected_highlight(scenario, 0, cell)
    page.add_style_tag(content=".back-to-top { display: none !important; }")  # furo's floating button
    page.locator(_root(ident)).screenshot(path=str(artifacts / f"{ident}.png"))
    page.keyboard.press("Escape")
    assert highlighted(page, ident) == [] and state(page, ident)["follow"] is None
    assert not page.coop_errors, page.coop_errors


@pytest.mark.parametrize("ident", IDS)
def test_undefined_slots_are_marked(page, explorer_pages, ident):
    open_explorer(page, explorer_pages, ident)
    scenarios = DATASETS[ident]["scenarios"]
    key = next((k for k, sc in scenarios.items() if any(st["u"] for st in sc["stages"])), None)
    if key is None:
        pytest.skip(f"{ident}: no option of this explorer leaves a slot undefined")
    for control, value in zip(DATASETS[ident]["controls"], key.split("|")):
        select(page, ident, control["name"], value)
    assert state(page, ident)["key"] == key
    step_to_end(page, ident)
    marked = page.evaluate("""(sel) => Array.from(document.querySelectorAll(sel + ' .coop-cell.coop-undef'))
        .map(c => [+c.getAttribute('data-stage'), +c.getAttribute('data-cell'), c.textContent.trim()])""",
                           _root(ident))
    expected = sorted((si, ci) for si, st in enumerate(scenarios[key]["stages"]) for ci in st["u"])
    assert sorted((s, c) for s, c, _ in marked) == expected
    assert all(text.startswith("?") for _, _, text in marked)


@pytest.mark.parametrize("ident", IDS)
def test_reduced_motion_turns_movement_off(page, explorer_pages, ident):
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")
    assert state(page, ident)["motion"] == "reduce"
    page.click(f'{_root(ident)} button[data-action="reset"]')  # it opens on the last stage
    page.click(f'{_root(ident)} button[data-action="step"]')
    assert page.locator(f"{_root(ident)} .coop-fly").count() == 0
    duration = page.evaluate("""(sel) => getComputedStyle(
        document.querySelector(sel + ' .coop-stage')).transitionDuration""", _root(ident))
    assert all(float(d.rstrip("s") or 0) == 0 for d in duration.split(","))
    open_explorer(page, explorer_pages, ident, reduced_motion="no-preference")
    assert state(page, ident)["motion"] == "full"
    page.click(f'{_root(ident)} button[data-action="reset"]')
    sc = DATASETS[ident]["scenarios"][DATASETS[ident]["default"]]
    arriving = sc["stages"][1]
    source = sc["stages"][arriving.get("from", 0)]
    singles = {t for t in source["t"] if isinstance(t, int)}
    moving = [] if arriving.get("link") == "none" else [
        t for t in arriving["t"] if isinstance(t, int) and t in singles]
    page.click(f'{_root(ident)} button[data-action="step"]')
    assert page.locator(f"{_root(ident)} .coop-fly").count() == len(moving)


class _FallbackParser(HTMLParser):
    def __init__(self, ident):
        super().__init__()
        self.ident, self.depth, self.inside, self.cells = ident, 0, False, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.inside:
            self.depth += 1
        elif "coop-explorer-fallback" in (attrs.get("class") or "") and self.depth_target:
            self.inside, self.depth = True, 1
        if tag == "div" and attrs.get("data-coop-explorer") == self.ident:
            self.depth_target = True

    depth_target = False

    def handle_endtag(self, tag):
        if self.inside:
            self.depth -= 1
            if self.depth == 0:
                self.inside = False
                self.depth_target = False

    def handle_data(self, data):
        if self.inside and data.strip():
            self.cells.append(data.strip())


@pytest.mark.parametrize("ident", IDS)
def test_static_fallback_without_javascript(explorer_pages, ident):
    """Without JavaScript the page still shows the default scenario as tables."""
    parser = _FallbackParser(ident)
    parser.feed(explorer_pages[ident].read_text())
    scenario = DATASETS[ident]["scenarios"][DATASETS[ident]["default"]]
    text = " ".join(parser.cells)
    assert "Static view" in text
    for stage in scenario["stages"]:
        assert stage["title"] in text
        assert all(v in parser.cells for v in stage["v"])


def test_every_page_loads_without_errors(page, browser_context, docs_html):
    for html in sorted(docs_html.rglob("*.html")):
        if html.parent.name in ("_modules", "_sources") or "_modules" in html.parts:
            continue
        page.coop_errors.clear()
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        assert not page.coop_errors, (html.name, page.coop_errors)
    assert not browser_context.coop_network, browser_context.coop_network


# ------------------------------------------------------------------------------------------
# Following a value, checked against the reference models themselves
# ------------------------------------------------------------------------------------------

def _set(page, ident, **values):
    for name, value in values.items():
        select(page, ident, name, value)


@pytest.mark.skipif("load_store" not in DATASETS, reason="no load/store reference model")
@pytest.mark.parametrize("group,width,algorithm,k", [
    ("block", None, "striped", 2), ("block", None, "direct", 3),
    ("warp4", 4, "transpose", 2), ("warp2", 2, "striped", 4),
])
def test_load_follow_matches_reference(page, explorer_pages, group, width, algorithm, k):
    from cuda.coop.reference import load_store as ref

    ident = "load_store"
    open_explorer(page, explorer_pages, ident)
    _set(page, ident, op="load", group=group, algorithm=algorithm, items=k, tile="full")
    assert state(page, ident)["key"] == f"load|{group}|{algorithm}|{k}|full"
    step_to_end(page, ident)
    slots = ref.load(np.arange(8 * k), algorithm, 8, k, group_width=width)
    for j in (1, 5, 8 * k - 2):
        click_cell(page, ident, 0, j)
        t, i = map(int, np.argwhere(slots == j)[0])
        assert highlighted(page, ident) == [(0, j), (1, t * k + i)], (j, t, i)


@pytest.mark.skipif("load_store" not in DATASETS, reason="no load/store reference model")
def test_store_follow_matches_reference(page, explorer_pages):
    from cuda.coop.reference import load_store as ref

    ident = "load_store"
    open_explorer(page, explorer_pages, ident)
    _set(page, ident, op="store", group="block", algorithm="striped", items=3, tile="partial")
    step_to_end(page, ident)
    register = np.arange(24).reshape(8, 3)
    valid = 24 - 24 // 3
    after = ref.store(np.full(24, -1), register, "striped", 8, 3, valid_items=valid)
    for t, i in ((0, 1), (5, 2), (7, 0)):
        click_cell(page, ident, 0, t * 3 + i)
        where = np.flatnonzero(after == register[t, i])
        expected = [(0, t * 3 + i)] + [(1, int(j)) for j in where]
        assert highlighted(page, ident) == sorted(expected)


@pytest.mark.skipif("exchange" not in DATASETS, reason="no exchange reference model")
@pytest.mark.parametrize("group,width", [("block", None), ("warp4", 4)])
def test_exchange_follow_matches_reference(page, explorer_pages, group, width):
    from cuda.coop.reference import exchange as ref

    ident, k = "exchange", 3
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")
    _set(page, ident, group=group, mode="striped_to_blocked", items=k)
    step_to_end(page, ident)
    gsize = 8 if width is None else width
    src = ref.exchange_sources("striped_to_blocked", 8, k, group_width=width)  # [t, i] -> (t', i')
    for t, i in ((0, 1), (3, 2), (6, 0)):
        click_cell(page, ident, 0, t * k + i)
        out = [(int(a), int(b)) for a in range(8) for b in range(k) if tuple(src[a, b]) == (t, i)]
        assert len(out) == 1
        group_start = (t // gsize) * gsize
        position = group_start * k + int(ref.tile_positions("striped", gsize, k)[t - group_start, i])
        expected = sorted([(0, t * k + i), (1, position), (2, out[0][0] * k + out[0][1])])
        assert highlighted(page, ident) == expected


@pytest.mark.skipif("scan" not in DATASETS, reason="no scan reference model")
def test_scan_follow_shows_what_each_result_combines(page, explorer_pages):
    ident, k = "scan", 2
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")
    _set(page, ident, group="block", mode="inclusive", op="sum", items=k, extra="none")
    step_to_end(page, ident)
    n = 8 * k
    for p in (0, 5, n - 1):
        click_cell(page, ident, 1, p)  # result p combines inputs 0..p
        expected = [(0, q) for q in range(p + 1)] + [(1, p)]
        assert highlighted(page, ident) == sorted(expected)
    click_cell(page, ident, 0, 3)  # input 3 goes into results 3..n-1
    assert highlighted(page, ident) == sorted([(0, 3)] + [(1, r) for r in range(3, n)])


@pytest.mark.skipif("reduce" not in DATASETS, reason="no reduce reference model")
def test_reduce_follow_shows_every_contributor(page, explorer_pages):
    ident, k = "reduce", 3
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")
    _set(page, ident, group="warp4", op="sum", items=k, tile="partial", broadcast="rank0")
    step_to_end(page, ident)
    tile = 4 * k
    valid = tile - tile // 3
    click_cell(page, ident, 1, 4)  # the result of warp 1 (its lane 0)
    expected = [(0, 4 * k + j) for j in range(valid)] + [(1, 4)]
    assert highlighted(page, ident) == sorted(expected)


@pytest.mark.skipif("histogram" not in DATASETS, reason="no histogram reference model")
def test_histogram_follow_matches_reference(page, explorer_pages):
    from cuda.coop.reference import histogram as ref

    ident, k, bins = "histogram", 2, 10
    open_explorer(page, explorer_pages, ident, reduced_motion="reduce")
    _set(page, ident, bins=bins, items=k, tile="full", layout="blocked")
    step_to_end(page, ident)
    samples = np.array(DATASETS[ident]["scenarios"][f"{bins}|{k}|full|blocked"]["stages"][0]["v"],
                       dtype=int).reshape(8, k)
    counted = ref.counted_mask(samples, bins)
    for b in (3, 9):
        t, slot = b % 8, b // 8
        click_cell(page, ident, 1, t * 2 + slot)  # 2 counters per thread for 10 bins
        expected = [(0, a * k + j) for a in range(8) for j in range(k) if counted[a, j] and samples[a, j] == b]
        assert highlighted(page, ident) == sorted(expected + [(1, t * 2 + slot)])
