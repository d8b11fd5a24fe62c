"""Build shared/regrag/data/national_titles.tsv, the catalogue the citation check tells an invented law by.

Source: the public repository LawRefBook/Laws (a git directory, e.g. what `fetch github:LawRefBook/Laws` brings):
its `db.sqlite3` lists every national law (法律), the Constitution (宪法) and every administrative regulation (行政法规)
it holds, with the date of the version held and whether it has expired; and the texts of those laws and regulations
name other national laws and regulations (repealed ones among them: 民法典 repeals 合同法 and 物权法 by name), which
are added with the title of the first text that names them. Only titles a national law or administrative regulation
can bear are kept (ending in 法, 法典 or 条例, no place name first, no Party or military prefix:
`regrag.check.catalogue.is_national_form`).

Usage: python bench/make_national_titles.py /work/.mirror/LawRefBook+Laws/repo [COMMIT]
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from regrag.check.catalogue import CATALOGUE_PATH, is_national_form
from regrag.text.relations import title_key, titles_in

_LEVELS = ("宪法", "法律", "行政法规")
_FOLDERS_SKIPPED = ("DLC/", "案例/", "司法解释/", "部门规章/", "scripts/", ".github/")


def _git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True).stdout


def main(repo: str, commit: str = "HEAD") -> None:
    commit = _git(repo, "rev-parse", commit).decode().strip()
    date = _git(repo, "show", "-s", "--format=%cs", commit).decode().strip()
    rows: dict[str, tuple[str, str, str, str]] = {}  # key → (title, level, date, origin)
    with tempfile.NamedTemporaryFile(suffix=".sqlite3") as tmp:
        tmp.write(_git(repo, "show", f"{commit}:db.sqlite3"))
        tmp.flush()
        db = sqlite3.connect(tmp.name)
        query = "select name, level, publish, expired from law where level in (?, ?, ?) order by publish"
        for name, level, publish, expired in db.execute(query, _LEVELS):
            key = title_key(name)
            origin = "db:expired" if expired else "db"
            rows[key] = (key, level, publish or "", origin)  # the latest version's date wins (ordered by date)
    names = [
        n
        for n in _git(repo, "ls-tree", "-r", "--name-only", "-z", commit).decode().split("\0")
        if n.endswith(".md") and not n.startswith(_FOLDERS_SKIPPED)
    ]
    for path in sorted(names):
        text = _git(repo, "show", f"{commit}:{path}").decode("utf-8", errors="replace")
        source = re.sub(r"\(\d{4}-\d{2}-\d{2}\)$", "", path.rsplit("/", 1)[-1].removesuffix(".md"))
        for named in titles_in(text):
            key = title_key(named)
            if key not in rows and is_national_form(key) and "《" not in key:
                rows[key] = (key, "", "", f"named:{source}")
    header = [
        "# Titles of Chinese national laws (法律, 宪法) and administrative regulations (行政法规), as title keys",
        "# (regrag.text.relations.title_key: no 中华人民共和国 prefix, brackets or trailing parenthesis).",
        f"# Source: LawRefBook/Laws (https://github.com/LawRefBook/Laws), commit {commit} ({date}): db.sqlite3",
        "# (origin db, db:expired) and titles its national law and regulation texts name (origin named:<text>).",
        "# Licence: the repository declares none; the list holds only titles of laws and regulations, which are",
        "# official documents outside copyright protection (著作权法 第五条). Rebuild: bench/make_national_titles.py.",
        f"# as_of\t{date}",
        "# title_key\tlevel\tlatest_version\torigin",
    ]
    body = ["\t".join(rows[k]) for k in sorted(rows)]
    CATALOGUE_PATH.write_text("\n".join(header + body) + "\n", encoding="utf-8")
    print(f"{len(body)} titles ({sum(1 for r in rows.values() if r[3].startswith('db'))} from db) → {CATALOGUE_PATH}")


if __name__ == "__main__":
    main(*sys.argv[1:])
