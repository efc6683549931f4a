"""Reading a user's YAML or JSON file with limits: the one loader of every YAML the product reads.

A file a user hands over (a Flux topology, a cluster config, a streamparse ``config.json``) is
read with `yaml.safe_load` semantics (libyaml's ``CSafeLoader`` when PyYAML has it) and three
limits, so that a bad file fails at once with a message naming it instead of exhausting the
machine:

- **size**: at most `MAX_INPUT_BYTES` of text (the file, and the text after any substitution);
- **alias expansion**: aliases (``*name``) may repeat at most `MAX_ALIAS_NODES` nodes in all,
  counted on the composed document before any Python object is built. A "billion laughs"
  document, where each anchor repeats the one before several times, is refused while it is
  still a few hundred nodes;
- **depth**: the document nests at most `MAX_DEPTH` levels (a recursive alias, a node that
  contains itself, is refused as well).

>>> load_yaml("base: &b {cpu: 1, ram: 2}\\nspout: *b\\n", "example.yaml")
{'base': {'cpu': 1, 'ram': 2}, 'spout': {'cpu': 1, 'ram': 2}}
>>> bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\\n" + "".join(
...     f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\\n" for p, n in zip("abcdef", "bcdefg"))
>>> load_yaml(bomb, "bomb.yaml")
Traceback (most recent call last):
...
heron_core.errors.ConfigurationError: bomb.yaml expands too much: its aliases repeat 12345660 \
nodes, more than the limit of 100000 (the node anchored on line 6 has 1111111 nodes); an alias \
bomb?
"""

from __future__ import annotations

import json
import os
from typing import Any

import yaml

from heron_core.errors import ConfigurationError

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "load_json_file",
    "load_yaml",
    "load_yaml_file",
    "read_input_text",
    "yaml_problem",
]

MAX_INPUT_BYTES = 4 << 20
"""The largest YAML or JSON text a user's file may hold (4 MiB): a cluster config or a Flux
file is a few KiB."""

MAX_ALIAS_NODES = 100_000
"""How many nodes aliases may repeat in one document, all aliases together (a node an alias
repeats counts with everything under it)."""

MAX_DEPTH = 100
"""How deeply a document may nest (mappings and sequences)."""

_Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)


def read_input_text(path: str | os.PathLike[str], source: str) -> str:
    """The UTF-8 text of the user's file ``path``, refused beyond `MAX_INPUT_BYTES`.

    At most `MAX_INPUT_BYTES` + 1 bytes are read, so a huge file, a device or a FIFO that never
    ends costs no more than that.

    Args:
        path: the file.
        source: how messages name it (``"flux file '/p/t.yaml'"``).

    Raises:
        ConfigurationError: the file cannot be read, is too large (its size named) or is not
            UTF-8; the message starts with ``source``.
    """
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_INPUT_BYTES + 1)
            if len(data) > MAX_INPUT_BYTES:
                size = os.fstat(file.fileno()).st_size
                shown = f"{size} bytes" if size > MAX_INPUT_BYTES else "endless"
                raise ConfigurationError(
                    f"{source} is too large ({shown}): the limit is {MAX_INPUT_BYTES} bytes"
                )
    except OSError as exc:
        raise ConfigurationError(f"cannot read {source}: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"{source} is not UTF-8 text (byte {exc.start} cannot be decoded)"
        ) from None


