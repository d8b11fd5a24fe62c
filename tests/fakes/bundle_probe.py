"""Run one staged function bundle (build/<fn>/) as Cloud Functions would: only what it ships, only what its
requirements.txt installs.

    python -S bundle_probe.py <site-packages> <bundle dir> <function> <request.json>

`-S` keeps site's .pth files (the editable install of regrag among them) out, so `regrag` can only come from
the bundle. An import hook then refuses any module whose file belongs to an installed distribution outside
the closure of the bundle's requirements.txt (its pins plus their dependencies, recursively): a function
that imports a library its requirements.txt does not bring fails here exactly as it would on GCP.

The request is either {"cloudevent": {"attributes": …, "data": …}}, {"json": …} (an HTTP POST) or {"get": path}.
Prints one JSON line: status, content type, body, and the Google client modules the run loaded.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.metadata as md
import io
import json
import re
import sys
from pathlib import Path


def requirement_names(path: Path) -> list[str]:
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[=<>!~\[; ]", line, maxsplit=1)[0])
    return names


def closure(names: list[str]) -> set[str]:
    """The distributions pip installs for `names`: their requirements, with requested extras, recursively."""
    from packaging.requirements import Requirement

    def key(name: str) -> str:
        return name.lower().replace("_", "-")

    seen: set[tuple[str, str]] = set()
    todo: list[tuple[str, str]] = [(key(n), "") for n in names]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        for raw in md.requires(name) or []:
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": extra}):
                todo.append((key(req.name), ""))
                todo.extend((key(req.name), e) for e in req.extras)
    return {name for name, _ in seen}


class Blocker(importlib.abc.MetaPathFinder):
    """Refuses modules that live in a distribution the bundle does not install."""

    def __init__(self, allowed: set[str], site: str) -> None:
        self.site = str(Path(site).resolve())
        self.owner: dict[str, str] = {}
        for dist in md.distributions():
            name = dist.metadata["Name"].lower().replace("_", "-")
            for file in dist.files or []:
                self.owner[str(Path(dist.locate_file(file)).resolve())] = name
        self.allowed = allowed
        self.refused: list[str] = []

    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or spec.origin in ("namespace", "built-in", "frozen"):
            return None
        origin = str(Path(spec.origin).resolve())
        if not origin.startswith(self.site):
            return None  # the standard library or the bundle itself
        owner = self.owner.get(origin)
        if owner is not None and owner not in self.allowed:
            self.refused.append(f"{fullname} ({owner})")
            raise ImportError(f"{fullname} is in {owner}, which this function's requirements.txt does not install")
        return None


def response_text(response) -> str:  # type: ignore[no-untyped-def]
    """Text as text; a file (a .docx export) as its size: bytes in a JSON line would not survive splitlines()."""
    data = response.get_data()
    textual = response.mimetype.startswith("text/") or response.mimetype.endswith(("json", "xml"))
    return data.decode("utf-8") if textual else f"<{len(data)} bytes>"


def main() -> None:
    site, bundle, function, request_path = sys.argv[1:5]
    sys.path[:] = [bundle, *[p for p in sys.path if p], site]
    blocker = Blocker(closure(requirement_names(Path(bundle) / "requirements.txt")), site)
    sys.meta_path.insert(0, blocker)
    from functions_framework import create_app

    import regrag

    assert Path(regrag.__file__).resolve().is_relative_to(Path(bundle).resolve()), regrag.__file__
    client = create_app(target=function, source=str(Path(bundle) / "main.py")).test_client()
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    if "cloudevent" in request:
        from cloudevents.conversion import to_structured
        from cloudevents.http import CloudEvent

        event = CloudEvent(request["cloudevent"]["attributes"], request["cloudevent"]["data"])
        headers, body = to_structured(event)
        response = client.post("/", headers=headers, data=body)
    elif "upload" in request:  # multipart/form-data: {"path", "upload": {"field", "name", "file"}}
        upload = request["upload"]
        data = {upload["field"]: (io.BytesIO(Path(upload["file"]).read_bytes()), upload["name"])}
        response = client.post(request.get("path", "/"), data=data, content_type="multipart/form-data")
    elif "get" in request:  # {"get": "/path?query"}
        response = client.get(request["get"])
    else:
        response = client.post(request.get("path", "/"), json=request["json"])
    loaded = sorted({m for m in sys.modules if m.startswith(("google.cloud.", "google.genai")) and m.count(".") <= 2})
    print(
        json.dumps(
            {
                "status": response.status_code,
                "content_type": response.content_type,
                "body": response_text(response),
                "loaded": loaded,
                "refused": blocker.refused,
            },
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
