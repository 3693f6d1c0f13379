"""A stand-in for torch 2.11.0 built for CUDA 13.0, for the dry run of the GPU job: torch.cuda
sees a pretend RTX 4090. Like the stand-in for vLLM, it works only in the dry run
(GPU_LAB_DRY_RUN=1) and refuses to load where a real NVIDIA GPU is present."""

import os
from types import SimpleNamespace

GPU_DEVICE_FILES = ("/dev/nvidia0", "/proc/driver/nvidia/version")


def _refuse_unless_dry_run():
    if os.environ.get("GPU_LAB_DRY_RUN") != "1":
        raise ImportError("this is the stand-in for torch of the course's dry run"
                          " (tests/stand_in_vllm), not torch: it loads only with GPU_LAB_DRY_RUN=1")
    present = [path for path in GPU_DEVICE_FILES if os.path.exists(path)]
    if present:
        raise ImportError(f"the stand-in for torch refuses to load: a real NVIDIA GPU is present"
                          f" ({present[0]}); install the real torch")


_refuse_unless_dry_run()

__version__ = "2.11.0+cu130"
version = SimpleNamespace(cuda="13.0")
cuda = SimpleNamespace(
    is_available=lambda: True,
    device_count=lambda: 1,
    get_device_name=lambda device=0: "NVIDIA GeForce RTX 4090 (stand-in, dry run)",
    get_device_capability=lambda device=0: (8, 9),
)
