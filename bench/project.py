"""Project-wide analysis benchmark (issue 14): what following the protocol across modules costs.

    python bench/project.py [--runs 5] [--base TREE] [--corpus DIR] [--json FILE]

Times whole processes, several runs each, commands alternating, and prints medians with min-max
and the ratios from the same run:

- a 300-line training script that imports five project modules (helpers, hooks, checkpoints,
  model builder, data), linted alone as pre-commit does (``amplint --no-cache train.py``),
  against the same script copied alone into an empty folder (the per-file peer);
- that project with a warm cache, and warm again after one helper module was touched (its
  content changed): the touched run re-lints the helper and the modules depending on it;
- with ``--base TREE`` (a checkout of the tree before project analysis) and ``--corpus``: the
  cold corpus run's CPU of this tree against that one (``PYTHONPATH=TREE``), same interpreter.

Nothing here is a test: it prints numbers; docs/performance.md records them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf import ENV, corpus_dir, measure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

MODULES = {
    "proj/__init__.py": "",
    "proj/optim_utils.py": '''import torch


def clip_gradients(model, max_norm):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def step(scaler, optimizer):
    scaler.step(optimizer)
    scaler.update()
''',
    "proj/hooks.py": '''import logging

import torch

log = logging.getLogger(__name__)


class GradNormLogger:
    def after_unscale(self, model, step):
        if step % 100 == 0:
            norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
            log.info("step %d grad norm %.3f", step, norm.item())
''',
    "proj/checkpoint.py": '''import torch


def save(path, model, optimizer, scaler, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(), "epoch": epoch}, path)
''',
    "proj/models.py": '''import torch.nn as nn


def build(width=64, classes=10):
    return nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, classes)).cuda()
''',
    "proj/data.py": '''import torch
from torch.utils.data import DataLoader, TensorDataset


def loader(n=512, width=64, classes=10, batch=32):
    return DataLoader(TensorDataset(torch.randn(n, width), torch.randint(0, classes, (n,))), batch_size=batch)
''',
}

SCRIPT_HEAD = '''import argparse

import torch
import torch.nn.functional as F

from proj import checkpoint, data, models
from proj.hooks import GradNormLogger
from proj.optim_utils import clip_gradients, step

'''

SCRIPT_STEP = '''

def train_{i}(epochs=1, max_norm=1.0, use_amp=True):
    model = models.build()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    logger = GradNormLogger()
    for epoch in range(epochs):
        for it, (x, y) in enumerate(data.loader()):
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = F.cross_entropy(model(x.cuda()), y.cuda())
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            logger.after_unscale(model, it)
            clip_gradients(model, max_norm)
            step(scaler, optimizer)
        checkpoint.save(f"ckpt_{{epoch}}.pt", model, optimizer, scaler, epoch)
    return model
'''


def build_project(dest: Path) -> Path:
    for rel, text in MODULES.items():
        p = dest / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (dest / "pyproject.toml").write_text('[project]\nname = "bench-proj"\n')
    body = SCRIPT_HEAD + "".join(SCRIPT_STEP.format(i=i) for i in range(15))
    body += '\n\nif __name__ == "__main__":\n    ap = argparse.ArgumentParser()\n    ap.parse_args()\n    train_0()\n'
    (dest / "train.py").write_text(body)
    return dest / "train.py"


def stats(samples: list[dict], key: str) -> dict:
    vals = [s[key] for s in samples]
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}


def fmt(s: dict) -> str:
    return f"{s['median']:.3f} ({s['min']:.3f}-{s['max']:.3f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base", help="a checkout of the tree before project analysis, for the corpus CPU ratio")
    ap.add_argument("--corpus")
    ap.add_argument("--json")
    args = ap.parse_args()
    amplint = [sys.executable, "-m", "amplint"]
    this_env = dict(ENV, PYTHONPATH=str(ROOT))  # this tree, whatever is installed
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = build_project(tmp / "project")
        lines = script.read_text().count("\n")
        alone = tmp / "alone"
        alone.mkdir()
        shutil.copy(script, alone / "train.py")
        cache = tmp / "cache"
        proj = script.parent
        helper = proj / "proj" / "optim_utils.py"
        runs: dict[str, list[dict]] = {k: [] for k in ("script", "alone", "warm", "touched")}
        measure(amplint + ["--cache-dir", str(cache), "."], cwd=proj, env=this_env)  # fill the cache
        for r in range(args.runs):
            runs["script"].append(measure(amplint + ["--no-cache", "train.py"], cwd=proj, env=this_env))
            runs["alone"].append(measure(amplint + ["--no-cache", "train.py"], cwd=alone, env=this_env))
            runs["warm"].append(measure(amplint + ["--cache-dir", str(cache), "."], cwd=proj, env=this_env))
            helper.write_text(helper.read_text() + f"\n# touched {r}\n")
            runs["touched"].append(measure(amplint + ["--cache-dir", str(cache), "."], cwd=proj, env=this_env))
            measure(amplint + ["--cache-dir", str(cache), "."], cwd=proj, env=this_env)  # warm again for the next pass
        for k, v in runs.items():
            out[k] = {"wall": stats(v, "wall"), "cpu": stats(v, "cpu")}
        print(f"{lines}-line script importing {len(MODULES) - 1} project modules, {args.runs} runs (wall s):")
        print(f"  linted in its project:        {fmt(out['script']['wall'])}")
        print(f"  the same script alone:        {fmt(out['alone']['wall'])}")
        print(f"  project warm:                 {fmt(out['warm']['wall'])}")
        print(f"  warm after touching a helper: {fmt(out['touched']['wall'])}")
        ratio_script = out["script"]["wall"]["median"] / out["alone"]["wall"]["median"]
        ratio_touch = out["touched"]["wall"]["median"] / out["warm"]["wall"]["median"]
        print(f"ratios: script in project / alone {ratio_script:.2f}x; touched / warm {ratio_touch:.2f}x (target 2x); "
              f"script {out['script']['wall']['median']:.2f} s (target 0.5 s)")
        out["ratios"] = {"script_vs_alone": ratio_script, "touched_vs_warm": ratio_touch}
    if args.base:
        corpus = corpus_dir(args.corpus)
        base_env = dict(ENV, PYTHONPATH=str(Path(args.base).resolve()))
        cold = {"this": [], "base": []}
        neutral = Path(tempfile.mkdtemp())  # ``-m`` puts the working directory first on sys.path
        for _ in range(max(1, args.runs // 3)):
            cold["this"].append(measure(amplint + ["--no-cache", "--isolated", str(corpus)], cwd=neutral, env=this_env))
            cold["base"].append(measure(amplint + ["--no-cache", "--isolated", str(corpus)], cwd=neutral, env=base_env))
        neutral.rmdir()
        for k in cold:
            out[f"corpus_{k}"] = {"wall": stats(cold[k], "wall"), "cpu": stats(cold[k], "cpu")}
        r = out["corpus_this"]["cpu"]["median"] / out["corpus_base"]["cpu"]["median"]
        print(f"cold corpus: this tree cpu {fmt(out['corpus_this']['cpu'])} s, wall {fmt(out['corpus_this']['wall'])} s; "
              f"base cpu {fmt(out['corpus_base']['cpu'])} s, wall {fmt(out['corpus_base']['wall'])} s")
        print(f"ratio: cold corpus CPU this / base {r:.2f}x (target 1.3x)")
        out["ratios"]["corpus_cpu"] = r
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
