"""Project-wide analysis: the protocol split across modules, classes and packages.

Each project under ``tests/projects`` is a small package with ``# error: CODE`` markers; its
``_ok`` twin is the fixed version and must be clean. The findings of a file must not depend on
how it is linted: alone (``amplint pkg/mod.py``), with its package or with the whole tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import expected

from amplint.engine import lint_source
from amplint.project import Project, find_root

PROJECTS = Path(__file__).resolve().parent / "projects"
ALL = sorted(p for p in PROJECTS.iterdir() if p.is_dir())


def _py(project: Path) -> list[Path]:
    return sorted(project.rglob("*.py"))


def _markers(project: Path) -> set[tuple[str, str, int]]:
    out = set()
    for f in _py(project):
        for code, row in expected(f):
            out.add((str(f.relative_to(project)), code, row))
    return out


def _cli(*args: str, cwd: Path) -> list[dict]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "--select", "ALL", "--output-format", "json",
                           *args], capture_output=True, text=True, cwd=cwd, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _alone(project: Path, f: Path) -> set[tuple[str, str, int]]:
    diags = lint_source(f.read_bytes(), str(f), select=["ALL"])
    return {(str(f.relative_to(project)), d.code, d.location.row) for d in diags}


@pytest.mark.parametrize("project", ALL, ids=lambda p: p.name)
def test_each_file_alone_gets_the_marked_findings(project):
    Project._by_root.clear()
    got = set()
    for f in _py(project):
        got |= _alone(project, f)
    want = _markers(project)
    if project.name == "broken_helper":
        want = want | {("brk/helpers.py", "AMP000", 4)}
    assert got == want
    if project.name.endswith("_ok"):
        assert got == set()


@pytest.mark.parametrize("project", [p for p in ALL if p.name in ("helper_clip", "template_hooks", "plumbing")],
                         ids=lambda p: p.name)
def test_tree_package_and_file_runs_agree(project):
    """The whole tree, one package folder and one file at a time: the same findings."""
    whole = {(str(Path(d["filename"]).resolve().relative_to(project)), d["code"], d["location"]["row"])
             for d in _cli(".", cwd=project)}
    assert whole == _markers(project)
    per_file = set()
    for f in _py(project):
        rel = str(f.relative_to(project))
        per_file |= {(rel, d["code"], d["location"]["row"]) for d in _cli(rel, cwd=project)}
    assert per_file == whole
    pkg = next(p for p in project.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    sub = {(str(Path(d["filename"]).resolve().relative_to(project)), d["code"], d["location"]["row"])
           for d in _cli(pkg.name, cwd=project)}
    assert sub == {w for w in whole if w[0].startswith(pkg.name + "/")}


def test_a_broken_module_is_a_diagnostic_and_the_rest_is_analysed():
    project = PROJECTS / "broken_helper"
    got = {(Path(d["filename"]).name, d["code"], d["location"]["row"]) for d in _cli(".", cwd=project)}
    assert got == {("helpers.py", "AMP000", 4)}


def test_a_cross_module_finding_says_where_the_protocol_comes_from():
    """A helper module's clip utility is right wherever it is called after ``unscale_``: the call
    on still-scaled gradients is reported, with the clip in the helper and the caller's scaled
    backward as related locations; the helper module itself has no AMP002."""
    project = PROJECTS / "helper_clip"
    assert not [d for d in _cli("pkg/optim_utils.py", cwd=project) if d["code"] == "AMP002"]
    clip = next(d for d in _cli("pkg/trainer.py", cwd=project) if d["code"] == "AMP002")
    assert clip["location"]["row"] == 14
    related = {(Path(r["filename"]).name, r["location"]["row"]) for r in clip["related"]}
    assert related == {("optim_utils.py", 6), ("trainer.py", 13)}, clip["related"]


def test_a_bypassing_step_of_another_module_is_a_related_location_of_the_update():
    """The wrapper's ``update()`` that only optimizer steps of its importer precede (AMP006) names
    those steps, in the importer's file, in source order (once an internal error: a node of
    another module looked up in this file's positions)."""
    diags = _cli("gan/amp.py", cwd=PROJECTS / "wrapper_update_bypass")
    update = next(d for d in diags if d["code"] == "AMP006")
    assert [(Path(r["filename"]).name, r["location"]["row"]) for r in update["related"]] == [
        ("train.py", 12), ("train.py", 28)]


