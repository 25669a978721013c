"""The op table (design.md §4): `registry` plus one module per op family."""
