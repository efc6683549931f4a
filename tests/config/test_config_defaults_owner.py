"""A registered key's default lives in the registry only: no module of the packages reads a
registered key with a fallback of its own (``config.get(key, default)``), which could drift from
the registry's; `heron_core.config.setting` gives the registry's default for a missing key.
A fallback to another layer's value (a component's config over the topology's) is no default
and stays.

Checked on the syntax trees of every module of heron_core and storm_compat: a ``.get`` call
whose first argument is a registered key's name (written out, or held by a module-level
constant, its own or imported) and whose second argument, or the operand after an ``or``
that follows the call, is a literal, an upper-case constant or a registry default; and a call
of any helper that passes a registered key beside that key's registry default written out as
a number or bool (``_milliseconds(config, KEY, 30000)``).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from heron_core.config import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
OWN_DEFAULTS = {
    ("heron_core/statemgr/_zookeeper.py", "heron.statemgr.root.path"): "/heron",
}
"""Reads whose own default is right: one key whose default depends on the plugin that reads
it. The registry holds the local file system state manager's root (a directory); the ZooKeeper
state manager's is the znode /heron (as Heron's zookeeper statemgr.yaml), which the key's
description says."""

MODULES = sorted(
    path.relative_to(ROOT).as_posix()
    for package in ("heron_core", "storm_compat")
    for path in (ROOT / package).rglob("*.py")
)


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments, and str constants the module imports by
    name from a module of the packages."""
    found: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] in ("heron_core", "storm_compat")
        ):
            module = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(module, alias.name, None)
                if isinstance(value, str):
                    found[alias.asname or alias.name] = value
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    found[target.id] = node.value.value
    return found


def _literal(fallback: ast.expr) -> bool:
    """Whether a fallback is a value of its own: a literal, a constant (an upper-case name)
    or a registry default read out; not another layer's value (``topology.get(key)``, a local
    variable), which is how a component's config falls back to the topology's."""
    if isinstance(fallback, ast.Constant):
        return fallback.value is not None
    if isinstance(fallback, ast.Name):
        return fallback.id.isupper()
    return isinstance(fallback, ast.Attribute) and fallback.attr == "default"


def _reads(tree: ast.Module) -> list[tuple[int, ast.expr, ast.expr, bool]]:
    """Each read of a key with a fallback, as (line, key, fallback, whether by ``or``):
    ``x.get(key, fallback)`` and ``x.get(key) or fallback``."""
    reads = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            call, fallback = node.values[0], node.values[1]
            if _is_get(call, 1):
                assert isinstance(call, ast.Call)
                reads.append((node.lineno, call.args[0], fallback, True))
        elif _is_get(node, 2):
            assert isinstance(node, ast.Call)
            reads.append((node.lineno, node.args[0], node.args[1], False))
    return reads


def _helper_defaults(tree: ast.Module, constants: dict[str, str]) -> list[tuple[int, str]]:
    """Calls of a helper that pass a registered key and, beside it, that key's registry default
    as a number or bool literal (``_milliseconds(config, KEY, 30000)``): (line, key)."""
    found = []
    for node in ast.walk(tree):
        if (
            not isinstance(node, ast.Call)
            or (isinstance(node.func, ast.Name) and node.func.id == "Key")  # the registry
            or _is_get(node, 2)  # a read, checked by `_reads`
        ):
            continue
        keys = [name for arg in node.args if (name := _key_name(arg, constants)) in REGISTRY]
        literals = [
            arg.value
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, bool | int | float)
        ]
        found += [
            (node.lineno, key)
            for key in keys
            if any(
                literal == REGISTRY[key].default
                and isinstance(literal, bool) == isinstance(REGISTRY[key].default, bool)
                for literal in literals
            )
        ]
    return found


def _key_name(arg: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.Name):
        return constants.get(arg.id)
    return None


def _is_get(node: ast.expr | ast.AST, args: int) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and len(node.args) == args
        and not node.keywords
    )


def _fallbacks(path: str) -> list[str]:
    tree = ast.parse((ROOT / path).read_text(), path)
    constants = _constants(tree)
    found = []
    for line, first, fallback, by_or in _reads(tree):
        name = _key_name(first, constants)
        if name is None:
            continue
        # ``get(key) or x`` where the registry's default is empty, zero or None replaces an
        # empty value (a display name for a missing one), as ``setting(...) or x`` would
        if name not in REGISTRY or (by_or and not REGISTRY[name].default):
            continue
        if (path, name) in OWN_DEFAULTS:
            assert ast.literal_eval(fallback) == OWN_DEFAULTS[path, name], (path, name)
            assert OWN_DEFAULTS[path, name] in REGISTRY[name].doc
            continue
        if _literal(fallback):
            found.append(f"{path}:{line}: {name} (registry default {REGISTRY[name].default!r})")
    for line, name in _helper_defaults(tree, constants):
        found.append(f"{path}:{line}: {name} (registry default {REGISTRY[name].default!r})")
    return found


@pytest.mark.parametrize("path", MODULES)
def test_registered_keys_take_their_default_from_the_registry(path: str) -> None:
    assert _fallbacks(path) == []


def test_the_check_sees_a_fallback_of_a_registered_key(tmp_path: Path) -> None:
    """The check is not vacuous: it flags both spellings of the key and both forms of the
    fallback."""
    source = (
        'KEY = "topology.message.timeout.secs"\n'
        'a = config.get("heron.instance.batch.linger.ms", 1.0)\n'
        "b = config.get(KEY, 30)\n"
        'c = config.get("topology.name")\n'
        "e = config.get(KEY, topology.get(KEY))\n"
        'f = config.get("topology.debug", None)\n'
        'd = config.get("not.a.registered.key", 1)\n'
        'g = config.get("heron.statemgr.root.path") or "/tmp/x"\n'
        'h = config.get("topology.name") or name\n'
        'i = _milliseconds(config, "heron.statemgr.zookeeper.connection.timeout.ms", 10000)\n'
        'j = _milliseconds(config, "heron.statemgr.zookeeper.connection.timeout.ms", 5)\n'
    )
    module = ROOT / "heron_core" / "_defaults_owner_probe.py"
    module.write_text(source)
    try:
        found = _fallbacks("heron_core/_defaults_owner_probe.py")
    finally:
        module.unlink()
    assert [line.split(": ")[1].split(" ")[0] for line in found] == [
        "heron.instance.batch.linger.ms",
        "topology.message.timeout.secs",
        "heron.statemgr.root.path",
        "heron.statemgr.zookeeper.connection.timeout.ms",
    ]
