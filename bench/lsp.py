"""Language-server latency: re-lint of a ~300-line training script after an edit.

    python bench/lsp.py [--edits 40]

Starts `amplint server --stdio` as a subprocess, opens the script (the fixtures' good loops,
concatenated, as in bench/perf.py), then sends edits (an incremental change of one line,
alternating between two texts) and times each from sending `didChange` to receiving its
`publishDiagnostics`. For scale it also times one `amplint` process on the same file (the
cold command line an editor integration without a server would pay per keystroke). Prints
medians; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from lspclient import LspClient  # noqa: E402


def training_script(min_lines: int = 300) -> str:
    """A ~300-line AMP training script: the fixtures' good loops, concatenated."""
    parts = []
    for p in sorted((ROOT / "fixtures").glob("AMP0*/good.py")):
        text = p.read_text().replace("def train(", f"def train_{p.parent.name.lower()}(")
        parts.append(text.split('if __name__ == "__main__":')[0])
        if "\n\n".join(parts).count("\n") >= min_lines:
            break
    return "\n\n".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edits", type=int, default=40)
    args = ap.parse_args()
    script = training_script()
    n_lines = script.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.py"
        path.write_text(script)
        client = LspClient(cwd=tmp, env=dict(os.environ))
        client.initialize(Path(tmp))
        uri = path.as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": script}})
        first = client.diagnostics(uri, version=1)
        lines = script.splitlines(keepends=True)
        row = next(i for i, line in enumerate(lines) if "scaler.update()" in line)
        original = lines[row]
        indent = original[: len(original) - len(original.lstrip())]
        times = []
        for k in range(args.edits):
            version = k + 2
            # every edit is a new text (no result can be reused): odd edits drop the update
            # (a new AMP001), even ones restore it with a different trailing statement
            new = f"{indent}pass  # edit {k}\n" if k % 2 == 0 else f"{original.rstrip()}  # edit {k}\n"
            t0 = time.perf_counter()
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": row, "character": 0},
                                              "end": {"line": row + 1, "character": 0}}, "text": new}]})
            client.diagnostics(uri, version=version)
            times.append(time.perf_counter() - t0)
        client.close()
        cli = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "--isolated", str(path)],
                           capture_output=True, cwd=tmp)
            cli.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(f"script: {n_lines} lines, {len(first['diagnostics'])} findings when opened")
    print(f"server re-lint after an edit: median {med * 1000:.1f} ms, min {min(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms over {len(times)} edits (target: <= 50 ms)")
    print(f"one `amplint FILE` process: median {statistics.median(cli) * 1000:.0f} ms "
          f"(server / process: {med / statistics.median(cli):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
