"""The op table (architecture.md §4): `registry` plus one module per op family."""
