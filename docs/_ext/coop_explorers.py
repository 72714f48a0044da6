"""Sphinx extension of the cuda-coop docs: explorers and tables generated from the package.

Directives
----------
``.. coop-explorer:: <id>``
    An interactive explorer (``_static/coop-explorers/coop-explorer.js``) over the
    dataset that :mod:`coop_explorer_data` computes with ``cuda.coop.reference``.  The
    HTML contains a static fallback (a table of the default scenario plus the directive's
    content) that the script hides once it has mounted; without JavaScript, or in
    non-HTML builders, only the fallback is shown.
``.. coop-operations::``
    ``autofunction`` for every public operation of every family in
    ``cuda.coop.ops._registry.FAMILIES`` (a new family appears without editing the docs).
``.. coop-errors::``
    ``autoexception`` for every name in ``cuda.coop._errors.__all__``.
``.. coop-env-table::``
    The environment variables of ``cuda.coop._env.ENV``.
``.. coop-algorithms:: <family>``
    The algorithm tables (``AlgorithmSpec``) a family module declares.

The datasets are exported as JSON (and as a ``.js`` wrapper that works from file://)
into ``<outdir>/../_coop_generated/coop-explorers/data``, which is added to
``html_static_path``; each page loads the data of the explorers it shows.
"""

from __future__ import annotations

import html
import importlib
import inspect
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

import coop_explorer_data as data

logger = logging.getLogger(__name__)

_DATASETS: dict | None = None


def datasets() -> dict:
    global _DATASETS
    if _DATASETS is None:
        _DATASETS = data.available()
        for dataset in _DATASETS.values():
            data.validate_dataset(dataset)
    return _DATASETS


# ------------------------------------------------------------------------------------------
# Explorer directive
# ------------------------------------------------------------------------------------------

class coop_explorer(nodes.General, nodes.Element):
    pass


class CoopExplorer(SphinxDirective):
    required_arguments = 1
    has_content = True
    option_spec = {"caption": directives.unchanged}

    def run(self):
        name = self.arguments[0]
        if name not in data.EXPLORERS:
            raise self.error(f"coop-explorer: unknown explorer {name!r}; known: {', '.join(data.EXPLORERS)}")
        available = datasets()
        if name not in available:
            logger.warning(f"coop-explorer {name!r}: cuda.coop.reference.{data.EXPLORERS[name][1]} does "
                           "not exist yet; the page shows only the static text", location=self.get_location())
        node = coop_explorer(explorer=name)
        fallback = nodes.container(classes=["coop-explorer-fallback"])
        if name in available:
            fallback += _fallback_table(available[name])
        if self.content:
            nested_parse_with_titles(self.state, self.content, fallback)
        node += fallback
        env = self.env
        if not hasattr(env, "coop_explorer_pages"):
            env.coop_explorer_pages = {}
        env.coop_explorer_pages.setdefault(env.docname, set()).add(name)
        return [node]


def _fallback_table(dataset):
    """The default scenario as plain tables (what readers without JavaScript see)."""
    sc = dataset["scenarios"][dataset["default"]]
    out = []
    intro = nodes.paragraph(classes=["coop-fallback-note"])
    intro += nodes.Text("Static view of the default settings (the interactive explorer needs JavaScript): ")
    intro += nodes.literal(text=sc["call"])
    out.append(intro)
    for si, st in enumerate(sc["stages"]):
        table = nodes.table(classes=["coop-fallback-table"])
        if st["kind"] == "threads":
            k = st["k"]
            rows = [[f"thread {t}", *st["v"][t * k:(t + 1) * k]] for t in range(dataset["threads"])]
            header = ["", *[f"slot {i}" for i in range(k)]]
        else:
            rows = [[str(j), v] for j, v in enumerate(st["v"])]
            # memory rows are long: print them as index/value pairs across
            rows = [["index", *[str(j) for j in range(len(st["v"]))]], ["value", *st["v"]]]
            header = None
        ncols = max(len(r) for r in rows)
        tgroup = nodes.tgroup(cols=ncols)
        for _ in range(ncols):
            tgroup += nodes.colspec(colwidth=1)
        table += nodes.title(text=f"{si + 1}. {st['title']}")
        if header:
            thead = nodes.thead()
            thead += _row(header)
            tgroup += thead
        tbody = nodes.tbody()
        for r in rows:
            tbody += _row(r)
        tgroup += tbody
        table += tgroup
        out.append(table)
    if sc.get("notes"):
        lst = nodes.bullet_list()
        for n in sc["notes"]:
            item = nodes.list_item()
            item += nodes.paragraph(text=n)
            lst += item
        out.append(lst)
    return out


