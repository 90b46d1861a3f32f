"""One run over many machines, on Ray: shards of items that share a context go to a worker
per node, which owns that node's harness and runs the same runner code; finished items stream
back to the driver, the one writer of the artifact and the run store."""

from evals.execute.cluster.driver import (
    ClusterError,
    ClusterPlan,
    Figures,
    check_address,
    cluster_runner,
    run_on_cluster,
)
from evals.execute.cluster.shards import Shard, shards_of

__all__ = ["ClusterError", "ClusterPlan", "Figures", "Shard", "check_address",
           "cluster_runner", "run_on_cluster", "shards_of"]
