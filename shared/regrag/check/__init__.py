"""The citation check: find every regulation reference in a lawyer's document and check it against the stored
text of the law in force on the document's date (references → titles → verify → report)."""
