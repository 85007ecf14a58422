"""Independent Python/numpy reference implementation ("oracle") of the dpointnet
forward model, written from /work/shared/spec/MODEL.md and SONATA.md only."""
