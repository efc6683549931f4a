"""Components defined in the submitting script (``__main__``) get importable class paths."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from heron_core.api import Spout, TopologyBuilder
from heron_core.errors import TopologyValidationError
from heron_core.plan import PythonSpec
from heron_core.proto import topology_pb2

SCRIPT = textwrap.dedent(
    """
    import sys
    from heron_core.api import Bolt, Spout, TopologyBuilder

    class Helper:
        def __init__(self, n):
            self.n = n

    def shout(word):
        return word.upper()

    class WordSpout(Spout):
        outputs = ["word"]

        def __init__(self, words):
            self.words = words
            self.helper = Helper(len(words))
            self.transform = shout

    class Count(Bolt):
        def process(self, tup):
            self.ack(tup)

    if __name__ == "__main__":
        builder = TopologyBuilder("t")
        words = builder.add_spout("words", WordSpout(["a", "b"]))
        builder.add_bolt("count", Count, inputs=[words])
        sys.stdout.buffer.write(builder.build().to_proto().SerializeToString())
    """
)

LOAD = textwrap.dedent(
    """
    import pickle, sys
    from heron_core.plugins import resolve_class
    spout = pickle.loads(sys.stdin.buffer.read())
    cls = resolve_class(sys.argv[1])
    assert type(spout) is cls, (type(spout), cls)
    assert spout.words == ["a", "b"] and spout.helper.n == 2, vars(spout)
    assert spout.transform("x") == "X"
    print(type(spout).__module__, type(spout.helper).__module__, spout.transform.__module__)
    """
)


def _run(args: list[str], cwd: Path, stdin: bytes = b"") -> bytes:
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, input=stdin, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.mark.processes
@pytest.mark.parametrize("how", ["script", "module"])
def test_main_classes_resolve_in_another_process(tmp_path: Path, how: str) -> None:
    package = tmp_path / "topos"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "wc_topology.py").write_text(SCRIPT)
    if how == "script":
        args, module = [str(package / "wc_topology.py")], "wc_topology"
    else:
        args, module = ["-m", "topos.wc_topology"], "topos.wc_topology"
    message = topology_pb2.Topology.FromString(_run(args, cwd=tmp_path))
    spout, bolt = message.spouts[0].comp.spec.python, message.bolts[0].comp.spec.python
    assert spout.class_path == f"{module}:WordSpout"
    assert (bolt.class_path, bolt.pickled_object) == (f"{module}:Count", b"")
    # The instance process imports the script as a module from the code directory.
    code_dir = package if how == "script" else tmp_path
    loaded = _run(["-c", LOAD, spout.class_path], cwd=code_dir, stdin=spout.pickled_object)
    assert loaded.split() == [module.encode()] * 3


def _fake_main(monkeypatch: pytest.MonkeyPatch, file: str | None) -> type[Spout]:
    main = types.ModuleType("__main__")
    if file is not None:
        main.__file__ = file
    orphan = type("Orphan", (Spout,), {"__module__": "__main__", "outputs": ["x"]})
    main.Orphan = orphan  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "__main__", main)
    return orphan


def test_main_without_a_file_cannot_be_serialized(monkeypatch: pytest.MonkeyPatch) -> None:
    orphan = _fake_main(monkeypatch, None)
    builder = TopologyBuilder("t")
    builder.add_spout("orphan", orphan)
    with pytest.raises(
        TopologyValidationError, match=r"cannot be serialized: .*has no file"
    ) as info:
        builder.build()
    assert info.value.component == "orphan"


def test_main_class_path_and_pickle_use_the_file_stem(monkeypatch: pytest.MonkeyPatch) -> None:
    orphan = _fake_main(monkeypatch, "/somewhere/my_topology.py")
    builder = TopologyBuilder("t")
    builder.add_spout("cls", orphan)
    builder.add_spout("obj", orphan())
    plan = builder.build()
    assert plan.component("cls").spec == PythonSpec("my_topology:Orphan", b"")
    spec = plan.component("obj").spec
    assert isinstance(spec, PythonSpec) and spec.class_path == "my_topology:Orphan"
    assert b"my_topology:Orphan" in spec.pickled_object
    assert b"__main__" not in spec.pickled_object