def _row(cells):
    row = nodes.row()
    for c in cells:
        entry = nodes.entry()
        entry += nodes.paragraph(text=str(c))
        row += entry
    return row


def visit_coop_explorer_html(self, node):
    name = node["explorer"]
    title = data.EXPLORERS[name][0]
    self.body.append(
        f'<div class="coop-explorer" data-coop-explorer="{html.escape(name)}" '
        f'role="region" aria-label="{html.escape(title)} explorer">'
    )


def depart_coop_explorer_html(self, node):
    self.body.append("</div>")


def visit_coop_explorer_other(self, node):
    pass


def depart_coop_explorer_other(self, node):
    pass


# ------------------------------------------------------------------------------------------
# Tables generated from the package
# ------------------------------------------------------------------------------------------

class _GeneratedRst(SphinxDirective):
    def rst_lines(self) -> list:
        raise NotImplementedError

    def run(self):
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(self.rst_lines(), source="<coop generated>"), container)
        return container.children


class CoopOperations(_GeneratedRst):
    """autofunction for every public operation, grouped by family."""

    def rst_lines(self):
        from cuda.coop.ops import _registry

        lines = []
        for family in _registry.FAMILIES:
            short = family.__name__.rsplit(".", 1)[-1]
            title = (family.__doc__ or short).strip().splitlines()[0].rstrip(".")
            lines += [f".. rubric:: {title}", "", f"Family module ``cuda.coop.ops.{short}``; "
                      f"guide: :doc:`/ops/{short}`." if _has_page(self.env, short) else
                      f"Family module ``cuda.coop.ops.{short}``.", ""]
            for spec in family.SPECS:
                lines += [f".. autofunction:: cuda.coop.{spec.name}", ""]
        return lines


def _has_page(env, family: str) -> bool:
    return f"ops/{family}" in env.found_docs


class CoopErrors(_GeneratedRst):
    def rst_lines(self):
        from cuda.coop import _errors

        lines = []
        for name in _errors.__all__:
            lines += [f".. autoexception:: cuda.coop.{name}", "   :show-inheritance:", ""]
        return lines


class CoopEnvTable(_GeneratedRst):
    def rst_lines(self):
        from cuda.coop import _env

        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 35 65", "",
                 "   * - Variable", "     - Effect"]
        for name, what in _env.ENV.items():
            lines += [f"   * - ``{name}``", f"     - {what[0].upper() + what[1:]}."]
        return lines


class CoopAlgorithms(_GeneratedRst):
    required_arguments = 1

    def rst_lines(self):
        from cuda.coop.core.spec import AlgorithmSpec

        family = importlib.import_module(f"cuda.coop.ops.{self.arguments[0]}")
        lines = []
        for attr in sorted(vars(family)):
            table = getattr(family, attr)
            if not (attr.isupper() and isinstance(table, dict) and table):
                continue
            inner = next(iter(table.values()))
            if not (isinstance(inner, dict) and inner and isinstance(next(iter(inner.values())), AlgorithmSpec)):
                continue
            lines += [".. list-table:: ``" + attr + "``", "   :header-rows: 1", "",
                      "   * - group", "     - algorithm", "     - CUB", "     - payload layout",
                      "     - shared memory", "     - block needs whole warps"]
            for group, algos in table.items():
                for algo in algos.values():
                    lines += [f"   * - {group}", f"     - ``{algo.name!r}``", f"     - ``{algo.cub}``",
                              f"     - {algo.layout}", f"     - {'yes' if algo.uses_storage else 'no'}",
                              f"     - {'yes' if algo.needs_warp_multiple else 'no'}"]
            lines.append("")
        if not lines:
            raise self.error(f"coop-algorithms: cuda.coop.ops.{self.arguments[0]} declares no algorithm table")
        return lines


