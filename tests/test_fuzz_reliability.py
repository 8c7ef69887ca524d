"""Reliability fuzzing in the normal run (issue 19): a few hundred seeded mutants of the training
loops and notebooks built from them. No traceback, no exit status outside 0/1/2, no AMP000 that
CPython contradicts, no fix that changes more than the fix, notebooks read like the same code in
a .py file. The long run (5,000+ mutants) is bench/fuzz_reliability.py."""

from __future__ import annotations

import relfuzz

BAD_COUNTS = ("tracebacks", "false_amp000", "fix_overreach", "fix_unsound", "notebook_drift", "exit_codes_outside_0_1_2")


def test_mutants_in_process_and_through_the_command_line(tmp_path):
    relfuzz.FAILURES.clear()
    counts = relfuzz.run(300, 100, 20261219, tmp_path)
    relfuzz.cli_exit_codes(tmp_path, counts)
    assert counts["py_mutants"] == 300 and counts["nb_mutants"] == 100 and counts["cli_runs"] == 4
    assert counts["py_fixed"] >= 20 and counts["nb_fixed"] >= 10, counts
    bad = {k: counts[k] for k in BAD_COUNTS if counts[k]}
    assert not bad, (bad, relfuzz.FAILURES[:3])
