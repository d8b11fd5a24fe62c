"""A Memo as a Word document (python-docx): a title, headings, paragraphs with real hyperlinks, quotes set off
from the text (indented, with their line breaks), tables with a header row; Chinese in 宋体 and Latin text in
Times New Roman, the fonts Chinese legal memos use, so that Word shows no fallback font."""

from __future__ import annotations

import io

from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from docx.text.paragraph import Paragraph as DocxParagraph

from regrag.ops.exports.memo import Heading, Link, Memo, Paragraph, Quote, Rule, Table

_CHINESE_FONT = "宋体"
_LATIN_FONT = "Times New Roman"
_LINK_COLOR = RGBColor(0x1F, 0x4E, 0x9A)


def to_docx(memo: Memo) -> bytes:
    """The .docx bytes of `memo`."""
    document = Document()
    _fonts(document)
    document.core_properties.title = memo.title
    document.core_properties.author = "regrag"
    document.add_heading(memo.title, level=0)
    for block in memo.blocks:
        if isinstance(block, Heading):
            document.add_heading(block.text, level=min(max(block.level, 1), 4))
        elif isinstance(block, Paragraph):
            _paragraph(document.add_paragraph(), block)
        elif isinstance(block, Quote):
            _quote(document, block)
        elif isinstance(block, Table):
            _table(document, block)
        elif isinstance(block, Rule):
            document.add_paragraph("—" * 20).alignment = WD_ALIGN_PARAGRAPH.CENTER
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _fonts(document: object) -> None:
    for name in ("Normal", "Title", "Heading 1", "Heading 2", "Heading 3", "Heading 4"):
        style = document.styles[name]  # type: ignore[attr-defined]
        style.font.name = _LATIN_FONT
        fonts = style.element.get_or_add_rPr().get_or_add_rFonts()
        fonts.set(qn("w:eastAsia"), _CHINESE_FONT)
    document.styles["Normal"].font.size = Pt(11)  # type: ignore[attr-defined]


def _paragraph(target: DocxParagraph, block: Paragraph) -> None:
    if block.label:
        target.add_run(block.label).bold = True
    for part in block.parts:
        if isinstance(part, Link):
            _hyperlink(target, part)
        else:
            run = target.add_run(part)
            if block.small:
                run.font.size = Pt(9)


def _quote(document: object, block: Quote) -> None:
    """The quote's own paragraph: indented, its line breaks kept (python-docx writes "\\n" as a line break)."""
    paragraph = document.add_paragraph()  # type: ignore[attr-defined]
    paragraph.paragraph_format.left_indent = Pt(21)
    paragraph.paragraph_format.space_after = Pt(4)
    if block.number is not None:
        paragraph.add_run(f"{block.number}. ").bold = True
    paragraph.add_run(block.text)


def _table(document: object, block: Table) -> None:
    table = document.add_table(rows=1, cols=len(block.header))  # type: ignore[attr-defined]
    table.style = "Table Grid"
    for cell, text in zip(table.rows[0].cells, block.header, strict=True):
        cell.text = ""
        cell.paragraphs[0].add_run(text).bold = True
    for row in block.rows:
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text


def _hyperlink(paragraph: DocxParagraph, link: Link) -> None:
    """A clickable link (python-docx reads hyperlinks but has no call to write one: the w:hyperlink element)."""
    rel = paragraph.part.relate_to(link.url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    element = OxmlElement("w:hyperlink")
    element.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    color = OxmlElement("w:color")
    color.set(qn("w:val"), str(_LINK_COLOR))
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    props.append(color)
    props.append(underline)
    run.append(props)
    text = OxmlElement("w:t")
    text.text = link.text
    text.set(qn("xml:space"), "preserve")
    run.append(text)
    element.append(run)
    paragraph._p.append(element)
