"""init() twice, then the job as each rank sees it, after a barrier."""
import jitflow.distributed as dist

dist.init()
world = dist.communicator()
dist.init()
assert dist.communicator() is world
dist.barrier()
print(f"rank {dist.rank()} of {dist.size()}, local rank {dist.local_rank()} of "
      f"{dist.local_size()}", flush=True)
print(f"rank {dist.rank()} done")
