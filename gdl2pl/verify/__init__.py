"""Cross-checking engines against gdl2pl: verify, first divergences, parallel runs."""
