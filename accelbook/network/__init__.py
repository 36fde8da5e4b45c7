"""The network layer: how chips are joined, how far apart they are, what a collective costs.

Modules, from the graph up:

- ``graph``: :class:`~accelbook.network.graph.Topology`, a graph in CSR form with link figures;
- ``builders``: textbook networks (ring, torus/mesh, full mesh, switch, fat tree, dragonfly,
  BoardFly, TPU pods of OCS-joined cubes, GPU clusters on InfiniBand rails);
- ``systems``: real systems with published link figures (``data/fabrics.toml``): HGX H100,
  H100 clusters, TPU slices, axes and multislices; ``PRESETS``;
- ``geometry``: closed forms for tori (axes a group spans, distances, diameter, all-to-all load);
- ``paths``: hop statistics and link loads (Numba kernels beside their wrappers);
- ``bisection``: links across the halving cut, counted and by the textbook;
- ``collectives``: alpha-beta costs of collectives, the ring formulas the training and inference
  kernels call, the algorithm NCCL would pick;
- ``validation``: the collective model against published measurements;
- ``topology``: every public name above in one place (``from accelbook.network import topology as tp``;
  also ``accelbook.topology``).
"""
