"""The handouts' generated blocks, one module per handout and a shared core (docs/gen/g.py
gathers them for cog as `g`)."""
