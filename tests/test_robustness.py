"""Hostile input: every file gets a diagnostic or nothing, never a traceback; the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HEADER = b"import torch\nscaler = torch.amp.GradScaler('cuda')\n"
LOOP = b"for b in loader:\n    scaler.scale(b).backward()\n    scaler.step(opt)\n"

CASES = {
    # name: (bytes, expected (code, row, col) list or None for "no finding")
    "python2.py": (HEADER + b"print 'hello'\n", [("AMP000", 3, 1)]),
    # Python 3.12 syntax (a line break in an f-string's braces, a ``type`` alias, a generic
    # function): analysed on an older interpreter too, through LibCST's grammar
    "py312_syntax.py": (HEADER + b'type Batch = list[int]\nprint(f"{scaler\n}")\ndef first[T](xs: list[T]) -> T:\n'
                        b"    return xs[0]\n" + LOOP, [("AMP001", 10, 5)]),
    "latin1_cookie.py": (b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + HEADER + LOOP, [("AMP001", 7, 5)]),
    "latin1_no_cookie.py": (b"# caf\xe9\n" + HEADER, [("AMP000", 1, 6)]),
    "bad_cookie.py": (b"# -*- coding: klingon -*-\n" + HEADER, [("AMP000", 1, 1)]),
    "bom.py": (b"\xef\xbb\xbf" + HEADER + LOOP, [("AMP001", 5, 5)]),
    "crlf.py": ((HEADER + LOOP).replace(b"\n", b"\r\n"), [("AMP001", 5, 5)]),
    "mixed_newlines.py": (b"import torch\r\nscaler = torch.amp.GradScaler('cuda')\nfor b in loader:\r\n    scaler.scale(b).backward()\n    scaler.step(opt)\r\n",
                          [("AMP001", 5, 5)]),
    "cr_only.py": ((HEADER + LOOP).replace(b"\n", b"\r"), [("AMP001", 5, 5)]),
    "tabs.py": (HEADER + LOOP.replace(b"    ", b"\t"), [("AMP001", 5, 2)]),
    "tabs_and_spaces.py": (HEADER + b"for b in loader:\n\tscaler.scale(b).backward()\n        scaler.step(opt)\n", [("AMP000", 5, 1)]),
    "nul.py": (HEADER + b"x = 1\x00\n", [("AMP000", 3, 6)]),
    "nul_no_amp.py": (b"x = 1\x00\n", [("AMP000", 1, 6)]),
    "utf16.py": ("import torch\nscaler = torch.amp.GradScaler('cuda')\n".encode("utf-16"), [("AMP000", 1, 1)]),
    "empty.py": (b"", []),
    "no_final_newline.py": ((HEADER + LOOP).rstrip(b"\n"), [("AMP001", 5, 5)]),
    "form_feed.py": (b"import torch\n\x0c\nscaler = torch.amp.GradScaler('cuda')\n", []),
    "deep_unary.py": (HEADER + b"x = " + b"-" * 100_000 + b"1\n", [("AMP000", 1, 1)]),
    "deep_parens.py": (HEADER + b"x = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n", [("AMP000", 3, 205)]),
    "deep_attribute.py": (HEADER + b"x = a" + b".b" * 50_000 + b"\n", [("AMP000", 1, 1)]),
    "deep_but_legal.py": (HEADER + b"x = " + b"-" * 2_000 + b"1\n", []),
    "unterminated_string.py": (HEADER + b"x = '''\n", [("AMP000", 3, 5)]),
    # chains CPython accepts at any length but LibCST parses in super-linear time
    "long_binop_chain.py": (HEADER + b"y = x" + b"+x" * 3_000 + b"\n", [("AMP000", 1, 1)]),
    "long_attribute_chain.py": (HEADER + b"scaler" + b".a" * 3_000 + b".step(o)\n", [("AMP000", 1, 1)]),
    "long_but_fine_chain.py": (HEADER + b"y = x" + b"+x" * 500 + b"\n", []),
}


def lint_file(path: Path, *args: str):
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", "--output-format", "json", *args, str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    for name, (data, _) in CASES.items():
        (d / name).write_bytes(data)
    return d


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_file(hostile_dir, name):
    import json

    p = lint_file(hostile_dir / name)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode in (0, 1), p.stderr
    got = [(d["code"], d["location"]["row"], d["location"]["column"]) for d in json.loads(p.stdout)]
    assert got == CASES[name][1]


def test_whole_hostile_directory_in_one_run(hostile_dir):
    """All of them at once, in parallel: each file answered, the others still linted."""
    import json

    p = lint_file(hostile_dir, "--jobs", "2")
    assert "Traceback" not in p.stderr
    files = {Path(d["filename"]).name for d in json.loads(p.stdout)}
    # Found by walking a directory, a file without any AMP token is not even parsed (the
    # prefilter); only a file named on the command line is always syntax-checked.
    no_amp_tokens = {"nul_no_amp.py", "utf16.py"}
    expected = {name for name, (_, want) in CASES.items() if want} - no_amp_tokens
    assert files == expected


def test_big_generated_file_is_skipped_with_a_warning(tmp_path):
    big = tmp_path / "generated.py"
    chunk = HEADER + b"def f(o):\n    scaler.step(o)\n" * 2000
    with open(big, "wb") as f:
        while f.tell() < 20 * 1024 * 1024:
            f.write(chunk)
    p = subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", str(big)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    assert "not analysed: 20.0 MB is over `max-file-size` (2.0 MB)" in p.stderr


def test_max_file_size_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nmax-file-size = "1KB"\n')
    (tmp_path / "t.py").write_bytes(HEADER + LOOP + b"# padding\n" * 200)
    p = subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "t.py"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0 and "over `max-file-size`" in p.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nmax-file-size = "lots"\n')
    p = subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "t.py"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2 and "`max-file-size` must be" in p.stderr


def test_symlink_loop_and_py_directory(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_bytes(HEADER + LOOP)
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    (tmp_path / "weird.py").mkdir()
    (tmp_path / "weird.py" / "inner.py").write_bytes(HEADER + LOOP)
    p = subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", "."], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    lines = sorted(line.split(":")[0] for line in p.stdout.splitlines() if ": AMP" in line)
    assert lines == ["pkg/train.py", "weird.py/inner.py"]


def test_unreadable_file_is_a_diagnostic_and_the_run_continues(tmp_path, monkeypatch):
    from amplint.engine import lint_paths

    (tmp_path / "a.py").write_bytes(HEADER + LOOP)
    (tmp_path / "b.py").write_bytes(HEADER + LOOP)
    real = os.open

    def refuse_a(path, *args, **kwargs):
        if os.fspath(path).endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_a)
    diags = lint_paths([str(tmp_path)], jobs=1)
    got = sorted((Path(d.filename).name, d.code, d.message) for d in diags)
    assert got[0] == ("a.py", "AMP000", "cannot read the file: Permission denied")
    assert got[1][:2] == ("b.py", "AMP001")


def test_internal_error_in_one_rule_is_reported_and_the_run_goes_on(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from amplint.cli import main
    from amplint.rules.amp002_grad_use_before_unscale import GradUseBeforeUnscale

    def explode(self, model):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(GradUseBeforeUnscale, "check", explode)
    (tmp_path / "t.py").write_bytes(HEADER + LOOP)
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--jobs", "1", str(tmp_path / "t.py")])
    assert result.exit_code == 2
    assert "internal error in AMP002 (grad-use-before-unscale): ZeroDivisionError: boom" in result.output
    assert "t.py:5:5: AMP001" in result.output, "the other rules still report"


def test_linted_code_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    evil = textwrap.dedent(f"""\
        import pathlib
        pathlib.Path({str(marker)!r}).write_text("ran")
        import torch
        scaler = torch.amp.GradScaler("cuda")
        __import__("os").system("touch {marker}")
        for b in loader:
            scaler.scale(b).backward()
            scaler.step(opt)
        """)
    (tmp_path / "evil.py").write_text(evil)
    (tmp_path / "pyproject.toml").write_text(f'[tool.amplint]\nselect = ["ALL"]\n# {marker}\n')
    p = subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "--fix", "--unsafe-fixes", "."], capture_output=True,
                       text=True, cwd=tmp_path)
    assert "Traceback" not in p.stderr
    assert not marker.exists()


def test_config_is_read_with_tomllib_not_executed():
    source = (Path(__file__).resolve().parents[1] / "amplint" / "config.py").read_text()
    assert "tomllib" in source
    for forbidden in ("exec(", "eval(", "runpy", "importlib.import_module(", "__import__("):
        assert forbidden not in source
