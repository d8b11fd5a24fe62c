"""How the package's word lists and tables (data/*.tsv, *.txt) are read: one reader, so that every file skips
blank lines and # comments alike, and a malformed row is an error that names its file and line instead of a word
that silently never matches."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Row:
    """One data line of a file: its cells (split on tabs) and where it stands, for the error that names it."""

    file: str
    line: int
    cells: tuple[str, ...]

    def error(self, expected: str) -> ValueError:
        shown = "\t".join(self.cells)
        return ValueError(f"{self.file} line {self.line}: expected {expected}: {shown!r}")


def read(name: str) -> str:
    """The text of data/`name`."""
    return resources.files("regrag.data").joinpath(name).read_text(encoding="utf-8")


def rows(name: str, columns: int, *, optional: int = 0, text: str | None = None) -> list[Row]:
    """The data lines of data/`name` (or of `text`, read as that file): neither blank nor a # comment, each split
    on tabs into `columns` cells, of which the last `optional` may be left off (read as ""). A line with more cells
    or fewer is an error naming it."""
    found = []
    for n, line in enumerate((read(name) if text is None else text).splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = tuple(line.split("\t"))
        if not columns - optional <= len(cells) <= columns:
            raise Row(name, n, cells).error(f"{columns} tab-separated cells")
        found.append(Row(name, n, cells + ("",) * (columns - len(cells))))
    return found
