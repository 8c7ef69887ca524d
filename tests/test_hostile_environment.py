"""Hostile environments and malformed side inputs (found by a red-team battery): special files,
damaged caches and configs, malformed notebooks, unwritable outputs, odd line breaks. Each
answers with a diagnostic or a one-line error, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TRAIN = (
    "import torch\n\n"
    "def train(model, opt, batches):\n"
    "    scaler = torch.amp.GradScaler('cuda')\n"
    "    for x, y in batches:\n"
    "        with torch.autocast('cuda', dtype=torch.float16):\n"
    "            loss = model(x)\n"
    "        scaler.scale(loss).backward()\n"
    "        scaler.step(opt)\n"
)


def amplint(*args, cwd=None, stdin=None, stdout=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "amplint", *args], cwd=cwd, input=stdin, timeout=timeout,
                          stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE)


def no_traceback(p) -> str:
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace") if p.stdout else ""
    assert "Traceback" not in err and "Traceback" not in out, err
    return err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_a_diagnostic_not_a_hang(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "ok.py").write_text(TRAIN)
    os.mkfifo(d / "x.py")
    os.mkfifo(d / "y.ipynb")
    for args in (["--no-cache", "--isolated", str(d)], ["--no-cache", "--isolated", "--fix", str(d)]):
        p = amplint(*args, timeout=60)
        no_traceback(p)
        out = p.stdout.decode()
        assert "x.py:1:1: AMP000 cannot read the file: not a regular file" in out
        assert "y.ipynb:1:1: AMP000" in out
        assert "ok.py:9:9: AMP001" in out or "--fix" in args
    fifo_config = tmp_path / "f.toml"
    os.mkfifo(fifo_config)
    p = amplint("--config", str(fifo_config), str(d / "ok.py"), timeout=60)
    assert p.returncode == 2 and "not a regular file" in no_traceback(p)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_symlink_to_an_endless_device(tmp_path):
    (tmp_path / "z.py").symlink_to("/dev/zero")
    # found by the walk: a link out of the tree is not followed (containment), with a warning
    p = amplint("--no-cache", "--isolated", str(tmp_path), timeout=60)
    assert p.returncode == 0
    assert "z.py: not linted: a symbolic link to a file outside the project (/dev/zero)" in no_traceback(p)
    # named explicitly: read, and refused without a read
    p = amplint("--no-cache", "--isolated", str(tmp_path / "z.py"), timeout=60)
    no_traceback(p)
    assert p.returncode == 1 and "z.py:1:1: AMP000 cannot read the file: not a regular file" in p.stdout.decode()


@pytest.mark.parametrize("content, message", [
    ('tool = "amplint"\n', None),  # not amplint's: ignored when found by walking up
    ("[tool.amplint]\nmax-file-size = \"" + "9" * 400 + "GB\"\n", "`max-file-size` must be"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
])
def test_broken_configs_found_upwards(tmp_path, content, message):
    (tmp_path / "pyproject.toml").write_text(content)
    (tmp_path / "t.py").write_text(TRAIN)
    p = amplint("--no-cache", "t.py", cwd=tmp_path)
    err = no_traceback(p)
    if message is None:
        assert p.returncode == 1
    else:
        assert p.returncode == 2 and message in err


@pytest.mark.parametrize("content", ['tool = "amplint"\n', "tool = 5\n", 'tool = ["x"]\n'])
def test_config_whose_tool_is_not_a_table(tmp_path, content):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(content)
    (tmp_path / "t.py").write_text(TRAIN)
    p = amplint("--no-cache", "--config", str(cfg), "t.py", cwd=tmp_path)
    assert p.returncode == 2 and "`tool` must be a table" in no_traceback(p)


@pytest.mark.parametrize("damage", [
    "[]", "null", '{"version": 2, "entries": []}', '{"version": 2, "entries": {"!t.py": 5}}',
    "[" * 100_000 + "]" * 100_000, "diagnostics",
])
def test_damaged_cache_is_a_miss(tmp_path, damage):
    (tmp_path / "t.py").write_text(TRAIN)
    first = amplint("--isolated", "--cache-dir", "c", "t.py", cwd=tmp_path)
    files = list((tmp_path / "c").glob("results-*.json"))
    assert files
    for f in files:
        if damage == "diagnostics":
            data = json.loads(f.read_text())
            for e in data["entries"].values():
                e["diagnostics"] = [{"junk": 1}]
            f.write_text(json.dumps(data))
        else:
            f.write_text(damage)
    again = amplint("--isolated", "--cache-dir", "c", "t.py", cwd=tmp_path)
    no_traceback(again)
    assert again.returncode == first.returncode == 1
    assert again.stdout == first.stdout


def _notebook(cells, **top):
    return json.dumps({"cells": cells, "metadata": top.pop("metadata", {}), "nbformat": 4, "nbformat_minor": 5, **top})


MALFORMED = {
    "source_list_of_ints": _notebook([{"cell_type": "code", "source": [1, 2], "metadata": {}}]),
    "cell_magic_percent_space": _notebook([{"cell_type": "code", "source": "%% \n" + TRAIN, "metadata": {}}]),
    "metadata_list": _notebook([{"cell_type": "code", "source": TRAIN, "metadata": {}}], metadata=[]),
    "language_info_str": _notebook([{"cell_type": "code", "source": TRAIN, "metadata": {}}],
                                   metadata={"language_info": "python"}),
    "lone_surrogate": _notebook([{"cell_type": "code", "source": "x = '\\ud800'\n" + TRAIN, "metadata": {}}]),
    "deep_json": '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_notebooks(tmp_path, name):
    nb = tmp_path / f"{name}.ipynb"
    nb.write_text(MALFORMED[name])
    before = nb.read_bytes()
    for args in (["--isolated", "--no-cache", str(nb)], ["--isolated", "--no-cache", "--fix", str(nb)],
                 ["--isolated", "--no-cache", "--diff", str(nb)], ["--isolated", "--no-cache", "--add-noqa", str(nb)]):
        p = amplint(*args)
        no_traceback(p)
        assert p.returncode in (0, 1), (args, p.stderr)
    p = amplint("--isolated", "--no-cache", "--stdin-filename", nb.name, "-", stdin=before)
    no_traceback(p)
    assert p.returncode in (0, 1)


def test_notebook_fix_keeps_comments_that_look_like_markers(tmp_path):
    nb = tmp_path / "t.ipynb"
    cell1 = "%time x = 1\npass  # amplint: magic 1\n# amplint: cell boundary 2\nKEEP_ME = 0\n"
    nb.write_text(_notebook([
        {"cell_type": "code", "source": cell1, "metadata": {}, "outputs": [], "execution_count": None},
        {"cell_type": "code", "source": TRAIN, "metadata": {}, "outputs": [], "execution_count": None},
    ]))
    p = amplint("--isolated", "--no-cache", "--unsafe-fixes", "--fix", str(nb))
    no_traceback(p)
    cells = json.loads(nb.read_text())["cells"]
    assert "".join(cells[0]["source"]) == cell1
    assert "scaler.update()" in "".join(cells[1]["source"])


@pytest.mark.parametrize("sep", ["\x0c", "\u2028", "\x0b", "\x1c", "\x85"])
def test_fix_lands_on_the_right_line_whatever_the_odd_line_breaks(tmp_path, sep):
    # str.splitlines() breaks at these, CPython and LibCST do not
    lines = f"import torch\n# odd{sep}comment\nNOTE = 'a{sep}b'\n" + ("\x0c\n" if sep == "\x0c" else "")
    src = TRAIN.replace("import torch\n\n", lines)
    f = tmp_path / "t.py"
    f.write_text(src, encoding="utf-8")
    p = amplint("--isolated", "--no-cache", "--unsafe-fixes", "--fix", str(f))
    no_traceback(p)
    fixed = f.read_text(encoding="utf-8")
    assert fixed.index("scaler.step(opt)") < fixed.index("scaler.update()")
    assert amplint("--isolated", "--no-cache", str(f)).returncode == 0


def test_fix_through_a_symlink_fixes_the_target(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "t.py").write_text(TRAIN)
    d = tmp_path / "d"
    d.mkdir()
    (d / "t.py").symlink_to("../real/t.py")
    # the link stays inside the project (the current directory): its target is fixed
    p = amplint("--isolated", "--no-cache", "--unsafe-fixes", "--fix", "d/t.py", cwd=tmp_path)
    no_traceback(p)
    assert (d / "t.py").is_symlink()
    assert "scaler.update()" in (real / "t.py").read_text()


def test_fix_that_cannot_be_written_is_an_error_not_a_traceback(tmp_path):
    from amplint import fixer
    from amplint.engine import default_settings

    f = tmp_path / "t.py"
    f.write_text(TRAIN)
    f.chmod(0o444)  # read-only: never rewritten (the directory is writable, the file is not)
    settings = default_settings()
    [result] = fixer.fix_paths([str(f)], settings, unsafe=True)
    assert result.errors[0].startswith(f"{f}: cannot write the fixes: Permission denied")
    assert [d.code for d in result.diagnostics] == ["AMP001"]
    assert result.fixes_applied == 0
    assert f.read_text() == TRAIN


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_output_that_cannot_be_written(tmp_path):
    (tmp_path / "t.py").write_text(TRAIN)
    with open("/dev/full", "wb") as full:
        p = amplint("--isolated", "--no-cache", "t.py", cwd=tmp_path, stdout=full)
    assert p.returncode == 2
    assert "No space left on device" in no_traceback(p)


def test_deeply_nested_loops_stay_fast(tmp_path):
    # the flow analysis memoises inner loops: 13 nested loops used to take about 50 s
    lines = ["import torch", "def f(o):", "    scaler = torch.amp.GradScaler('cuda')"]
    for depth in range(13):
        pad = "    " * (depth + 1)
        lines += [f"{pad}for i{depth} in r:", f"{pad}    scaler.scale(l).backward()"]
    lines.append("    " * 14 + "scaler.step(o)")
    (tmp_path / "t.py").write_text("\n".join(lines) + "\n")
    p = amplint("--isolated", "--no-cache", "t.py", cwd=tmp_path, timeout=60)
    no_traceback(p)
    assert p.returncode == 1 and b"AMP001" in p.stdout
    # (loops nested past MAX_LOOP_DEPTH give the function up at once: it took 34 s to exhaust the
    # step budget, each level multiplying the passes of the levels inside it)
    assert b"`f` is too complex to follow (deeply nested loops)" in p.stderr


def test_a_function_with_thousands_of_protocol_calls_is_given_up_with_a_warning(tmp_path):
    # generated code: 3^N paths through N if/elif/else groups; 1000 groups took 6 s to follow
    lines = ["import torch", "scaler = torch.amp.GradScaler('cuda')", "for x in loader:",
             "    scaler.scale(model(x)).backward()"]
    for i in range(400):
        lines += [f"    if c{i}:", "        scaler.step(opt)", f"    elif d{i}:", "        scaler.update()", "    else:",
                  "        scaler.unscale_(opt)"]
    (tmp_path / "t.py").write_text("\n".join(lines) + "\n")
    p = amplint("--isolated", "--no-cache", "t.py", cwd=tmp_path, timeout=60)
    no_traceback(p)
    assert b"`<module>` is too complex to follow (1,201 GradScaler calls)" in p.stderr
    assert p.returncode == 0


def test_many_branches_of_protocol_calls_are_followed_with_fewer_states(tmp_path):
    # 300 groups (900 calls): followed, each point keeping fewer states than in a training step
    lines = ["import torch", "scaler = torch.amp.GradScaler('cuda')", "for x in loader:",
             "    scaler.scale(model(x)).backward()"]
    for i in range(300):
        lines += [f"    if c{i}:", "        scaler.step(opt)", f"    elif d{i}:", "        scaler.update()", "    else:",
                  "        scaler.unscale_(opt)"]
    (tmp_path / "t.py").write_text("\n".join(lines) + "\n")
    p = amplint("--isolated", "--no-cache", "--output-format", "concise", "t.py", cwd=tmp_path, timeout=60)
    no_traceback(p)
    assert b"too complex" not in p.stderr
    # the second group's update can follow the first group's update: no step or unscale_ between
    assert b"t.py:14:9: AMP006" in p.stdout
    # and its unscale_ can follow the first group's unscale_ with no update between
    assert b"t.py:16:9: AMP005" in p.stdout


def test_scalers_past_the_bound_are_not_followed_and_the_first_ones_still_are(tmp_path):
    # 3000 module-level scalers took 7 s and 510 MB (each new one copied the state's scaler table)
    lines = ["import torch", "scaler = torch.amp.GradScaler('cuda')"]
    lines += [f"s{i} = torch.amp.GradScaler('cuda')" for i in range(3000)]
    lines += ["for x in loader:", "    scaler.scale(model(x)).backward()", "    scaler.step(opt)"]
    (tmp_path / "t.py").write_text("\n".join(lines) + "\n")
    p = amplint("--isolated", "--no-cache", "--output-format", "concise", "t.py", cwd=tmp_path, timeout=60)
    no_traceback(p)
    assert p.returncode == 1 and b"t.py:3005:5: AMP001" in p.stdout


def test_loops_nested_as_deep_as_real_code_are_followed(tmp_path):
    # the public corpus nests at most five loops in one function
    lines = ["import torch", "def f(model, o, r):", "    scaler = torch.amp.GradScaler('cuda')"]
    for depth in range(5):
        lines.append("    " * (depth + 1) + f"for i{depth} in r:")
    pad = "    " * 6
    lines += [f"{pad}scaler.scale(model(i4)).backward()", f"{pad}torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
              f"{pad}scaler.step(o)", f"{pad}scaler.update()"]
    (tmp_path / "t.py").write_text("\n".join(lines) + "\n")
    p = amplint("--isolated", "--no-cache", "t.py", cwd=tmp_path, timeout=60)
    no_traceback(p)
    assert p.returncode == 1 and b"t.py:10:25: AMP002" in p.stdout and b"too complex" not in p.stderr


def test_stdin_fix_prints_the_fixed_source_and_the_report_on_stderr(tmp_path):
    p = amplint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--stdin-filename", "t.py", "-",
                stdin=TRAIN.encode())
    no_traceback(p)
    assert p.stdout.decode() == TRAIN + "        scaler.update()\n"
    assert "1 fixed" in p.stderr.decode()
    assert p.returncode == 0
    p = amplint("--isolated", "--no-cache", "--diff", "--unsafe-fixes", "--stdin-filename", "t.py", "-",
                stdin=TRAIN.encode())
    assert p.returncode == 1 and "+        scaler.update()" in p.stdout.decode()


def test_full_format_on_stdin_shows_the_stdin_source(tmp_path):
    (tmp_path / "other.py").write_text("# something else entirely\n" * 20)
    p = amplint("--isolated", "--no-cache", "--output-format", "full", "--stdin-filename", "other.py", "-",
                stdin=TRAIN.encode(), cwd=tmp_path)
    assert "9 |         scaler.step(opt)" in p.stdout.decode()


@pytest.mark.parametrize("args, message", [
    (["--select", ""], "--select needs at least one code"),
    (["--explain", ""], "unknown rule code"),
    (["--isolated", "--config", "pyproject.toml"], "--config cannot be used with --isolated"),
])
def test_empty_or_conflicting_options_are_usage_errors(tmp_path, args, message):
    (tmp_path / "t.py").write_text(TRAIN)
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    p = amplint(*args, "t.py", cwd=tmp_path)
    assert p.returncode == 2 and message in no_traceback(p)


@pytest.mark.skipif(not Path(os.devnull).exists(), reason="no null device")
def test_config_devnull_means_no_settings(tmp_path):
    (tmp_path / "t.py").write_text(TRAIN)
    p = amplint("--no-cache", "--config", os.devnull, "t.py", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 1 and b"AMP001" in p.stdout
