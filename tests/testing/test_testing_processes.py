"""``heron_core.testing.processes.run_command``: the nudge at half the timeout, and a real hang."""

from __future__ import annotations

import sys

import pytest

from heron_core.testing.processes import run_command

# Exits 0 on SIGUSR1 (as a sleep whose lost timer the signal ends returns), else sleeps on.
WAKES_ON_SIGNAL = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGUSR1, lambda *_: sys.exit(0))\n"
    "print('sleeping', flush=True)\n"
    "time.sleep(600)\n"
)
# Ignores SIGUSR1: a hang that no signal ends.
IGNORES_SIGNAL = (
    "import signal, time\n"
    "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
    "print('stuck', flush=True)\n"
    "time.sleep(600)\n"
)


def test_a_command_that_ends_is_returned_as_it_ended() -> None:
    done = run_command([sys.executable, "-c", "print('hi')"], timeout=60)
    assert (done.returncode, done.stdout) == (0, "hi\n")


def test_a_command_still_running_at_half_the_timeout_gets_sigusr1_and_may_end(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run_command([sys.executable, "-c", WAKES_ON_SIGNAL], timeout=4)
    assert (done.returncode, done.stdout) == (0, "sleeping\n")
    assert "was still running after 2 s; it got SIGUSR1" in capsys.readouterr().out


def test_a_command_that_no_signal_ends_is_killed_with_its_output() -> None:
    with pytest.raises(TimeoutError, match="did not end within 3 s") as raised:
        run_command([sys.executable, "-c", IGNORES_SIGNAL], timeout=3)
    assert "stuck" in str(raised.value)
