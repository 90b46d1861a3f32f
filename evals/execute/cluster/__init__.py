"""One run over many machines, on Ray: shards of items that share a context go to a worker
per node, which owns that node's harness and runs the same runner code; finished items stream
back to the driver, the one writer of the artifact and the run store."""

from evals.execute.cluster.driver import Figures, cluster_runner, run_on_cluster
from evals.execute.cluster.plan import ClusterError, ClusterPlan, check_address
from evals.execute.cluster.shards import Shard, shards_of
from evals.execute.cluster.transport import RayTransport, Transport

__all__ = ["ClusterError", "ClusterPlan", "Figures", "RayTransport", "Shard", "Transport",
           "check_address", "cluster_runner", "run_on_cluster", "shards_of"]
