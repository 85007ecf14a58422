"""Independent Python/numpy reference implementation ("oracle") of the dpointnet
forward model, written from the model specification only (now docs/model.md; "MODEL.md
section N" in this package's docstrings is section N there) and the SONATA conventions of
BMTK PointNet (see docs/simulation.md), without reading the C++ sources."""
