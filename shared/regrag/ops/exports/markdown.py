"""A Memo as Markdown (CommonMark with GFM tables): quotes as block quotes, each line of the quote after "> "
and otherwise untouched (no escaping: the characters are the regulation's); table cells with their pipes and
line breaks escaped, which a table needs to stay a table."""

from __future__ import annotations

from regrag.ops.exports.memo import Heading, Link, Memo, Paragraph, Quote, Rule, Table


def to_markdown(memo: Memo) -> str:
    out = [f"# {memo.title}", ""]
    for block in memo.blocks:
        if isinstance(block, Heading):
            out += [f"{'#' * min(block.level + 1, 6)} {block.text}", ""]
        elif isinstance(block, Paragraph):
            out += [_paragraph(block), ""]
        elif isinstance(block, Quote):
            if block.number is not None:
                out.append(f"**{block.number}.**")
                out.append("")
            out += [f"> {line}" if line else ">" for line in block.text.split("\n")]
            out.append("")
        elif isinstance(block, Table):
            out += _table(block)
            out.append("")
        elif isinstance(block, Rule):
            out += ["---", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _paragraph(block: Paragraph) -> str:
    text = "".join(f"[{p.text}](<{p.url}>)" if isinstance(p, Link) else p for p in block.parts)
    return f"**{block.label}**{text}" if block.label else text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _table(block: Table) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in block.header) + " |", "|" + "---|" * len(block.header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
    return lines
