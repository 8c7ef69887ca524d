"""The command line against ruff's: subcommands vs folders, --stdin-filename, --output-file,
--show-settings, --show-files, --verbose/--quiet/--silent, --color, --config KEY=VALUE,
--help and --list-rules layout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from test_config_hierarchy import BAD

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(*args, cwd, input=None, env_extra=None, drop=("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE")):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for k in drop:
        env.pop(k, None)
    env.pop("AMPLINT_CACHE_DIR", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=cwd,
                          input=input, env=env, timeout=120)


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "train.py").write_text(BAD)
    (tmp_path / "verify").write_text("")  # a file named like a command
    return tmp_path


def test_bare_command_name_that_is_a_folder_is_linted(proj):
    p = run("bench", "--no-cache", cwd=proj)
    assert p.returncode == 1, p.stderr
    assert "bench/train.py:10:9: AMP002" in p.stdout
    assert "`bench` is a folder here, so it is linted" in p.stderr
    # `check` is explicit
    p = run("check", "bench", "--no-cache", "-q", cwd=proj)
    assert p.returncode == 1 and "bench/train.py:11:9: AMP001" in p.stdout and p.stderr == ""


def test_command_runs_when_its_option_follows(proj):
    p = run("bench", "--help", cwd=proj)
    assert p.returncode == 0 and "Usage: amplint bench" in p.stdout
    p = run("verify", "--help", cwd=proj)
    assert p.returncode == 0 and "Usage: amplint verify" in p.stdout
    # without such a folder the word is the command
    p = run("bench", "--help", cwd=proj / "bench")
    assert "Usage: amplint bench" in p.stdout


def test_stdin_filename_without_dash_reads_stdin(proj):
    (proj / "other.py").write_text(BAD)
    p = run("--no-cache", "--stdin-filename", "bench/new.py", cwd=proj, input=BAD)
    assert p.returncode == 1
    assert [line.split(":")[0] for line in p.stdout.splitlines() if ": AMP" in line] == ["bench/new.py", "bench/new.py"]
    p = run("--no-cache", "--stdin-filename", "x.py", "other.py", cwd=proj, input=BAD)
    assert p.returncode == 2 and "--stdin-filename reads the source from stdin" in p.stderr


def test_output_file(proj):
    p = run("--no-cache", "--output-format", "json", "--output-file", "out.json", "bench", cwd=proj)
    assert p.returncode == 1 and p.stdout == ""
    assert [d["code"] for d in json.loads((proj / "out.json").read_text())] == ["AMP002", "AMP001"]
    p = run("--no-cache", "-o", "out.txt", "bench", cwd=proj)
    text = (proj / "out.txt").read_text()
    assert "\x1b[" not in text and "Found 2 errors." in text and p.stdout == ""


def test_show_files_and_settings(proj):
    (proj / "pyproject.toml").write_text('[tool.amplint]\nextend-exclude = ["verify"]\ntarget-torch-version = "2.2"\n')
    p = run("--show-files", ".", cwd=proj)
    assert p.stdout.splitlines() == ["bench/train.py"]
    p = run("--show-settings", "bench/train.py", cwd=proj)
    assert p.returncode == 0
    assert f"config file: {proj / 'pyproject.toml'}" in p.stdout
    assert f"target-torch-version: 2.2 (from {proj / 'pyproject.toml'})" in p.stdout
    assert "respect-gitignore: true" in p.stdout


def test_verbose_quiet_silent(proj):
    p = run("--no-cache", "-v", "bench", cwd=proj)
    assert "amplint: config (defaults)" in p.stderr
    assert "amplint: 1 files, 0 from the cache, 1 linted" in p.stderr
    assert re.search(r"amplint: finished in \d+\.\d\d s", p.stderr)
    q = run("--no-cache", "-q", "bench", cwd=proj)
    assert q.returncode == 1 and "Found" not in q.stdout and len(q.stdout.splitlines()) == 2
    s = run("--no-cache", "-s", "bench", cwd=proj)
    assert s.returncode == 1 and s.stdout == "" and s.stderr == ""


def test_color(proj):
    plain = run("--no-cache", "bench", cwd=proj)
    assert "\x1b[" not in plain.stdout  # auto: not a terminal
    always = run("--no-cache", "--color", "always", "bench", cwd=proj, env_extra={"NO_COLOR": "1"})
    assert "\x1b[31m\x1b[1mAMP002" in always.stdout  # code in bold red
    assert ANSI.sub("", always.stdout) == plain.stdout
    forced = run("--no-cache", "bench", cwd=proj, env_extra={"FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout
    never = run("--no-cache", "--color", "never", "bench", cwd=proj, env_extra={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.stdout


def test_config_key_value(proj):
    p = run("--no-cache", "--config", "ignore = ['AMP002']", "bench", cwd=proj)
    assert p.returncode == 1 and "AMP002" not in p.stdout and "AMP001" in p.stdout
    p = run("--no-cache", "--config", "select=['AMP002']", "--config", "extend-select=['AMP001']", "bench", cwd=proj)
    assert "AMP002" in p.stdout and "AMP001" in p.stdout
    (proj / "pyproject.toml").write_text('[tool.amplint]\nignore = ["AMP001", "AMP002"]\n')
    p = run("--no-cache", "--config", "ignore = []", "bench", cwd=proj)  # overrides the file's list
    assert p.returncode == 1 and "AMP001" in p.stdout
    p = run("--no-cache", "--config", "ignor = ['AMP001']", "bench", cwd=proj)
    assert p.returncode == 2 and "unknown key(s): ignor (did you mean `ignore`?)" in p.stderr
    p = run("--no-cache", "--config", "ignore = [", "bench", cwd=proj)
    assert p.returncode == 2 and "not a configuration file, nor a TOML `KEY = VALUE` pair" in p.stderr


def test_help_usage_aligned(proj):
    p = run("--help", cwd=proj)
    usage = p.stdout.split("\n\n")[0].splitlines()
    assert usage[0] == "Usage: amplint [OPTIONS] [PATHS]..."
    assert all(line.startswith("       amplint ") for line in usage[1:]), usage
    assert "server" in p.stdout


def test_list_rules_width(proj):
    p = run("--list-rules", cwd=proj, env_extra={"COLUMNS": "100"})
    lines = p.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[1].split()[:4] == ["AMP001", "step-without-update", "on", "sometimes"]
    assert any(line.split()[:4] == ["AMP013", "scaler-state-not-checkpointed", "on", "(info)"] for line in lines)
