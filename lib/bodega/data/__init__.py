"""Task data: BODEGA's TSV format and converters from each corpus's published format."""
from bodega.data.tsv import Example, read_tsv, write_tsv, escape_text, unescape_text

SPLITS = ("train", "attack", "dev")

__all__ = ["Example", "read_tsv", "write_tsv", "escape_text", "unescape_text", "SPLITS"]
