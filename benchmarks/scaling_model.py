"""Predicted data-parallel scaling beyond this machine: the communication cost model of
the gradient all-reduce, applied to the digits convnet and a transformer at 8, 64 and
512 processes on a 100 Gb/s network (docs/DISTRIBUTED.md explains it).

Each step, every process computes its gradients (time `compute`), then all-reduces
them (B bytes; jitflow makes one call per fused buffer of up to 64 MiB). On N processes:

    ring all-reduce:          2 (N - 1) latency + 2 (N - 1) / N x B / bandwidth
    Rabenseifner (MPICH's     2 log2(N) latency + 2 (N - 1) / N x B / bandwidth
      long-message algorithm)

each per buffer for the latency term. The step does not overlap communication with the
backward pass, so efficiency = compute / (compute + all-reduce).

    python benchmarks/scaling_model.py
"""
import math

BANDWIDTH = 100e9 / 8  # bytes/s of each process's link: 100 Gb/s
LATENCY = 5e-6  # s per message step: an assumed figure for a 100 Gb/s fabric with MPI
FUSION_BYTES = 64 * 2 ** 20  # jitflow.distributed.FUSION_BYTES
PROCESSES = (8, 64, 512)

# Measured here (AMD EPYC, 2 cores, one jitflow thread per process), by
# benchmarks/bench_distributed.py: the convnet's 1-process step, batch 64.
CONVNET = {"gradient_bytes": 54_824, "compute": 1 / 458.8}

# A transformer encoder of 6 layers, d_model 512, feed-forward 2048, a vocabulary of
# 8000, trained on 8 sequences of 128 tokens per process: 12 d^2 weights a layer plus
# the embedding; its step takes about 6 x parameters x tokens FLOPs, here at the
# 25 GFLOP/s jitflow's float32 matmul reaches on one core of this machine.
D, LAYERS, VOCABULARY, TOKENS, FLOPS = 512, 6, 8000, 8 * 128, 25e9
TRANSFORMER_PARAMETERS = LAYERS * 12 * D * D + VOCABULARY * D
TRANSFORMER = {"gradient_bytes": 4 * TRANSFORMER_PARAMETERS,
               "compute": 6 * TRANSFORMER_PARAMETERS * TOKENS / FLOPS}


def all_reduce_seconds(nbytes, processes, latency_steps):
    buffers = max(1, math.ceil(nbytes / FUSION_BYTES))
    moved = 2 * (processes - 1) / processes * nbytes / BANDWIDTH
    return buffers * latency_steps * LATENCY + moved


def ring(nbytes, processes):
    return all_reduce_seconds(nbytes, processes, 2 * (processes - 1))


def rabenseifner(nbytes, processes):
    return all_reduce_seconds(nbytes, processes, 2 * math.log2(processes))


def efficiency(model, processes, algorithm):
    return model["compute"] / (model["compute"] + algorithm(model["gradient_bytes"],
                                                            processes))


def _pair(model, processes):
    return (f"{efficiency(model, processes, ring):.1%} / "
            f"{efficiency(model, processes, rabenseifner):.1%}")


def main():
    print(f"100 Gb/s links, {LATENCY * 1e6:.0f} us per message step, no overlap of "
          f"communication with the backward pass")
    print(f"{'model':<34} {'gradients':>10} {'compute':>9} |"
          + "".join(f" {f'N={n} ring / Rab.':>20}" for n in PROCESSES))
    for name, model in (("digits convnet (batch 64)", CONVNET),
                        (f"transformer ({TRANSFORMER_PARAMETERS / 1e6:.1f}M params)",
                         TRANSFORMER)):
        cells = "".join(" " + _pair(model, n).rjust(20) for n in PROCESSES)
        print(f"{name:<34} {model['gradient_bytes'] / 1e6:8.2f}MB "
              f"{model['compute'] * 1e3:7.1f}ms |{cells}")


if __name__ == "__main__":
    main()
