"""The typed surface: src/cuda/coop/__init__.pyi is generated from the code and committed."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

import cuda.coop as coop
from cuda.coop import _stubgen
from cuda.coop.ops._registry import public_operations

pytestmark = pytest.mark.unit

_KINDS = inspect.Parameter


def _stub_tree() -> ast.Module:
    assert _stubgen.STUB_PATH.is_file(), "no cuda/coop/__init__.pyi: run python scripts/generate_stubs.py"
    return ast.parse(_stubgen.STUB_PATH.read_text(), filename=str(_stubgen.STUB_PATH))


def test_committed_stub_is_what_the_code_generates():
    committed = _stubgen.STUB_PATH.read_text() if _stubgen.STUB_PATH.is_file() else ""
    assert committed == _stubgen.render(), (
        "src/cuda/coop/__init__.pyi is out of date with cuda.coop.__all__ or an operation's "
        "signature: run python scripts/generate_stubs.py and commit the result"
    )


def test_the_operations_in_init_are_what_the_op_records_generate():
    text = _stubgen.INIT_PATH.read_text()
    assert _stubgen.render_init(text) == text, (
        "the operations part of src/cuda/coop/__init__.py is out of date with ops/_registry.py: run "
        "python scripts/generate_stubs.py and commit the result"
    )
    assert _stubgen.FAMILIES_PATH.read_text() == _stubgen.render_families(), (
        "src/cuda/coop/ops/_families.py is out of date with ops/_registry.py: run "
        "python scripts/generate_stubs.py and commit the result"
    )
    # and it is what __all__ lists, in registry order
    import cuda.coop as coop
    from cuda.coop.ops._registry import all_specs

    assert [name for name in coop.__all__ if name in coop._OPERATIONS] == [spec.name for spec in all_specs()]


def test_stub_parses_and_defines_every_public_name():
    tree = _stub_tree()
    defined = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defined[node.name] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                # `import X as X` is the re-export form; a bare import is private in a stub.
                if alias.asname == alias.name:
                    defined[alias.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined[node.target.id] = node
    missing = [name for name in coop.__all__ if name not in defined]
    assert not missing, f"names of cuda.coop.__all__ not defined in __init__.pyi: {missing}"
    stub_all = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                    and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"])
    assert ast.literal_eval(stub_all) == list(coop.__all__)


def test_stub_re_exports_each_class_from_the_module_that_defines_it():
    tree = _stub_tree()
    re_exports = [(node.module, alias.name) for node in tree.body if isinstance(node, ast.ImportFrom)
                  and node.level == 1 for alias in node.names]
    assert {"ThreadData", "TempStorage", "BlockGroup", "CoopError", "ThreadDataLike"} <= {n for _, n in re_exports}
    for module, name in re_exports:
        assert getattr(importlib.import_module(f"cuda.coop.{module}"), name) is getattr(coop, name), name


def _stub_parameters(func: ast.FunctionDef) -> list[tuple[str, object, bool]]:
    args = func.args
    positional = [(a.arg, _KINDS.POSITIONAL_ONLY) for a in args.posonlyargs]
    positional += [(a.arg, _KINDS.POSITIONAL_OR_KEYWORD) for a in args.args]
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    params = [(name, kind, has) for (name, kind), has in zip(positional, defaults)]
    params += [(a.arg, _KINDS.KEYWORD_ONLY, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return params


def test_every_operation_has_its_real_signature_in_the_stub():
    functions = {node.name: node for node in _stub_tree().body if isinstance(node, ast.FunctionDef)}
    for name, stub in public_operations().items():
        expected = [(p.name, p.kind, p.default is not _KINDS.empty)
                    for p in inspect.signature(stub).parameters.values()]
        assert _stub_parameters(functions[name]) == expected, name
        args = functions[name].args
        positional = args.posonlyargs + args.args
        nodes = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        nodes.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
        for pname, node in nodes.items():
            if not (isinstance(node, ast.Constant) and node.value is ...):
                assert ast.literal_eval(node) == inspect.signature(stub).parameters[pname].default, (name, pname)
    assert functions["this_block"].returns.id == "BlockGroup"
    assert "load" in functions and ast.get_docstring(functions["load"]).startswith("Load a tile")


def test_defaults_that_are_not_literals_render_as_ellipsis():
    # A callable default (e.g. an operator) has no source form in a stub.
    def f(group, /, *, op=len, width=32, name="x", flag=None):
        """First line.

        More."""

    text = _stubgen._function("f", f, set())
    assert text == 'def f(group, /, *, op=..., width=32, name="x", flag=None) -> Any:\n    """First line."""'


def test_wheels_sdists_and_the_conda_package_ship_the_typed_surface():
    # hatchling ships every file under the wheel's package directory and the sdist's src/,
    # so py.typed and the stub go along unless a .gitignore or an exclude drops them.
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    pyproject = (root / "pyproject.toml").read_text()
    assert 'packages = ["src/cuda"]' in pyproject and "exclude" not in pyproject.split("[tool.hatch")[1]
    ignored = (root / ".gitignore").read_text().split() if (root / ".gitignore").is_file() else []
    assert not any(pattern.endswith((".pyi", "py.typed")) for pattern in ignored)
    if not (root / "recipe").is_dir():
        pytest.skip("recipe/ is not in the sdist; the checkout runs this check")
    recipe = (root / "recipe" / "recipe.yaml").read_text()
    assert "- cuda/coop/py.typed" in recipe and "- cuda/coop/__init__.pyi" in recipe
