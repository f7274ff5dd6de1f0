"""The handouts' generated blocks, one module per handout and a shared core (scripts/docs_gen.py
gathers them for cog as `g`)."""