class CoopFamilyTable(_GeneratedRst):
    """One row per family of ``_registry.FAMILIES``: its page, operations and explorer."""

    def rst_lines(self):
        from cuda.coop.ops import _registry

        explorers_of = {}
        for ident, (title, module, _builder) in data.EXPLORERS.items():
            explorers_of.setdefault(module, []).append((ident, title))
        available = datasets()
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 25 50 25", "",
                 "   * - family", "     - operations", "     - explorer"]
        for family in _registry.FAMILIES:
            short = family.__name__.rsplit(".", 1)[-1]
            title = (family.__doc__ or short).strip().splitlines()[0].split(":")[0].rstrip(".")
            page = f":doc:`{title} <{short}>`" if _has_page(self.env, short) else title
            ops = ", ".join(f":func:`~cuda.coop.{s.name}`" for s in family.SPECS)
            refs = _reference_module_for(short)
            shown = [t for i, t in explorers_of.get(refs, ()) if i in available]
            lines += [f"   * - {page}", f"     - {ops}", f"     - {', '.join(shown) if shown else '--'}"]
        return lines


def _reference_module_for(family: str) -> str:
    return family


class CoopQualifiedExtras(_GeneratedRst):
    """What ``cuda.coop.numba_mlir`` exports beyond ``cuda.coop``."""

    def rst_lines(self):
        import cuda.coop as common
        import cuda.coop.numba_mlir as qualified

        extra = [n for n in qualified.__all__ if n not in common.__all__]
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 30 70", "",
                 "   * - name", "     - what it is"]
        for name in extra:
            obj = getattr(qualified, name)
            if inspect.ismodule(obj):  # local, shared: the compiler's modules, without a docstring
                what = "a per-thread array" if name == "local" else "an array shared by the block"
                doc = f"numba-cuda-mlir's ``cuda.{name}`` itself: ``{name}.array(shape, dtype)`` allocates {what}"
            else:
                doc = (obj.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
            lines += [f"   * - :obj:`~cuda.coop.numba_mlir.{name}`", f"     - {doc}"]
        return lines


class CoopValueList(_GeneratedRst):
    """``.. coop-value-list:: module.ATTR``: the items of a tuple in the package, as literals."""

    required_arguments = 1

    def rst_lines(self):
        module, _, attr = self.arguments[0].rpartition(".")
        value = getattr(importlib.import_module(module), attr)
        return [f"* ``{item}``" for item in value] + [""]


class CoopExtrasTable(_GeneratedRst):
    """The pip extras of ``pyproject.toml`` and what each installs."""

    def rst_lines(self):
        import tomllib

        pyproject = Path(self.env.srcdir).parent / "pyproject.toml"
        self.env.note_dependency(str(pyproject))
        extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 30 70", "",
                 "   * - extra", "     - requirements"]
        for name, reqs in extras.items():
            lines += [f"   * - ``{name}``", "     - " + ", ".join(f"``{r}``" for r in reqs)]
        return lines


class CoopSpecTable(_GeneratedRst):
    """``.. coop-spec-table:: module.ATTR``: a dict of dataclass records (e.g. exchange MODES) as a table."""

    required_arguments = 1
    option_spec = {"columns": directives.unchanged}

    def rst_lines(self):
        import dataclasses

        module, _, attr = self.arguments[0].rpartition(".")
        table = getattr(importlib.import_module(module), attr)
        rows = list(table.values())
        if not rows or not dataclasses.is_dataclass(rows[0]):
            raise self.error(f"coop-spec-table: {self.arguments[0]} is not a dict of dataclass records")
        fields = [f.name for f in dataclasses.fields(rows[0])]
        if "columns" in self.options:
            fields = [c.strip() for c in self.options["columns"].split(",")]
        lines = [f".. list-table:: ``{attr}``", "   :header-rows: 1", ""]
        lines += ["   * - " + fields[0].replace("_", " ")] + [f"     - {f.replace('_', ' ')}" for f in fields[1:]]
        for row in rows:
            cells = [_cell(getattr(row, f)) for f in fields]
            lines += [f"   * - {cells[0]}"] + [f"     - {c}" for c in cells[1:]]
        return lines + [""]


