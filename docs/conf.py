"""Sphinx configuration of the cuda-coop documentation.

    python -m pip install -r docs/requirements.txt -e .
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The build needs neither a GPU nor a compiler: the API pages read the docstrings of
``cuda.coop`` (importable without numba-cuda-mlir), and the explorers' data comes from
the NumPy reference models ``cuda.coop.reference.*`` (see ``_ext/coop_explorer_data.py`` and its family modules ``_ext/coop_explorer_*.py``).
Code examples are real files under ``docs/examples/`` that the test suite compiles and runs.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent / "src"))

import cuda.coop  # noqa: E402

project = "cuda-coop"
author = "cuda-coop developers"
copyright = "2026, cuda-coop developers"
release = cuda.coop.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
    "coop_explorers",
    "coop_bench_tables",
    "coop_signatures",
]

# Offline build: intersphinx inventories are not fetched (no mapping).
intersphinx_mapping = {}

autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

nitpicky = False
default_role = "code"
pygments_style = "friendly"
pygments_dark_style = "monokai"

html_theme = "furo"
html_title = f"cuda-coop {release}"
html_static_path = ["_static"]
html_theme_options = {
    "source_repository": "https://github.com/cuda-coop/cuda-coop/",
    "source_branch": "main",
    "source_directory": "docs/",
}
templates_path = ["_templates"]
exclude_patterns = ["_build", "examples", "_ext", "troubleshooting/messages", "README.md"]
