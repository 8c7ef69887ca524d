"""Diagnostics, fixes and edits (ruff's shapes; 1-based rows and columns)."""

from __future__ import annotations

from typing import Any

from ._record import Record

DOCS_URL = "https://github.com/amplint/amplint/blob/main/docs/rules/{code}.md"

SAFE = "safe"
UNSAFE = "unsafe"


class Location(Record):
    __slots__ = _fields = ("row", "column")
    row: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"column": self.column, "row": self.row}


class Edit(Record):
    """Replace the text between ``location`` and ``end_location`` with ``content``."""

    __slots__ = _fields = ("content", "location", "end_location")
    content: str
    location: Location
    end_location: Location

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "end_location": self.end_location.to_json(), "location": self.location.to_json()}


class Fix(Record):
    __slots__ = _fields = ("applicability", "message", "edits")
    applicability: str  # "safe" | "unsafe"
    message: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"applicability": self.applicability, "edits": [e.to_json() for e in self.edits], "message": self.message}


class Related(Record):
    """Another place that explains a finding (the scaler's creation, the other module's call)."""

    __slots__ = _fields = ("filename", "location", "end_location", "message", "cell")
    _defaults = {"cell": None}
    filename: str
    location: Location
    end_location: Location
    message: str
    cell: int | None

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.cell, "end_location": self.end_location.to_json(), "filename": self.filename,
                "location": self.location.to_json(), "message": self.message}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Related":
        return cls(d["filename"], Location(**d["location"]), Location(**d["end_location"]), d["message"], d.get("cell"))


class Diagnostic(Record):
    __slots__ = _fields = (
        "code", "name", "message", "filename", "location", "end_location", "noqa_row", "fix", "cell", "severity",
        "related", "extra",
    )
    _defaults = {"noqa_row": None, "fix": None, "cell": None, "severity": "error", "related": (), "extra": ()}
    _compare = __slots__[:-1]
    code: str
    name: str
    message: str
    filename: str
    location: Location
    end_location: Location
    noqa_row: int | None
    fix: Fix | None
    cell: int | None  # notebooks: 1-based cell index
    severity: str  # "error" (fails the run) or "info" (reported only); see amplint.output
    related: tuple  # Related locations (SARIF relatedLocations, JSON "related", LSP relatedInformation)
    extra: tuple

    @property
    def url(self) -> str | None:
        if self.code.startswith("AMP") and self.code not in ("AMP000",):
            return DOCS_URL.format(code=self.code)
        return None

    def sort_key(self) -> tuple:
        return (self.filename, self.cell or 0, self.location.row, self.location.column, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "code": self.code,
            "end_location": self.end_location.to_json(),
            "filename": self.filename,
            "fix": self.fix.to_json() if self.fix is not None else None,
            "location": self.location.to_json(),
            "message": self.message,
            "name": self.name,
            "noqa_row": self.noqa_row,
            "related": [r.to_json() for r in self.related],
            "severity": self.severity,
            "url": self.url,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Diagnostic":
        fix = None
        if d.get("fix"):
            f = d["fix"]
            fix = Fix(
                f["applicability"],
                f["message"],
                tuple(
                    Edit(e["content"], Location(**e["location"]), Location(**e["end_location"])) for e in f["edits"]
                ),
            )
        return cls(
            severity=d.get("severity", "error"),
            code=d["code"],
            name=d["name"],
            message=d["message"],
            filename=d["filename"],
            location=Location(**d["location"]),
            end_location=Location(**d["end_location"]),
            noqa_row=d.get("noqa_row"),
            fix=fix,
            cell=d.get("cell"),
            related=tuple(Related.from_json(r) for r in d.get("related") or ()),
        )