def _cell(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (frozenset, set, tuple, list)):
        return ", ".join(sorted(str(v) for v in value)) or "--"
    if isinstance(value, str):
        return f"``{value}``" if value else "--"
    return str(value)


# ------------------------------------------------------------------------------------------
# Build hooks
# ------------------------------------------------------------------------------------------

def _generated_dir(app) -> Path:
    return Path(app.outdir).parent / "_coop_generated"


def on_config_inited(app, config):
    gen = _generated_dir(app)
    written = data.export(gen / "coop-explorers" / "data", datasets())
    logger.info(f"coop explorers: exported {len(written)} datasets ({', '.join(written)}) to {gen}")
    config.html_static_path = list(config.html_static_path) + [str(gen)]


def on_env_purge_doc(app, env, docname):
    getattr(env, "coop_explorer_pages", {}).pop(docname, None)


def on_env_merge_info(app, env, docnames, other):
    pages = getattr(env, "coop_explorer_pages", None)
    if pages is None:
        env.coop_explorer_pages = pages = {}
    pages.update(getattr(other, "coop_explorer_pages", {}))


def on_html_page_context(app, pagename, templatename, context, doctree):
    used = getattr(app.env, "coop_explorer_pages", {}).get(pagename)
    if not used:
        return
    for name in sorted(used):
        app.add_js_file(f"coop-explorers/data/{name}.js", defer="defer")
    app.add_js_file("coop-explorers/coop-explorer.js", defer="defer")
    app.add_css_file("coop-explorers/coop-explorer.css")


def on_autodoc_process_docstring(app, what, name, obj, options, lines):
    """Point each operation's API entry at its family guide and explorer."""
    if not name.startswith("cuda.coop.") or what not in ("function", "method", "data"):
        return
    from cuda.coop.ops._registry import all_specs

    op = name.rsplit(".", 1)[-1]
    for spec in all_specs():
        if spec.name == op and _has_page(app.env, spec.family):
            explorer = spec.explorer_id in data.EXPLORERS and spec.explorer_id in datasets()
            lines += ["", f".. seealso:: :doc:`/ops/{spec.family}`" +
                      (" (with an interactive explorer)." if explorer else "."), ""]
            break


def setup(app):
    app.add_node(coop_explorer,
                 html=(visit_coop_explorer_html, depart_coop_explorer_html),
                 latex=(visit_coop_explorer_other, depart_coop_explorer_other),
                 text=(visit_coop_explorer_other, depart_coop_explorer_other),
                 man=(visit_coop_explorer_other, depart_coop_explorer_other),
                 texinfo=(visit_coop_explorer_other, depart_coop_explorer_other))
    app.add_directive("coop-explorer", CoopExplorer)
    app.add_directive("coop-operations", CoopOperations)
    app.add_directive("coop-errors", CoopErrors)
    app.add_directive("coop-env-table", CoopEnvTable)
    app.add_directive("coop-algorithms", CoopAlgorithms)
    app.add_directive("coop-family-table", CoopFamilyTable)
    app.add_directive("coop-value-list", CoopValueList)
    app.add_directive("coop-extras-table", CoopExtrasTable)
    app.add_directive("coop-spec-table", CoopSpecTable)
    app.add_directive("coop-qualified-extras", CoopQualifiedExtras)
    app.connect("config-inited", on_config_inited)
    app.connect("env-purge-doc", on_env_purge_doc)
    app.connect("env-merge-info", on_env_merge_info)
    app.connect("html-page-context", on_html_page_context)
    app.connect("autodoc-process-docstring", on_autodoc_process_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
