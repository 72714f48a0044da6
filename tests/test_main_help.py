"""``python -m cuda.coop --help`` reads as plain text: no reST markup from the docstrings."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit


def test_help_has_no_rest_literal_markup(capsys):
    from cuda.coop.__main__ import main

    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "python -m cuda.coop: what cuda-coop finds on this machine" in " ".join(text.split())
    assert "``" not in text, text


def test_plain_strips_literals_and_keeps_the_rest():
    from cuda.coop.__main__ import _plain

    assert _plain("``python -m cuda.coop``: see ``--json`` and `x`") == "python -m cuda.coop: see --json and `x`"
