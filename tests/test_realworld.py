"""Real-world precision: the default rules on the public package corpus find exactly the
expected list, which holds true findings only (docs/realworld.md gives each one's verdict)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from corpus import ensure_corpus

from amplint.config import CliOverrides, build_settings
from amplint.rules import all_rules
from amplint.runner import run

pytestmark = pytest.mark.realworld

# (path inside the corpus, row, code). Known bugs first-class:
#   super-gradients 3.0.6 sg_trainer.py:528 clips scaled gradients (AMP002);
#   pytorch-ignite 0.5.5's amp training step back-propagates its float16 loss unscaled when it
#   is given no scaler, create_supervised_trainer's default for amp_mode="amp" (AMP106);
#   ultralytics 8.3.202, allennlp 2.10.1, yolov5 7.0.14 (train.py, segment/train.py) save
#   training checkpoints without the GradScaler state (AMP013);
# the AMP101 rows are uses of the deprecated torch.cuda.amp names, each of which warns
# (FutureWarning) on torch >= 2.4.
EXPECTED = [
    ("allennlp-2.10.1/allennlp/nn/parallel/ddp_accelerator.py", 75, "AMP101"),
    ("allennlp-2.10.1/allennlp/nn/parallel/ddp_accelerator.py", 76, "AMP101"),
    ("allennlp-2.10.1/allennlp/nn/parallel/fairscale_fsdp_accelerator.py", 69, "AMP101"),
    ("allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py", 326, "AMP101"),
    ("allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py", 333, "AMP101"),
    ("allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py", 509, "AMP101"),
    ("allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py", 689, "AMP101"),
    ("allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py", 1016, "AMP013"),
    ("fastai-2.8.12/fastai/callback/channelslast.py", 14, "AMP101"),
    ("fastai-2.8.12/fastai/callback/channelslast.py", 25, "AMP101"),
    ("mmengine-0.10.7/mmengine/optim/optimizer/amp_optimizer_wrapper.py", 20, "AMP101"),
    ("pytorch-ignite-0.5.5/ignite/engine/__init__.py", 229, "AMP106"),
    ("sentence-transformers-6.3.0/sentence_transformers/cross_encoder/fit_mixin.py", 486, "AMP101"),
    ("sentence-transformers-6.3.0/sentence_transformers/sentence_transformer/fit_mixin.py", 574, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/losses/yolox_loss.py", 459, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/losses/yolox_loss.py", 932, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/sg_trainer/sg_trainer.py", 13, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/sg_trainer/sg_trainer.py", 13, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/sg_trainer/sg_trainer.py", 418, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/sg_trainer/sg_trainer.py", 528, "AMP002"),
    ("super-gradients-3.0.6/super_gradients/training/sg_trainer/sg_trainer.py", 1315, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/utils/distributed_training_utils.py", 10, "AMP101"),
    ("super-gradients-3.0.6/super_gradients/training/utils/distributed_training_utils.py", 62, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/losses/yolox_loss.py", 478, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/losses/yolox_loss.py", 975, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/pipelines/pipelines.py", 210, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/sg_trainer/sg_trainer.py", 18, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/sg_trainer/sg_trainer.py", 18, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/sg_trainer/sg_trainer.py", 502, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/sg_trainer/sg_trainer.py", 1753, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/utils/distributed_training_utils.py", 11, "AMP101"),
    ("super-gradients-3.7.1/super_gradients/training/utils/distributed_training_utils.py", 65, "AMP101"),
    ("torch-2.13.0/torch/testing/_internal/distributed/distributed_test.py", 40, "AMP101"),
    ("torch-2.13.0/torch/testing/_internal/distributed/distributed_test.py", 40, "AMP101"),
    ("torch-2.13.0/torch/testing/_internal/distributed/distributed_test.py", 5542, "AMP101"),
    ("torch-2.13.0/torch/testing/_internal/distributed/distributed_test.py", 5560, "AMP101"),
    ("ultralytics-8.3.202/ultralytics/engine/trainer.py", 576, "AMP013"),
    ("yolov5-7.0.14/yolov5/classify/train.py", 171, "AMP101"),
    ("yolov5-7.0.14/yolov5/classify/train.py", 190, "AMP101"),
    ("yolov5-7.0.14/yolov5/classify/val.py", 117, "AMP101"),
    ("yolov5-7.0.14/yolov5/models/common.py", 682, "AMP101"),
    ("yolov5-7.0.14/yolov5/models/common.py", 709, "AMP101"),
    ("yolov5-7.0.14/yolov5/segment/train.py", 263, "AMP101"),
    ("yolov5-7.0.14/yolov5/segment/train.py", 319, "AMP101"),
    ("yolov5-7.0.14/yolov5/segment/train.py", 408, "AMP013"),
    ("yolov5-7.0.14/yolov5/train.py", 274, "AMP101"),
    ("yolov5-7.0.14/yolov5/train.py", 329, "AMP101"),
    ("yolov5-7.0.14/yolov5/train.py", 406, "AMP013"),
    ("yolov5-7.0.14/yolov5/utils/autobatch.py", 17, "AMP101"),
]

KNOWN_BUGS = {
    ("super-gradients-3.0.6/super_gradients/training/sg_trainer/sg_trainer.py", "AMP002"),
    ("ultralytics-8.3.202/ultralytics/engine/trainer.py", "AMP013"),
    ("allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py", "AMP013"),
    ("yolov5-7.0.14/yolov5/train.py", "AMP013"),
}


@pytest.fixture(scope="module")
def corpus_findings():
    corpus = ensure_corpus()
    settings = build_settings([str(corpus)], CliOverrides(isolated=True, cache_dir=None), all_rules())
    t = time.perf_counter()
    results = run([str(corpus)], settings, use_cache=False)
    elapsed = time.perf_counter() - t
    errors = [e for r in results for e in r.errors]
    found = sorted(
        (str(Path(d.filename).relative_to(corpus)), d.location.row, d.code)
        for r in results for d in r.diagnostics
    )
    files = len(results)
    lines = sum(Path(r.path).read_bytes().count(b"\n") for r in results)
    print(f"corpus: {files} files, {lines} lines, {elapsed:.1f} s")
    return found, errors


def test_corpus_findings_are_exactly_the_expected_list(corpus_findings):
    found, errors = corpus_findings
    assert not errors
    missing = sorted(set(EXPECTED) - set(found))
    extra = sorted(set(found) - set(EXPECTED))
    assert not missing and not extra, f"missing {missing}\nunexpected {extra}"


def test_known_bugs_are_found(corpus_findings):
    found, _ = corpus_findings
    assert KNOWN_BUGS <= {(path, code) for path, _row, code in found}


def test_fixed_and_correct_releases_are_clean(corpus_findings):
    found, _ = corpus_findings
    clean = ("ultralytics-8.4.190/", "timm-1.0.31/", "lightning-2.6.6/", "accelerate-1.16.0/", "open-clip-torch-3.3.0/",
             "speechbrain-1.1.2/", "mosaicml-0.32.1/", "transformers-5.25.0/")
    assert [f for f in found if f[0].startswith(clean)] == []
    # the correct code of these releases has only deprecated-namespace findings
    others = ("mmengine-0.10.7/", "sentence-transformers-6.3.0/", "fastai-2.8.12/", "super-gradients-3.7.1/", "torch-2.13.0/")
    assert {code for path, _r, code in found if path.startswith(others)} == {"AMP101"}


def test_whole_corpus_with_every_rule_has_no_internal_error():
    """Issue 8: lint every file with --select ALL; nothing may crash."""
    corpus = ensure_corpus()
    settings = build_settings([str(corpus)], CliOverrides(isolated=True, select=["ALL"]), all_rules())
    results = run([str(corpus)], settings, use_cache=False)
    assert len(results) > 8000
    assert [e for r in results for e in r.errors] == []
    assert not [d for r in results for d in r.diagnostics if d.code == "AMP000"]
