"""What leaves the product for a memo: an answer, a document's versions diff or a citation-check report, as
.docx (python-docx) or Markdown, from one neutral layout (memo.py) that both writers render."""
