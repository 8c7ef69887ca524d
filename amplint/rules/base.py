"""What a rule is.

A rule is a small class that reads facts from the per-file :class:`~amplint.model.AmpModel`
and yields :class:`Finding` s.  Rule modules must not import LibCST or the model at import
time: the CLI imports every rule to build its prefilter, and a file without AMP tokens must
be linted without paying for LibCST.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Iterable

from .._record import Factory, Record

if TYPE_CHECKING:  # pragma: no cover

    from ..model import AmpModel

SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Known problems",
    "Fix safety",
    "References",
)


class NodeEdit(Record):
    """A source edit expressed on the tree; the engine turns it into a text :class:`Edit`.

    kind:
      ``replace``        replace ``node``'s text with ``text``;
      ``insert_before``  insert the line ``text`` before statement ``node``, at its indentation;
      ``insert_after``   insert the line ``text`` after statement ``node``, at its indentation;
      ``delete_stmt``    delete the statement line ``node``.
    """

    __slots__ = _fields = ("kind", "node", "text")
    _defaults = {"text": ""}
    kind: str
    node: Any
    text: str


class FixPlan(Record):
    __slots__ = _fields = ("applicability", "message", "edits")
    applicability: str  # "safe" | "unsafe"
    message: str
    edits: list[NodeEdit]


class Finding(Record):
    __slots__ = _fields = ("node", "message", "stmt", "fix", "extra", "related")
    _defaults = {"message": None, "stmt": None, "fix": None, "extra": Factory(dict), "related": ()}
    node: Any  # the CST node the diagnostic points at
    message: str | None  # None: the rule's default message
    stmt: Any  # the statement the node belongs to (noqa may sit on its last line)
    fix: FixPlan | None
    extra: dict
    #: other places that explain the finding: ``(node, message)`` in this file, or
    #: ``(filename, (row, col), (end_row, end_col), message)`` in another one
    related: tuple


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    fix_title: ClassVar[str | None] = None
    fix_availability: ClassVar[str] = "none"  # "none" | "sometimes" | "always"
    default_enabled: ClassVar[bool] = True
    #: "error" (the run is broken or silently wrong), "warning", or "info" (style, no runtime
    #: effect); shown as the SARIF level and the GitHub annotation kind
    severity: ClassVar[str] = "error"
    #: names of trigger patterns (see :mod:`amplint.prefilter`); a file matching none of them
    #: cannot produce a finding of this rule.
    triggers: ClassVar[tuple[str, ...]] = ("scaler",)
    #: a predicate of :mod:`amplint.screen` (on CPython's AST) that must hold for the rule to
    #: fire; None: the byte triggers are the only precondition
    screen: ClassVar[str | None] = None
    #: also run on a file without its triggers that project code with a GradScaler imports (a
    #: helper it hands the scaler to, a loss function it calls under autocast); every rule
    #: triggered by ``scaler`` does
    runs_when_reached: ClassVar[bool] = False
    #: the line a finding is reported on, in words (for docs)
    reported_on: ClassVar[str] = ""

    def __init__(self, options: "Any" = None) -> None:
        self.options = options

    def check(self, model: "AmpModel") -> Iterable[Finding]:  # pragma: no cover - interface
        raise NotImplementedError

    # --- documentation ---------------------------------------------------------------

    @classmethod
    def doc(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        text = cls.doc()
        parts = re.split(r"^## (.+)$", text, flags=re.M)
        out: dict[str, str] = {}
        for i in range(1, len(parts), 2):
            out[parts[i].strip()] = parts[i + 1].strip()
        return out

    @classmethod
    def summary(cls) -> str:
        sections = cls.doc_sections()
        first = sections.get("What it does", "").split("\n\n", 1)[0]
        return " ".join(first.split())


def finding_at_call(site: Any, message: str | None = None, fix: FixPlan | None = None) -> Finding:
    return Finding(node=site.node, message=message, stmt=site.stmt, fix=fix)
