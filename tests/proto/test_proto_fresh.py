"""The checked-in generated protobuf code must match the .proto files (`make proto`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "heron_core" / "proto"


def test_generated_code_matches_proto_files(tmp_path: Path) -> None:
    protos = sorted(PROTO_DIR.glob("*.proto"))
    assert protos, "no .proto files found"
    work = tmp_path / "heron_core" / "proto"
    work.mkdir(parents=True)
    for proto in protos:
        shutil.copy(proto, work / proto.name)
    plugin_dir = Path(sys.executable).parent
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I",
            str(tmp_path),
            f"--plugin=protoc-gen-mypy={plugin_dir / 'protoc-gen-mypy'}",
            f"--python_out={tmp_path}",
            f"--mypy_out=quiet:{tmp_path}",
            *[str(work / p.name) for p in protos],
        ],
        check=True,
        cwd=tmp_path,
    )
    stale = []
    for generated in sorted(work.glob("*_pb2.py*")):
        checked_in = PROTO_DIR / generated.name
        if not checked_in.exists() or checked_in.read_bytes() != generated.read_bytes():
            stale.append(generated.name)
    extra = {p.name for p in PROTO_DIR.glob("*_pb2.py*")} - {p.name for p in work.glob("*_pb2.py*")}
    assert not stale and not extra, f"run `make proto`: stale {stale}, orphaned {sorted(extra)}"


def test_every_boundary_has_a_schema() -> None:
    names = {p.stem for p in PROTO_DIR.glob("*.proto")}
    assert {
        "topology",
        "packing_plan",
        "physical_plan",
        "tuple",
        "stmgr",
        "tmanager",
        "metrics",
        "execution_state",
        "scheduler",
        "common",
    } <= names