def test_project_root_and_module_names(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    src = tmp_path / "src" / "pkg" / "sub"
    src.mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("from .sub.mod import f\n")
    (src / "__init__.py").write_text("")
    (src / "mod.py").write_text("from ..other import g\nfrom . import sibling\n")
    (tmp_path / "src" / "pkg" / "other.py").write_text("import pkg.sub.mod as m\n")
    assert find_root(src / "mod.py") == tmp_path.resolve()
    proj = Project(tmp_path.resolve())
    mod = (src / "mod.py").resolve()
    assert proj.module_name(mod) == "pkg.sub.mod"
    assert proj.module_name((src / "__init__.py").resolve()) == "pkg.sub"
    assert proj.absolute(mod, "..other.g") == "pkg.other.g"
    assert proj.absolute((src / "__init__.py").resolve(), ".mod") == "pkg.sub.mod"
    assert proj.imports_of(mod) == {"pkg.other", "pkg.other.g", "pkg.sub", "pkg.sub.sibling"}
    assert proj.split("pkg.sub.mod.Trainer.step") == (mod, "Trainer.step")
    assert set(proj.importers(mod)) == {(tmp_path / "src" / "pkg" / "other.py").resolve()}


def test_a_repository_of_namespace_packages_is_rooted_where_its_imports_resolve(tmp_path):
    """No marker and no ``__init__.py``: the root is where the file's dotted imports resolve, so
    the typed task hook of the trainer is followed into the other folder."""
    import shutil

    repo = tmp_path / "repo"
    src = PROJECTS / "typed_task_hook" / "speech"
    (repo / "utils" / "commons").mkdir(parents=True)
    for name in ("trainer.py", "base_task.py"):
        text = (src / name).read_text().replace("speech.base_task", "utils.commons.base_task")
        (repo / "utils" / "commons" / name).write_text(text)
    shutil.copy(src / "base_task.py", repo / "utils" / "commons" / "base_task.py")
    (repo / "scripts").mkdir()
    (repo / "scripts" / "plain.py").write_text("import os.path\n")
    base = repo / "utils" / "commons" / "base_task.py"
    assert find_root(repo / "utils" / "commons" / "trainer.py") == repo.resolve()
    assert find_root(repo / "scripts" / "plain.py") == (repo / "scripts").resolve()  # nothing resolves above
    Project._by_root.clear()
    assert {(d.code, d.location.row) for d in _lint_alone(base)} == {("AMP002", 14)}


def _lint_alone(f: Path):
    return lint_source(f.read_bytes(), str(f), select=["ALL"])


def test_module_files_are_found_from_the_walk_and_on_disk_past_it(tmp_path):
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("")
    (tmp_path / "pkg" / "both.py").write_text("")
    (tmp_path / "pkg" / "both").mkdir()
    (tmp_path / "pkg" / "both" / "__init__.py").write_text("")
    (tmp_path / "build").mkdir()  # skipped by the walk, still importable
    (tmp_path / "build" / "gen.py").write_text("")
    proj = Project(tmp_path.resolve())
    assert proj.path_of("pkg.mod") == (tmp_path / "pkg" / "mod.py").resolve()
    assert proj.path_of("pkg.both") == (tmp_path / "pkg" / "both.py").resolve()  # the module before the package
    assert proj.path_of("pkg.missing") is None
    assert proj.path_of("build.gen") == (tmp_path / "build" / "gen.py").resolve()
    other = tmp_path.parent / (tmp_path.name + "-outside")
    other.mkdir()
    (other / "lib.py").write_text("")
    (tmp_path / "linked").symlink_to(other, target_is_directory=True)
    proj = Project(tmp_path.resolve())  # a linked folder the walk does not enter: looked up on disk
    assert proj.path_of("linked.lib") == (other / "lib.py").resolve()
    assert proj.path_of("pkg.mod") == (tmp_path / "pkg" / "mod.py").resolve()


def test_relative_import_beyond_the_top_is_not_resolved(tmp_path):
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "a.py").write_text("from ...nowhere import x\n")
    proj = Project(tmp_path.resolve())
    assert proj.absolute((tmp_path / "a.py").resolve(), "...nowhere.x") is None
    assert proj.imports_of((tmp_path / "a.py").resolve()) == set()


