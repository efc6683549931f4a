"""The request files of ``heron restart`` (``heron_core.scheduler._requests``)."""

from __future__ import annotations

import stat
from pathlib import Path

from heron_core.scheduler import RequestAnswer, read_answer, write_request
from heron_core.scheduler._requests import REQUESTS_DIR, pending_requests, write_answer


def test_a_request_is_pending_until_answered_and_read_once(tmp_path: Path) -> None:
    first = write_request(tmp_path, 1)
    second = write_request(tmp_path, -1)
    assert stat.S_IMODE((tmp_path / REQUESTS_DIR).stat().st_mode) == 0o700
    assert [c for _, c in pending_requests(tmp_path)] == [1, -1]
    assert read_answer(first) is None
    write_answer(first, RequestAnswer(True, "restarted container 1"))
    assert [p for p, _ in pending_requests(tmp_path)] == [second]
    assert read_answer(first) == RequestAnswer(True, "restarted container 1")
    assert not first.exists() and read_answer(first) is None


def test_a_file_that_is_not_a_request_is_pending_with_no_container(tmp_path: Path) -> None:
    (tmp_path / REQUESTS_DIR).mkdir()
    junk = tmp_path / REQUESTS_DIR / "x.request.json"
    junk.write_text("{not json")
    assert pending_requests(tmp_path) == [(junk, None)]
    assert pending_requests(tmp_path / "nowhere") == []
