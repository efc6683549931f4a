"""Flux's ``${...}`` substitution (``--filter`` / ``--env-filter``) and Java ``.properties``
files.

``${ENV-NAME}`` is the environment variable ``NAME``; ``${key}`` a property; ``${key[i]}`` the
``i``-th element of a property written as a list (``["a", "b"]``). Substitution is textual,
before the YAML is parsed; a reference that cannot be resolved is left as it is, with a warning
(as Flux does).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path

from heron_core.errors import ConfigurationError

__all__ = ["PROPERTIES_ENV", "find_properties", "parse_properties", "substitute"]

log = logging.getLogger(__name__)

PROPERTIES_ENV = "HERON_FLUX_PROPERTIES"
"""Names the properties file for ``${...}`` substitution (Flux's ``--filter``)."""

_REFERENCE = re.compile(r"\$\{([^}]+)\}")
_LIST_ITEM = re.compile(r"^(?P<key>.+)\[(?P<index>\d+)\]$")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")


def find_properties(yaml_path: Path) -> Path | None:
    """The properties file for ``yaml_path``: the file named by ``$HERON_FLUX_PROPERTIES``,
    else ``<yaml stem>.properties`` beside it, else None.

    Raises:
        ConfigurationError: ``$HERON_FLUX_PROPERTIES`` names a file that does not exist.
    """
    named = os.environ.get(PROPERTIES_ENV)
    if named:
        path = Path(named)
        if not path.is_file():
            raise ConfigurationError(
                f"{PROPERTIES_ENV}={named!r} (properties for {str(yaml_path)!r}) is not a file"
            )
        return path
    beside = yaml_path.with_suffix(".properties")
    return beside if beside.is_file() else None


def parse_properties(text: str) -> dict[str, str]:
    """A Java ``.properties`` file: ``key=value``, ``key: value`` or ``key value`` lines,
    ``#``/``!`` comments, ``\\`` line continuations and escapes.

    >>> parse_properties("# comment\\nkafka.topic = words\\npath: /a\\\\\\n  /b\\nflag\\n")
    {'kafka.topic': 'words', 'path': '/a/b', 'flag': ''}
    """
    properties: dict[str, str] = {}
    lines = iter(text.splitlines())
    for raw in lines:
        line = raw.lstrip()
        if not line or line[0] in "#!":
            continue
        while _continued(line):
            line = line[:-1] + next(lines, "").lstrip()
        key, value = _split(line)
        properties[_unescape(key)] = _unescape(value)
    return properties


def _continued(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line) and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            digits = text[i + 2 : i + 6]
            if nxt == "u" and len(digits) == 4 and all(c in _HEX for c in digits):
                out.append(chr(int(digits, 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def substitute(
    text: str, properties: Mapping[str, str], where: str, limit: int | None = None
) -> str:
    """Replace every ``${...}`` in ``text`` (see the module doc).

    Args:
        limit: the most characters the result may have (None: no limit); checked as the
            values are put in, so a few references to a long value cannot build a huge text.

    Raises:
        ConfigurationError: the result would be longer than ``limit``, naming ``where``.

    >>> substitute("topic: ${topic} host: ${hosts[1]}", {"topic": "t", "hosts": '["a", "b"]'}, "f")
    'topic: t host: b'
    >>> substitute("${x} ${x}", {"x": "12345"}, "f.yaml", limit=10)
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: flux file 'f.yaml' is too large after substitution \
(more than 10 characters)
    """
    size = len(text)

    def replace(match: re.Match[str]) -> str:
        nonlocal size
        value = _value(match)
        size += len(value) - len(match.group(0))
        if limit is not None and size > limit:
            raise ConfigurationError(
                f"flux file {where!r} is too large after substitution (more than {limit} "
                "characters)"
            )
        return value

    def _value(match: re.Match[str]) -> str:
        reference = match.group(1)
        value: str | None
        if reference.startswith("ENV-"):
            value = os.environ.get(reference[4:])
        else:
            item = _LIST_ITEM.match(reference)
            value = properties.get(reference)
            if value is None and item is not None and item["key"] in properties:
                value = _list_item(properties[item["key"]], int(item["index"]))
        if value is None:
            log.warning("%s: no value for ${%s}; left as it is", where, reference)
            return match.group(0)
        return value

    return _REFERENCE.sub(replace, text)


def _list_item(text: str, index: int) -> str | None:
    items = [item.strip() for item in text.strip().removeprefix("[").removesuffix("]").split(",")]
    if index >= len(items):
        return None
    return items[index].strip("\"'")
