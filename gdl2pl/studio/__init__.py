"""gdl2pl studio: a web playground for GDL served on this machine (``gdl2pl studio``).

Edit a game on the left, see on the right its findings, its Prolog, its dependency graph,
a board to play on, why an atom holds or not, the well-formedness report and the minimal
model of a plain program. The page is static HTML/CSS/JS in this package; every answer
comes from a JSON endpoint over gdl2pl's Python API (``docs/studio.md`` lists them).

Importing this package imports nothing beyond the standard library: ``create_app`` (in
``gdl2pl.studio.app``) needs the ``studio`` extra (Starlette and uvicorn).
"""
