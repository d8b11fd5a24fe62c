"""Versioned prompts, shipped as package data and loaded by name: `load_prompt("rerank_v1")`.

A prompt is a file `<name>_v<version>.md` in this folder. A released file is never edited: a change is a new
version, so the name, version and sha256 logged with each model call say exactly which text was sent. In a
file, lines `## <section>` open sections (`## system`, `## user`); the text before the first one describes
the prompt and is never sent. Templates use `$placeholders` (string.Template), so JSON braces need no escaping.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from string import Template

_FILE = re.compile(r"^(?P<name>[a-z][a-z0-9_]*?)_v(?P<version>\d+)\.(?:md|txt)$")
_SECTION = re.compile(r"^## +(?P<title>\S.*?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    """One prompt file: `name` ("rerank"), `version` (1), the whole `text` and its `sha256` (hex)."""

    name: str
    version: int
    text: str
    sha256: str

    @property
    def key(self) -> str:
        """The name it is loaded by: "rerank_v1"."""
        return f"{self.name}_v{self.version}"

    def sections(self) -> dict[str, str]:
        """{section title: its text, stripped}, in file order."""
        heads = list(_SECTION.finditer(self.text))
        out = {}
        for i, head in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(self.text)
            out[head.group("title")] = self.text[head.end() : end].strip()
        return out

    def section(self, title: str) -> str:
        """One section's text; KeyError names the prompt if the file lacks it."""
        found = self.sections()
        if title not in found:
            raise KeyError(f"prompt {self.key} has no '## {title}' section (has {sorted(found)})")
        return found[title]

    def template(self, title: str, placeholders: set[str]) -> Template:
        """A section as a string.Template; ValueError when it lacks one of `placeholders` (so a bad prompt
        fails when the app is built, not on the first call)."""
        template = Template(self.section(title))
        missing = placeholders - set(template.get_identifiers())
        if missing:
            raise ValueError(f"prompt {self.key} lacks ${', $'.join(sorted(missing))} in its {title} section")
        return template


def _files() -> dict[str, tuple[str, int, str]]:
    """{key: (name, version, file name)} for every prompt file in the package."""
    out = {}
    for entry in resources.files(__name__).iterdir():
        match = _FILE.match(entry.name)
        if match:
            name, version = match.group("name"), int(match.group("version"))
            out[f"{name}_v{version}"] = (name, version, entry.name)
    return out


def load_prompt(name: str) -> Prompt:
    """The prompt `name`: an exact key ("rerank_v1"), or a bare name ("rerank") for its latest version."""
    files = _files()
    if name not in files:
        versions = [v for v in files.values() if v[0] == name]
        if not versions:
            raise KeyError(f"no prompt {name!r}; available: {sorted(files)}")
        name = f"{name}_v{max(v[1] for v in versions)}"
    base, version, file_name = files[name]
    data = resources.files(__name__).joinpath(file_name).read_bytes()
    return Prompt(base, version, data.decode("utf-8"), hashlib.sha256(data).hexdigest())


def list_prompts() -> list[Prompt]:
    """Every prompt file, by name then version (for the admin listing)."""
    return [load_prompt(key) for key, _ in sorted(_files().items(), key=lambda kv: kv[1][:2])]
