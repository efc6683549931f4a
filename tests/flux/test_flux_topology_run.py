"""A Flux file with storm.py-style shell components, every grouping, an include and
substitution, run on the real process model."""

from __future__ import annotations

import re
import shutil
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from heron_core.client import load_topology
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.components import read_records

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent / "multilang" / "scripts"


@pytest.mark.processes
def test_wordflow_runs_every_grouping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = tmp_path / "code", tmp_path / "out"
    code.mkdir()
    for source in [
        *(HERE / "resources").glob("*.yaml"),
        HERE / "flux_components.py",
        *(SCRIPTS / name for name in ("storm.py", "splitsentence.py", "sentence_spout.py")),
    ]:
        shutil.copy(source, code)
    (code / "wordflow.properties").write_text(f"topology.name=flux-words\nrec.dir={out}\n")
    monkeypatch.setenv("FLUX_PYTHON", sys.executable)
    sentences = yaml.safe_load((code / "common.yaml").read_text())["config"]["sentences"]
    words = [word for sentence in sentences for word in sentence.split()]
    loaded = load_topology(str(code / "wordflow.yaml"))
    with TopologyRun(loaded.plan, heron_home=tmp_path / "home", code_root=loaded.code_root) as run:
        try:
            run.wait_until(
                lambda: (
                    len(set(re.findall(r"acked sentence (\d+)", "".join(run.logs().values()))))
                    == len(sentences)
                ),
                "every sentence acked through shell spout, shell bolt, Storm bolt and native bolt",
            )
        except TimeoutError:
            print(run.dump_logs())
            raise
    tasks: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for record in read_records(out):
        tasks[record["stream"]].append((record["values"][0], record["task"]))
    low, high = sorted({task for _, task in tasks["all"]})
    expected = Counter(words)
    for stream in ("shuffle", "none", "local", "fields", "global", "custom", "direct"):
        assert Counter(word for word, _ in tasks[stream]) == expected, stream
    assert Counter(tasks["all"]) == Counter(
        {(w, t): n for w, n in expected.items() for t in (low, high)}
    )
    assert {task for _, task in tasks["global"]} == {low}
    assert all(task == (low, high)[len(word) % 2] for word, task in tasks["custom"])
    assert all(task == (low, high)[(len(word) + 1) % 2] for word, task in tasks["direct"])
    fields = defaultdict(set)
    for word, task in tasks["fields"]:
        fields[word].add(task)
    assert all(len(owners) == 1 for owners in fields.values())
