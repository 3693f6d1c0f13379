"""What lesson 8 says of vLLM 0.26.0 that the claims test does not read: the V2 runner's
CUDA graph estimate of 0 and the V1 runner's real one, the environment variable that
picks the runner, the compilation modes, the `-cc.<field>=<value>` spelling, and the
flags of `vllm bench startup` that bench_startup.sh passes."""

import ast
import re

from coursekit import ROOT
from coursekit import vllm_source as vllm

PAGES = [ROOT / f"docs/lessons/startup-memory.{lang}.md" for lang in ("zh", "en")]
BENCH = ROOT / "snippets/startup-memory/bench_startup.sh"


def _method(src, relative, cls, name) -> ast.FunctionDef:
    tree = ast.parse((src / relative).read_text("utf-8"))
    owner = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls)
    return next(n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _returns_zero(function: ast.FunctionDef) -> bool:
    body = [n for n in function.body if not isinstance(n, ast.Expr)]
    return len(body) == 1 and ast.unparse(body[0]) == "return 0"


def test_the_v2_runner_estimates_no_graph_memory_and_the_v1_runner_does(vllm_src):
    v2 = _method(vllm_src, "vllm/v1/worker/gpu/model_runner.py", "GPUModelRunner",
                 "profile_cudagraph_memory")
    v1 = _method(vllm_src, "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner",
                 "profile_cudagraph_memory")
    assert _returns_zero(v2) and not _returns_zero(v1)
    for page in PAGES:
        text = page.read_text("utf-8")
        assert "#49224" in text and "#50159" in text and "VLLM_USE_V2_MODEL_RUNNER=0" in text


def test_the_runner_variable_defaults_to_vllms_choice(vllm_src):
    envs = (vllm_src / "vllm/envs.py").read_text("utf-8")
    assert "VLLM_USE_V2_MODEL_RUNNER: bool | None = None" in envs
    assert 'os.getenv("VLLM_USE_V2_MODEL_RUNNER", None)' in envs


def test_the_modes_the_page_lists_are_vllms(vllm_src):
    tree = ast.parse((vllm_src / "vllm/config/compilation.py").read_text("utf-8"))
    members = {cls.name: [t.id for n in cls.body if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Name)]
               for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)}
    assert members["CompilationMode"] == [
        "NONE", "STOCK_TORCH_COMPILE", "DYNAMO_TRACE_ONCE", "VLLM_COMPILE"]
    assert members["CUDAGraphMode"] == [
        "NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"]
    for page in PAGES:
        text = page.read_text("utf-8")
        # the page lists them in a text block (VLLM_COMPILE in prose would read as an
        # environment variable to the claims test)
        listed = re.findall(r"^(\w+) = (\d)", text, re.MULTILINE)
        assert listed == [(m, str(i)) for i, m in enumerate(members["CompilationMode"])]
        assert "`FULL_DECODE_ONLY`" in text


def test_dotted_compilation_options_are_fields_vllm_parses(vllm_src):
    # FlexibleArgumentParser.parse_args turns -cc.a=b into -cc '{"a": b}'
    parser = (vllm_src / "vllm/utils/argparse_utils.py").read_text("utf-8")
    assert 'processed_arg.startswith("-") and "." in processed_arg' in parser
    assert '"--compilation-config", "-cc"' in (vllm_src / "vllm/engine/arg_utils.py").read_text()
    tree = ast.parse((vllm_src / "vllm/config/compilation.py").read_text("utf-8"))
    config = next(n for n in ast.walk(tree)
                  if isinstance(n, ast.ClassDef) and n.name == "CompilationConfig")
    fields = {n.target.id for n in config.body if isinstance(n, ast.AnnAssign)}
    quoted = {key for page in PAGES
              for key in re.findall(r"-cc\.(\w+)=", page.read_text("utf-8"))}
    assert {"max_cudagraph_capture_size", "cudagraph_capture_sizes"} <= quoted
    assert quoted <= fields, quoted - fields


def test_bench_startup_takes_the_flags_the_lab_passes(vllm_src):
    cli = (vllm_src / "vllm/entrypoints/cli/benchmark/startup.py").read_text("utf-8")
    assert 'name = "startup"' in cli
    bench = {flag for _call, named in vllm._added_flags(vllm_src, "vllm/benchmarks/startup.py")
             for flag in named}
    assert {"--num-iters-cold", "--num-iters-warmup", "--num-iters-warm",
            "--output-json"} <= bench
    # the rest are EngineArgs flags (add_cli_args ends with EngineArgs.add_cli_args)
    passed = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", BENCH.read_text("utf-8")))
    assert passed <= bench | vllm.serve_flags(vllm_src), passed - bench


def test_every_flag_the_pages_name_is_one_of_vllms(vllm_src):
    """The claims test reads `vllm serve` and `vllm bench serve` flags only; the pages
    also quote `vllm bench startup`'s (vllm/benchmarks/startup.py: add_cli_args)."""
    startup = {flag for _call, named in vllm._added_flags(
        vllm_src, "vllm/benchmarks/startup.py") for flag in named}
    known = startup | vllm.serve_flags(vllm_src) | vllm.bench_flags(vllm_src)
    for page in PAGES:
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", page.read_text("utf-8")))
        assert named <= known, (page.name, named - known)
