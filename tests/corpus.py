"""The public-package corpus (../shared/tools/build-corpus.sh), built once and reused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = ROOT.parent / "shared" / "tools" / "build-corpus.sh"
PACKAGES = (
    "timm-1.0.31", "ultralytics-8.4.190", "ultralytics-8.3.202", "mmengine-0.10.7", "lightning-2.6.6",
    "accelerate-1.16.0", "open-clip-torch-3.3.0", "sentence-transformers-6.3.0", "pytorch-ignite-0.5.5",
    "fastai-2.8.12", "speechbrain-1.1.2", "mosaicml-0.32.1", "allennlp-2.10.1", "super-gradients-3.7.1",
    "super-gradients-3.0.6", "yolov5-7.0.14", "torch-2.13.0", "transformers-5.25.0",
)


def corpus_dir() -> Path:
    return Path(os.environ.get("AMPLINT_CORPUS") or Path.home() / ".cache" / "amplint-corpus")


def ensure_corpus() -> Path:
    """Build (or reuse) the corpus; skip when neither it nor the build script is available."""
    dest = corpus_dir()
    missing = [p for p in PACKAGES if not (dest / p).is_dir()]
    if missing:
        if not BUILD_SCRIPT.exists():
            pytest.skip(f"no corpus at {dest} and no {BUILD_SCRIPT} to build it")
        proc = subprocess.run(["bash", str(BUILD_SCRIPT), str(dest)], capture_output=True, text=True)
        missing = [p for p in PACKAGES if not (dest / p).is_dir()]
        if missing:
            pytest.fail(f"corpus build incomplete, missing {missing}:\n{proc.stdout}\n{proc.stderr}")
    return dest
