"""Diagnostics, fixes and edits (ruff's shapes; 1-based rows and columns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DOCS_URL = "https://github.com/amplint/amplint/blob/main/docs/rules/{code}.md"

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    row: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"column": self.column, "row": self.row}


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``location`` and ``end_location`` with ``content``."""

    content: str
    location: Location
    end_location: Location

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "end_location": self.end_location.to_json(), "location": self.location.to_json()}


@dataclass(frozen=True)
class Fix:
    applicability: str  # "safe" | "unsafe"
    message: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"applicability": self.applicability, "edits": [e.to_json() for e in self.edits], "message": self.message}


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    filename: str
    location: Location
    end_location: Location
    noqa_row: int | None = None
    fix: Fix | None = None
    cell: int | None = None  # notebooks: 1-based cell index
    severity: str = "error"
    extra: tuple = field(default=(), compare=False)

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
        )