def test_cached_results_follow_an_edit_in_another_module(tmp_path):
    """A file's cached result depends on the modules around it: fixing the caller (trainer.py)
    clears the helper's AMP001 although optim_utils.py itself is unchanged."""
    import shutil

    project = tmp_path / "proj"
    shutil.copytree(PROJECTS / "helper_clip", project)
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")

    def lint() -> set[tuple[str, str, int]]:
        proc = subprocess.run([sys.executable, "-m", "amplint", "--cache-dir", str(cache), "--select", "ALL",
                               "--output-format", "json", "."], capture_output=True, text=True, cwd=project, env=env)
        assert proc.returncode in (0, 1), proc.stderr
        return {(Path(d["filename"]).relative_to(project).as_posix(), d["code"], d["location"]["row"])
                for d in json.loads(proc.stdout)}

    first = lint()
    assert ("pkg/trainer.py", "AMP002", 14) in first and ("pkg/optim_utils.py", "AMP001", 10) in first
    assert lint() == first  # from the cache
    trainer = project / "pkg" / "trainer.py"
    text = trainer.read_text()
    fixed = text.replace("        clip_gradients(model, max_norm)  # error: AMP002\n        step_optimizer(scaler, optimizer)\n",
                         "        scaler.unscale_(optimizer)\n        clip_gradients(model, max_norm)\n"
                         "        step_optimizer(scaler, optimizer)\n        scaler.update()\n")
    assert fixed != text
    trainer.write_text(fixed)
    after = lint()
    assert ("pkg/trainer.py", "AMP002", 14) not in after
    assert ("pkg/optim_utils.py", "AMP001", 10) not in after
    assert ("pkg/optim_utils.py", "AMP005", 14) in after  # the other caller still unscales twice


@pytest.mark.parametrize("text", [
    b"x.Scaler.step(", b"sCaLeR.update()", b"s.unscale_ (opt)", b"p.grad\n", b"p.gradient", b"nothing",
    b"my_scaler_obj . scale(", b"ShardedGradScaler", b"Scaler.Step(", b"unscale_ = 1", b"loss.backward()",
    b"model.half()", b"torch.float16", b"torch.save(x)", b"opt.zero_grad()",
])
def test_protocol_evidence_shortcut_is_the_regex(text):
    from amplint.project import PROTOCOL_EVIDENCE, has_protocol_evidence

    assert has_protocol_evidence(text) == bool(PROTOCOL_EVIDENCE.search(text))


@pytest.mark.parametrize("text", [
    b"x.Scaler.step(", b"sCaLeR.update()", b"s.unscale_ (opt)", b"GradScaler()", b"ShardedGradScaler (x)",
    b"# scaler.step(opt)\n", b"GradScaler", b"SCALER_X . unscale_(", b"opt.step()", b"nothing", b"s.unscale_",
    b"my_scaler.scale (loss)", b"ScAlEr9.step\n(", b"grad_scaler = None  # GradScaler()\n",
])
def test_scaler_code_shortcut_is_the_regex(text):
    from amplint.project import _COMMENT, _SCALER, has_scaler_code

    assert has_scaler_code(text) == bool(_SCALER.search(_COMMENT.sub(b"", text)))


