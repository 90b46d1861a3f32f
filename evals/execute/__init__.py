"""Running an item: its environment, its executor (importing this package registers every
executor), the runner's retries and classification, and the session that stores a run."""

from evals.execute import conversation, executors  # noqa: F401