def load_yaml(text: str, source: str) -> Any:
    """The value of YAML document ``text`` (as `yaml.safe_load` gives it), within the limits.

    Args:
        text: the document.
        source: how messages name it (``"cluster config /etc/heron/prod.yaml"``).

    Returns:
        The document's value; None for an empty document.

    Raises:
        ConfigurationError: starting with ``source``: the text is longer than
            `MAX_INPUT_BYTES`, is not valid YAML (line, column and problem, never a quote of
            the text), holds more than one document, expands too much through its aliases,
            or nests too deeply.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_INPUT_BYTES:
        raise ConfigurationError(
            f"{source} is too large ({size} bytes): the limit is {MAX_INPUT_BYTES} bytes"
        )
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"{source} is not valid YAML: {yaml_problem(exc)}") from None
        if node is None:
            return None
        _check_expansion(node, source)
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"{source} is not valid YAML: {yaml_problem(exc)}") from None
        except RecursionError:  # within MAX_DEPTH levels a constructor never recurses this far
            raise ConfigurationError(f"{source} nests its YAML too deeply") from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | os.PathLike[str], source: str) -> Any:
    """`load_yaml` of the text of ``path`` (read by `read_input_text`)."""
    return load_yaml(read_input_text(path, source), source)


def load_json_file(path: str | os.PathLike[str], source: str) -> Any:
    """The JSON value in ``path`` (read by `read_input_text`).

    Raises:
        ConfigurationError: starting with ``source``: unreadable, too large, not UTF-8, not
            JSON, or nesting too deeply.
    """
    text = read_input_text(path, source)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"{source} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ConfigurationError(f"{source} nests its JSON too deeply") from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong and where (line and column), without PyYAML's quote of the line: a file a
    user names may be any file, whose contents an error must not print.

    >>> try:
    ...     yaml.safe_load("a: [1")
    ... except yaml.YAMLError as exc:
    ...     print(yaml_problem(exc))
    line 1, column 6: while parsing a flow sequence, expected ',' or ']', but got '<stream end>'
    """
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}: "
        said = ", ".join(part for part in (exc.context, exc.problem) if part)
        return f"{where}{said or type(exc).__name__}"
    return type(exc).__name__


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, source: str) -> None:
    """Refuse a composed document whose aliases repeat more than `MAX_ALIAS_NODES` nodes,
    that nests deeper than `MAX_DEPTH`, or that contains itself.

    A node an alias names is one object in the composed graph wherever the alias appears, so
    the graph stays as small as the text; the size of the document a consumer walks (once per
    appearance) is computed on the graph in one pass, without building it.
    """
    # expanded size and depth of every finished node, by id; nodes on the walk's path
    sizes: dict[int, tuple[int, int]] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, list[yaml.Node]]] = [(root, _children(root))]
    on_path.add(id(root))
    while stack:
        node, todo = stack[-1]
        if len(stack) > MAX_DEPTH:
            raise ConfigurationError(
                f"{source} nests its YAML too deeply (more than {MAX_DEPTH} levels, "
                f"line {node.start_mark.line + 1})"
            )
        if todo:
            child = todo.pop()
            if id(child) in sizes:
                continue
            if id(child) in on_path:
                raise ConfigurationError(
                    f"{source}: the node anchored on line {child.start_mark.line + 1} holds an "
                    "alias of itself (a document that contains itself is refused)"
                )
            on_path.add(id(child))
            stack.append((child, _children(child)))
            continue
        stack.pop()
        on_path.discard(id(node))
        size, depth = 1, 0
        for child in _children(node):
            child_size, child_depth = sizes[id(child)]
            size += child_size
            depth = max(depth, child_depth + 1)
        sizes[id(node)] = (size, depth)
    repeated = sizes[id(root)][0] - len(sizes)
    if repeated > MAX_ALIAS_NODES:
        raise ConfigurationError(
            f"{source} expands too much: its aliases repeat {repeated} nodes, more than the "
            f"limit of {MAX_ALIAS_NODES} ({_largest_alias(root, sizes)}); an alias bomb?"
        )


def _largest_alias(root: yaml.Node, sizes: dict[int, tuple[int, int]]) -> str:
    """Which anchored node the aliases repeat that has the most nodes under it."""
    seen: set[int] = set()
    best: tuple[int, yaml.Node] | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            if best is None or sizes[id(node)][0] > best[0]:
                best = (sizes[id(node)][0], node)
            continue
        seen.add(id(node))
        stack.extend(reversed(_children(node)))
    if best is None:
        return "no alias"
    size, node = best
    return f"the node anchored on line {node.start_mark.line + 1} has {size} nodes"