def test_a_function_whose_wrapped_header_closes_at_column_0_is_read_whole(tmp_path):
    # black and ruff format write ``) -> None:`` at column 0: the body after it was cut off, so a
    # helper that saves or clips looked like one without evidence
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "utils.py").write_text(
        "import torch\n\n\ndef save_checkpoint(\n        state: dict,\n        path: str,\n) -> None:\n"
        "    torch.save(state, path)\n\n\ndef other(\n    x,\n):\n    return x\n")
    proj = Project(tmp_path.resolve())
    utils = (tmp_path / "utils.py").resolve()
    assert proj.may_matter(utils, "save_checkpoint")
    assert not proj.may_matter(utils, "other")


def test_a_class_matters_through_its_bases_as_the_text_places_them(tmp_path):
    (tmp_path / "setup.py").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(
        "class Base:\n    def step(self, scaler, opt, loss):\n        scaler.scale(loss).backward()\n"
        "        scaler.step(opt)\n\n\nclass Plain:\n    pass\n")
    (pkg / "models.py").write_text(
        "import torch.nn as nn\nfrom typing import Generic\nfrom .base import Base as B, Plain\nfrom .star import *\n\n\n"
        "class Net(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "class Trainer(\n    B,  # the protocol is in the base\n    metaclass=type,\n):\n    pass\n\n\n"
        "class Local(Trainer):\n    pass\n\n\nclass Quiet(Plain, Generic[int]):\n    pass\n\n\n"
        "class Starred(FromStar):\n    pass\n\n\nclass Made(make_base()):\n    pass\n\n\n"
        "class Loop1(Loop2):\n    pass\n\n\nclass Loop2(Loop1):\n    pass\n")
    proj = Project(tmp_path.resolve())
    models = (pkg / "models.py").resolve()
    assert not proj.may_matter(models, "Net")  # a base from outside the project brings nothing
    assert proj.may_matter(models, "Trainer")  # aliased import, multi-line header, keyword left out
    assert proj.may_matter(models, "Local")  # through a class of its own module
    assert not proj.may_matter(models, "Quiet")  # a project base without evidence, a typing helper
    assert proj.may_matter(models, "Starred")  # bound by a star import: not placed from the text
    assert proj.may_matter(models, "Made")  # an expression
    assert proj.may_matter(models, "Loop1") and proj.may_matter(models, "Loop2")


def test_module_code_alone_in_the_protocol_reads_no_importer_flow(tmp_path):
    # yolov5's models/yolo.py: only its ``if __name__ == "__main__":`` code reaches protocol code
    # (a profiling helper that runs a backward). Importers cannot call module code, so their
    # training flows (seconds each) show nothing in it and are not computed.
    (tmp_path / "setup.py").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(
        "def profile(model, x):\n    y = model(x)\n    y.sum().backward()\n    return y\n")
    (pkg / "models.py").write_text(
        "import torch\nfrom .utils import profile\n\n\nclass Net(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n\n\nif __name__ == '__main__':\n"
        "    profile(Net(), torch.randn(2, 2))\n")
    (pkg / "train.py").write_text(
        "import torch\nfrom .models import Net\n\n\ndef train(loader):\n    model = Net()\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    scaler = torch.amp.GradScaler('cuda')\n"
        "    for x in loader:\n        scaler.scale(model(x).sum()).backward()\n        scaler.step(opt)\n"
        "        scaler.update()\n")
    from amplint.project import ModelCache, ProjectLink

    proj = Project(tmp_path.resolve())
    cache = ModelCache()
    models = (pkg / "models.py").resolve()
    model = cache.model(proj, models)
    assert [f.name for f in model.relevant_functions()] == ["<module>"]
    model.observations("backward")
    assert (pkg / "train.py").resolve() not in model.project.consulted
    assert isinstance(model.project, ProjectLink)
