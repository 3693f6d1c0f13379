"""Tensor parallelism in the dry run (lesson 11's lab): the stand-in has one pretend GPU, so
it runs TP 1 only and refuses more GPUs with the error vLLM 0.26.0 raises on a one-GPU machine
(vllm/config/parallel.py: ParallelConfig.__post_init__). Like stand_in.py, it shares no code
with the lessons."""

GPUS = 1  # the stand-in torch's torch.cuda.device_count()


def check(options: dict) -> None:
    world_size = options.get("tensor_parallel_size") or 1
    if world_size > GPUS:
        raise ValueError(
            f"World size ({world_size}) is larger than the number of available GPUs ({GPUS})"
            " in this node. If this is intentional and you are using:\n- ray, set"
            " '--distributed-executor-backend ray'.\n- multiprocessing, set '--nnodes'"
            " appropriately.")
