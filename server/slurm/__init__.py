"""server/slurm/: the course server's jobs on a Slurm cluster (backend.py), and a one-node
cluster for the tests and for trying it on one machine (cluster.sh). README.md says how."""
from .backend import SlurmBackend, SlurmError, make_backend  # noqa: F401
