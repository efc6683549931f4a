"""Routing and anchoring each have one owner: no other module of the packages decides where a
tuple goes or touches the XOR of a tuple tree.

Checked on the syntax trees of every module of heron_core and storm_compat:

- a grouping's choice is asked for (``.choose(...)``, ``.choose_tasks(...)``) only by the router
  and the groupings;
- XOR (``^``, ``^=``) is used only by anchoring, the stream manager's tree tracker (Storm's
  acker, which settles trees) and the ZooKeeper test server's digest;
- random ids (``getrandbits``) and a tuple's tree state (``_ackval``, ``_roots``,
  ``_edgerun``) are read or written only by anchoring, and by ``heron_core.api._tuple``, which
  builds tuples.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(
    path.relative_to(ROOT).as_posix()
    for package in ("heron_core", "storm_compat")
    for path in (ROOT / package).rglob("*.py")
)

ROUTER = "heron_core/instance/_router.py"
GROUPINGS = "heron_core/instance/_groupings.py"
ANCHORING = "heron_core/instance/_anchoring.py"
TUPLE = "heron_core/api/_tuple.py"


TREE_STATE = ("getrandbits", "_ackval", "_roots", "_edgerun")


def _uses(path: str) -> dict[str, list[int]]:
    tree = ast.parse((ROOT / path).read_text(), path)
    uses: dict[str, list[int]] = {"choice": [], "xor": [], "tree state": []}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("choose", "choose_tasks")
        ):
            uses["choice"].append(node.lineno)
        if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.BitXor):
            uses["xor"].append(node.lineno)
        if isinstance(node, ast.Attribute) and node.attr in TREE_STATE:
            uses["tree state"].append(node.lineno)
    return uses


ALLOWED = {
    "choice": {ROUTER, GROUPINGS},
    "xor": {ANCHORING, "heron_core/stmgr/_trees.py", "heron_core/testing/zookeeper.py"},
    "tree state": {ANCHORING, TUPLE},
}


@pytest.mark.parametrize("path", MODULES)
def test_routing_and_anchoring_decisions_stay_with_their_owners(path: str) -> None:
    found = {
        kind: lines for kind, lines in _uses(path).items() if lines and path not in ALLOWED[kind]
    }
    assert found == {}, f"{path} routes or anchors (kind: line numbers): {found}"


def test_the_check_sees_what_it_looks_for() -> None:
    assert _uses(ROUTER)["choice"] and _uses(ANCHORING)["xor"]
    assert _uses(ANCHORING)["tree state"]
