"""``.. coop-signatures::``: an operation page's signature block, rendered from the stubs.

Hand-written signature blocks drifted from the code (missing ``algorithm=``,
``temp_storage=``, ``valid_items=``); this renders each line from
``inspect.signature`` of the public stub, so the page always shows what the call
accepts.  Each content line is ``result = name`` (or just ``name``), or a ``# comment`` shown as is::

    .. coop-signatures::

       keys = topk_min_keys
       keys, values = topk_min_pairs
"""

from __future__ import annotations

import inspect
import textwrap

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

WIDTH = 80  # fits the theme's code box without a scroll bar


def signature_line(target: str, name: str) -> str:
    """``target = coop.name(params)``, wrapped under the opening parenthesis."""
    import cuda.coop as coop

    stub = getattr(coop, name)
    sig = inspect.signature(stub).replace(return_annotation=inspect.Signature.empty)
    head = f"{target} = coop.{name}(" if target else f"coop.{name}("
    params = str(sig)[1:-1]
    lines = textwrap.wrap(params, width=WIDTH - len(head), break_long_words=False, break_on_hyphens=False)
    pad = " " * len(head)
    return head + f"\n{pad}".join(lines) + ")"


def render(content) -> str:
    """Each ``result = name`` line as its signature; ``# ...`` comment lines as they are."""
    out = []
    for line in content:
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            out.append(line)
            continue
        target, _, name = line.rpartition("=")
        out.append(signature_line(target.strip(), name.strip()))
    return "\n".join(out)


def signature_names(content) -> list:
    """The operation names a directive lists."""
    return [line.strip().rpartition("=")[2].strip() for line in content
            if line.strip() and not line.strip().startswith("#")]


class CoopSignatures(SphinxDirective):
    has_content = True

    def run(self):
        text = render(self.content)
        block = nodes.literal_block(text, text)
        block["language"] = "python"
        return [block]


def setup(app):
    app.add_directive("coop-signatures", CoopSignatures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
