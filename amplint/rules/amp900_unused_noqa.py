from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule


class UnusedNoqa(Rule):
    """## What it does
    Checks for `# noqa` comments that name amplint codes (`# noqa: AMP002`) which no longer
    suppress anything: the finding was fixed, the code moved, or the rule is not enabled. File
    level `# amplint: noqa: CODE` comments are checked the same way. Comments that only name
    other tools' codes (`# noqa: E501`) and bare `# noqa` are left alone: they may serve another
    linter.

    The finding is reported on the comment.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line: someone adds a clip before
    `unscale_` to a line that still says `# noqa: AMP002`, and nobody is told. ruff's RUF100 is
    the model for this check.

    ## Example
    ```python
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # noqa: AMP002
    ```

    ## Use instead
    ```python
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    ```

    ## Known problems
    Off by default, like ruff's RUF100: turn it on with `--extend-select AMP900` once the code
    base is clean. A code suppressed only under another configuration (a different `select`) is
    reported as unused under this one.

    ## Fix safety
    The fix deletes the unused codes from the comment, and the whole comment when nothing else
    is left in it. It is safe: the comment suppresses nothing.

    ## References
    - [ruff RUF100 unused-noqa](https://docs.astral.sh/ruff/rules/unused-noqa/)
    """

    code = "AMP900"
    name = "unused-noqa"
    message = "Unused `noqa` directive (unused: {codes})"
    fix_title = "Remove the unused codes"
    fix_availability = "always"
    default_enabled = False
    triggers = ("noqa",)
    reported_on = "the `# noqa` comment"

    def check(self, model) -> Iterable[Finding]:
        # Computed by the engine after suppression (it needs to know what every comment
        # suppressed); nothing to read from the model.
        return ()
