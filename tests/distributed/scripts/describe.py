"""init() twice, then the job as each rank sees it, after a barrier; then a broadcast
whose ranks disagree on the shape, which raises on the rank receiving too little
instead of writing past its buffer."""
import numpy as np

import jitflow
import jitflow.distributed as dist

dist.init()
world = dist.communicator()
dist.init()
assert dist.communicator() is world
dist.barrier()
print(f"rank {dist.rank()} of {dist.size()}, local rank {dist.local_rank()} of "
      f"{dist.local_size()}", flush=True)

jitflow.config.background_compile = False
too_long = np.ones(8 if dist.rank() == 0 else 4, np.float32)
for run in (dist.broadcast, jitflow.function(dist.broadcast)):
    try:
        result = run(too_long)
        assert dist.rank() == 0 and (result == 1).all()
    except Exception as error:
        assert dist.rank() != 0, error
        print(f"rank {dist.rank()} mismatch raised {type(error).__name__}: {error}")
    dist.barrier()
print(f"rank {dist.rank()} done")
