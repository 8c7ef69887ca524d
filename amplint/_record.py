"""A tiny record base class: what ``@dataclass`` gives, without its start-up cost.

``dataclasses`` generates and ``exec``-s code for every class it decorates (about a
millisecond each); the command line imports a dozen such classes before it looks at a file,
which was a fifth of a one-file run. Records declare ``__slots__`` (their fields, in order)
and ``_defaults``; a default that is a :class:`Factory` is called per instance.
"""

from __future__ import annotations

from typing import Any, Callable


class Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Record:
    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()  # the constructor's parameters, in order (usually == __slots__)
    _defaults: dict[str, Any] = {}
    _compare: tuple[str, ...] | None = None  # fields for ==, < and hash (default: all)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = type(self)._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} arguments")
        setattr_ = object.__setattr__
        for name, value in zip(fields, args):
            setattr_(self, name, value)
        defaults = self._defaults
        for name in fields[len(args):]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in defaults:
                value = defaults[name]
                if isinstance(value, Factory):
                    value = value.make()
            else:
                raise TypeError(f"{type(self).__name__} missing argument {name!r}")
            setattr_(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {sorted(kwargs)}")

    def _key(self) -> tuple:
        names = self._compare if self._compare is not None else type(self)._fields
        return tuple(getattr(self, n) for n in names)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()  # type: ignore[attr-defined]

    def __lt__(self, other: "Record") -> bool:
        return self._key() < other._key()

    def __le__(self, other: "Record") -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: "Record") -> bool:
        return self._key() > other._key()

    def __ge__(self, other: "Record") -> bool:
        return self._key() >= other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self)._fields)
        return f"{type(self).__name__}({inner})"

    def _replace(self, **changes: Any) -> "Record":
        values = {n: getattr(self, n) for n in type(self)._fields}
        values.update(changes)
        return type(self)(**values)

    def __reduce__(self):
        return (type(self), tuple(getattr(self, n) for n in type(self)._fields))
