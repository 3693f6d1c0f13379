"""vLLM's own source, read from the pinned release wheel (downloaded once, cached, never imported).

Each function returns one kind of fact that the pages may quote: LLM(...) keywords, `vllm serve`
flags, environment variables, log message formats and defaults; and, from the wheel's
METADATA and its compiled extensions, what it requires (Python, torch) and which CUDA runtime it
links.
"""

from __future__ import annotations

import ast
import email.message
import email.parser
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path

from coursekit import ROOT

# sha256 of vllm-0.26.0-cp38-abi3-manylinux_2_28_x86_64.whl as published on PyPI.
WHEEL_SHA256 = "adb1e4c9b46d0dfdb094121ae5aad670a42412dd813ed4e5db069ed6a15006de"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "llm-course"
# .ci/setup's conformance venv: the pinned wheel on PyTorch's CPU build. The conformance tests
# run vLLM's side there, and lesson code that needs packages (coursekit/code.py: requirements)
# runs there too.
CONFORMANCE_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"


def run_in_conformance_venv(driver: Path, given):
    """A driver's answer (JSON on its stdout) to `given` (JSON on its stdin), run by the
    conformance venv's Python in the driver's folder."""
    if not CONFORMANCE_PYTHON.exists():
        raise RuntimeError(f"no conformance venv at {CONFORMANCE_PYTHON.parent.parent}: run .ci/setup"
                           " (npm test runs it) to install PyTorch's CPU build and the pinned vLLM wheel there")
    done = subprocess.run([CONFORMANCE_PYTHON, driver], input=json.dumps(given), capture_output=True,
                          text=True, cwd=driver.parent)
    if done.returncode:
        raise RuntimeError(f"{driver.name} exited with status {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def pinned_version() -> str:
    """The vLLM version the GPU labs install (requirements-gpu.txt)."""
    text = (ROOT / "requirements-gpu.txt").read_text("utf-8")
    return re.search(r"^vllm==([\w.]+)$", text, re.M)[1]


# What is kept of the wheel besides vllm/*.py: its METADATA, and the shared libraries that its
# compiled extensions (vllm/*.so) link, one per line.
LINKED = "linked-libraries.txt"


def wheel() -> Path:
    """The pinned release wheel, downloaded with pip into the cache the first time and checked
    against its published sha256. The conformance venv installs it (.ci/setup)."""
    version = pinned_version()
    CACHE.mkdir(parents=True, exist_ok=True)
    for found in CACHE.glob(f"vllm-{version}-*.whl"):
        if hashlib.sha256(found.read_bytes()).hexdigest() == WHEEL_SHA256:
            return found
        found.unlink()
    with tempfile.TemporaryDirectory(dir=CACHE) as download:
        pip = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps",
             "--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--quiet",
             "--disable-pip-version-check", "-d", download],
            capture_output=True, text=True,
        )
        wheels = list(Path(download).glob("vllm-*.whl"))
        if pip.returncode or not wheels:
            raise RuntimeError(f"could not download the vllm=={version} wheel:\n{pip.stderr}")
        digest = hashlib.sha256(wheels[0].read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            raise RuntimeError(f"{wheels[0].name} has sha256 {digest}, expected {WHEEL_SHA256}")
        return wheels[0].replace(CACHE / wheels[0].name)


def source_dir() -> Path:
    """The wheel's vllm/ sources (and METADATA, LINKED), extracted from wheel() the first time,
    and again when a cache made by an older version of this function lacks a file."""
    version = pinned_version()
    target = CACHE / f"vllm-{version}"
    if (target / ".complete").exists() and (target / LINKED).exists() and _metadata_path(
            target, version).exists():
        return target
    with zipfile.ZipFile(wheel()) as archive:
        linked = set()
        for name in archive.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                archive.extract(name, target)
            elif name == f"vllm-{version}.dist-info/METADATA":
                archive.extract(name, target)
            elif name.startswith("vllm/") and name.endswith(".so"):
                linked |= set(elf_needed(archive.read(name)))
    (target / LINKED).write_text("".join(f"{name}\n" for name in sorted(linked)))
    (target / ".complete").write_text(version)
    return target


def _metadata_path(src: Path, version: str) -> Path:
    return src / f"vllm-{version}.dist-info" / "METADATA"


def elf_needed(data: bytes) -> list[str]:
    """The DT_NEEDED entries (linked shared libraries) of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + index * shentsize)
                for index in range(shnum)]
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 6:  # SHT_DYNAMIC
            continue
        strings = sections[link][4]
        needed = []
        for start in range(offset, offset + size, entsize):
            tag, value = struct.unpack_from("<qQ", data, start)
            if tag == 0:  # DT_NULL
                break
            if tag == 1:  # DT_NEEDED
                end = data.index(b"\0", strings + value)
                needed.append(data[strings + value:end].decode())
        return needed
    return []


@cache
def metadata(src: Path) -> email.message.Message:
    """The wheel's METADATA (core metadata: Requires-Python, Requires-Dist, ...)."""
    text = _metadata_path(src, src.name.removeprefix("vllm-")).read_text("utf-8")
    return email.parser.Parser().parsestr(text)


def requires_python(src: Path) -> str:
    """e.g. `<3.15,>=3.10`."""
    return metadata(src)["Requires-Python"]


def requires(src: Path) -> dict[str, str]:
    """Unconditional requirements (no extra, no marker): name -> version specifier."""
    found = {}
    for requirement in metadata(src).get_all("Requires-Dist") or []:
        if ";" in requirement:
            continue
        match = re.match(r"([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*(.*)$", requirement)
        found[match[1].lower().replace("_", "-")] = match[2].strip()
    return found


def linked_libraries(src: Path) -> list[str]:
    """The shared libraries the wheel's compiled extensions link, e.g. libcudart.so.13."""
    return (src / LINKED).read_text("utf-8").split()


def cuda_major(src: Path) -> int:
    """The CUDA major version of the runtime the wheel links (libcudart.so.N)."""
    majors = {int(name.rsplit(".", 1)[1]) for name in linked_libraries(src)
              if re.fullmatch(r"libcudart\.so\.\d+", name)}
    if len(majors) != 1:
        raise ValueError(f"the wheel links CUDA runtimes {sorted(majors)}, not exactly one")
    return majors.pop()


@cache
def _tree(src: Path, relative: str) -> ast.Module:
    return ast.parse((src / relative).read_text("utf-8"))


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                and node.name == name)


def _fields(cls: ast.ClassDef) -> dict[str, ast.expr | None]:
    return {node.target.id: node.value for node in cls.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def _literal(node):
    """A default as Python value; unwraps Field(default=...)."""
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("Field", "field"):
        node = next((kw.value for kw in node.keywords if kw.arg == "default"), None)
    return ast.literal_eval(node) if node is not None else None


@cache
def llm_init_defaults(src: Path) -> dict[str, object]:
    init = next(node for node in _class(_tree(src, "vllm/entrypoints/llm.py"), "LLM").body
                if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    arguments = init.args
    names = [arg.arg for arg in arguments.args + arguments.kwonlyargs if arg.arg != "self"]
    defaults = [None] * (len(arguments.args) - len(arguments.defaults)) + arguments.defaults
    values = dict(zip([a.arg for a in arguments.args], defaults))
    values.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)})
    return {name: _safe_literal(values.get(name)) for name in names}


def _safe_literal(node):
    try:
        return _literal(node)
    except ValueError:
        return ast.unparse(node)


@cache
def engine_args(src: Path) -> set[str]:
    """LLM(**kwargs) passes every other keyword on to EngineArgs."""
    return set(_fields(_class(_tree(src, "vllm/engine/arg_utils.py"), "EngineArgs")))


@cache
def llm_keywords(src: Path) -> set[str]:
    return set(llm_init_defaults(src)) | engine_args(src)


@cache
def sampling_params(src: Path) -> set[str]:
    return set(_fields(_class(_tree(src, "vllm/sampling_params.py"), "SamplingParams")))


@cache
def serve_flags(src: Path) -> set[str]:
    """Engine flags are string literals in add_argument calls; server flags are derived from
    the fields of the frontend argument classes (entrypoints/openai/cli_args.py). A boolean
    flag also has its --no- form (argparse.BooleanOptionalAction): given as action=, or made
    by get_kwargs for an EngineArgs field typed bool (arg_utils.py: _compute_kwargs)."""
    flags = set()
    engine = _class(_tree(src, "vllm/engine/arg_utils.py"), "EngineArgs")
    types = {node.target.id: ast.unparse(node.annotation) for node in engine.body
             if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    for relative in ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py"):
        for call, named in _added_flags(src, relative):
            flags |= named
            if _boolean(call, types):
                flags |= {"--no-" + flag[2:] for flag in named}
    cli_args = _tree(src, "vllm/entrypoints/openai/cli_args.py")
    for cls in (node for node in cli_args.body if isinstance(node, ast.ClassDef)):
        if cls.name.endswith("FrontendArgs"):
            flags |= {"--" + name.replace("_", "-") for name in _fields(cls)}
    return flags


@cache
def bench_flags(src: Path) -> set[str]:
    """The flags of `vllm bench serve`: string literals in the add_argument calls of its
    parser (vllm/benchmarks/serve.py: add_cli_args) and of the datasets it reads
    (vllm/benchmarks/datasets/datasets.py: add_dataset_parser)."""
    return {flag for relative in ("vllm/benchmarks/serve.py", "vllm/benchmarks/datasets/datasets.py")
            for _call, named in _added_flags(src, relative) for flag in named}


def _added_flags(src: Path, relative: str):
    """Each add_argument call of a file, with the --flags it names as string literals."""
    for node in ast.walk(_tree(src, relative)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            yield node, {arg.value for arg in node.args if isinstance(arg, ast.Constant)
                         and isinstance(arg.value, str) and arg.value.startswith("--")}


def _boolean(call: ast.Call, types: dict[str, str]) -> bool:
    """Whether an add_argument call makes a BooleanOptionalAction flag."""
    for keyword in call.keywords:
        if keyword.arg == "action":
            return ast.unparse(keyword.value).endswith("BooleanOptionalAction")
        if keyword.arg is None:  # **kwargs["field"], or **{**kwargs["field"], ...}
            for node in ast.walk(keyword.value):
                field = getattr(getattr(node, "slice", None), "value", None)
                if isinstance(node, ast.Subscript) and field in types:
                    return re.fullmatch(r"bool( \| None)?", types[field]) is not None
    return False


@cache
def env_vars(src: Path) -> set[str]:
    tree = _tree(src, "vllm/envs.py")
    mapping = next(node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                   and getattr(node.target, "id", "") == "environment_variables")
    return {key.value for key in mapping.keys if isinstance(key, ast.Constant)}


@cache
def cache_config_defaults(src: Path) -> dict[str, object]:
    cls = _class(_tree(src, "vllm/config/cache.py"), "CacheConfig")
    defaults = {name: _safe_literal(value) for name, value in _fields(cls).items()}
    if defaults.get("block_size") is None:
        # block_size: Field(default=None) is filled in with CacheConfig.DEFAULT_BLOCK_SIZE.
        defaults["block_size"] = defaults["DEFAULT_BLOCK_SIZE"]
    defaults["kv_cache_dtype"] = defaults["cache_dtype"]  # the LLM/CLI name of cache_dtype
    return defaults


@cache
def _config_classes(src: Path) -> dict[str, ast.ClassDef]:
    return {node.name: node for path in sorted((src / "vllm/config").glob("*.py"))
            for node in ast.parse(path.read_text("utf-8")).body if isinstance(node, ast.ClassDef)}


def _engine_default(src: Path, option: str):
    """EngineArgs defaults are literals or references such as `ModelConfig.max_model_len`."""
    value = _fields(_class(_tree(src, "vllm/engine/arg_utils.py"), "EngineArgs"))[option]
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        value = _fields(_config_classes(src)[value.value.id])[value.attr]
    return _literal(value)


def default(src: Path, option: str):
    """vLLM's default for an LLM(...) keyword, as resolved when it is not set (block_size:
    16); KeyError when no rule here knows it."""
    init = llm_init_defaults(src)
    if option in init:
        return init[option]
    cache_config = cache_config_defaults(src)
    if option in cache_config:
        return cache_config[option]
    return _engine_default(src, option)


def declared_default(src: Path, option: str):
    """The default an LLM(...) keyword or `vllm serve` flag declares (EngineArgs' field,
    e.g. block_size: None), before vLLM resolves it; KeyError when no rule here knows it."""
    init = llm_init_defaults(src)
    if option in init:
        return init[option]
    return _engine_default(src, option)


def declared_defaults(src: Path, option: str) -> list:
    """The values a page may give as an option's default: what it declares and what it
    resolves to (block_size: None, which is 16)."""
    values = []
    for rule in (declared_default, default):
        try:
            value = rule(src, option)
        except KeyError:
            continue
        if value not in values:
            values.append(value)
    if not values:
        raise KeyError(option)
    return values


# Options whose accepted values a page may list, and the Literal type in vllm/config/cache.py.
CHOICES = {"kv_cache_dtype": "CacheDType"}


@cache
def choices(src: Path, option: str) -> list[str]:
    tree = _tree(src, "vllm/config/cache.py")
    literal = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", "") == CHOICES[option])
    return [element.value for element in literal.slice.elts]


@cache
def _texts(src: Path) -> dict[Path, str]:
    return {path: path.read_text("utf-8") for path in sorted(src.rglob("*.py"))}


def files_containing(src: Path, text: str) -> list[Path]:
    return [path for path, source in _texts(src).items() if text in source]


@cache
def log_formats(path: Path) -> list[str]:
    """Every string constant in one vLLM source file that a log line may come from: a %-format,
    or a message of several words printed as it is (a line must then equal it)."""
    return [node.value for node in ast.walk(ast.parse(path.read_text("utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and ("%" in node.value or node.value.count(" ") >= 2)]


def format_regex(log_format: str) -> re.Pattern:
    """`GPU KV cache size: %s tokens` -> a regex matching what logging prints for it."""
    parts = re.split(r"(%[-+ #0]*\d*(?:\.\d+)?[sdfgx])", log_format)
    pattern = "".join(
        (r"-?\d+" if part.endswith("d") else r"-?[\d.]+" if part[-1] in "fg" else r".+?")
        if index % 2 else re.escape(part)
        for index, part in enumerate(parts)
    )
    return re.compile(pattern + "$")


def _defined(tree: ast.AST, name: str) -> ast.AST | None:
    """The function, class or assigned name `name` directly in a module or class body."""
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return node
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(getattr(target, "id", None) == name for target in targets):
            return node
    return None


def definition_problem(src: Path, relative: str, name: str) -> str | None:
    """None when vllm/<path>.py defines the dotted name (a function, class, method or
    attribute); otherwise what is missing."""
    if not (src / relative).is_file():
        return f"vLLM {pinned_version()} has no {relative}"
    node = _tree(src, relative)
    for part in name.split("."):
        node = _defined(node, part)
        if node is None:
            return f"{relative} defines no {name}"
    return None


@cache
def metrics(src: Path) -> set[str]:
    """The Prometheus metrics vLLM's loggers export (vllm/v1/metrics/loggers.py), by name,
    and the spec-decode counters they export through SpecDecodingProm
    (vllm/v1/spec_decode/metrics.py: named in its counter_specs tuples or as name=)."""
    loggers = (src / "vllm/v1/metrics/loggers.py").read_text("utf-8")
    spec = (src / "vllm/v1/spec_decode/metrics.py").read_text("utf-8")
    return (set(re.findall(r'name="(vllm:[a-z0-9_]+)"', loggers + spec))
            | set(re.findall(r'"(vllm:[a-z0-9_]+_info)"', loggers))
            | set(re.findall(r'\(\s*"(vllm:[a-z0-9_]+)",', spec)))


# -- which model runner a model gets -----------------------------------------------------------

# The early returns of VllmConfig.use_v2_model_runner (vllm/config/vllm.py), in order: each
# test as the wheel writes it, and how this rule reads it. The tests on the engine's options
# are read as a course lab leaves them (VLLM_USE_V2_MODEL_RUNNER unset, no speculative
# decoding, Triton installed with vLLM's CUDA wheel, no option the V2 runner lacks): not taken.
# The two on the model are decided from its config.json (model_runner). When vLLM decides
# otherwise than this list reads, the rule refuses to decide instead of guessing.
V2_GATES = (
    ("use_v2_model_runner is not None", "option"),
    ("self.speculative_config is not None and self.speculative_config.method == 'dspark'",
     "option"),
    ("self._dflash_needs_multi_kv_group()", "option"),
    ("self.model_config is not None and self.model_config.is_diffusion", "diffusion"),
    ("not self._is_default_v2_model_runner_model()", "default model"),
    ("not HAS_TRITON", "option"),
    ("unsupported", "option"),
)
# The tests of VllmConfig._is_default_v2_model_runner_model before its return, and the return.
DEFAULT_MODEL_GATES = (
    "model_config is None",
    "model_config.runner_type != 'generate'",
    "getattr(model_config, 'is_hybrid', False)",
    "getattr(model_config, 'is_attention_free', False)",
)
DEFAULT_MODEL_RETURN = (
    "any((arch in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES for arch in architectures))"
    " or not model_config.is_moe")


def _method(src: Path, relative: str, owner: str, name: str) -> ast.FunctionDef:
    node = _defined(_defined(_tree(src, relative), owner), name)
    if not isinstance(node, ast.FunctionDef):
        raise ValueError(f"{relative} defines no method {owner}.{name}")
    return node


def _if_tests(function: ast.FunctionDef) -> list[str]:
    return [ast.unparse(node.test) for node in function.body if isinstance(node, ast.If)]


def _refuse(where: str, found, expected) -> ValueError:
    return ValueError(f"{where} no longer decides as coursekit/vllm_source.py reads it: "
                      f"{found!r}, expected {expected!r}; update model_runner")


@cache
def _v2_architectures(src: Path) -> frozenset[str]:
    node = _defined(_tree(src, "vllm/config/vllm.py"), "DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES")
    return frozenset(ast.literal_eval(node.value.args[0]))


@cache
def _expert_fields(src: Path) -> tuple[str, ...]:
    """The config.json fields whose value vLLM takes for a model's number of experts
    (ModelArchConfigConvertorBase.get_num_experts): a model with one is a mixture of experts."""
    method = next(node for node in ast.walk(_tree(
        src, "vllm/transformers_utils/model_arch_config_convertor.py"))
        if isinstance(node, ast.FunctionDef) and node.name == "get_num_experts")
    names = next(node.value for node in method.body if isinstance(node, ast.Assign)
                 and ast.unparse(node.targets[0]) == "num_expert_names")
    return tuple(ast.literal_eval(names))


def _model_class_bases(src: Path, architecture: str) -> set[str]:
    """The base classes of the class vLLM's model registry maps an architecture to."""
    registry = _tree(src, "vllm/model_executor/models/registry.py")
    for node in ast.walk(registry):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if getattr(key, "value", None) == architecture and isinstance(value, ast.Tuple):
                    module, name = ast.literal_eval(value)
                    cls = _defined(_tree(src, f"vllm/model_executor/models/{module}.py"), name)
                    return {ast.unparse(base) for base in cls.bases}
    raise ValueError(f"vLLM's model registry has no {architecture}")


def model_runner(src: Path, config: dict) -> str:
    """"V2" or "V1": the GPU model runner vLLM gives a model with this config.json when the lab
    leaves the engine's options alone (VllmConfig.use_v2_model_runner, read, never run)."""
    prop = _method(src, "vllm/config/vllm.py", "VllmConfig", "use_v2_model_runner")
    tests = _if_tests(prop)
    if tests != [test for test, _ in V2_GATES]:
        raise _refuse("VllmConfig.use_v2_model_runner", tests, [test for test, _ in V2_GATES])
    diffusion = _method(src, "vllm/config/model.py", "ModelConfig", "is_diffusion")
    if "canvas_length" not in ast.unparse(diffusion.body[-1]):
        raise _refuse("ModelConfig.is_diffusion", ast.unparse(diffusion.body[-1]), "canvas_length")
    if config.get("canvas_length") is not None:
        return "V2"
    default = _method(src, "vllm/config/vllm.py", "VllmConfig", "_is_default_v2_model_runner_model")
    tests, last = _if_tests(default), ast.unparse(default.body[-1].value)
    if tests != list(DEFAULT_MODEL_GATES) or last != DEFAULT_MODEL_RETURN:
        raise _refuse("VllmConfig._is_default_v2_model_runner_model", (tests, last),
                      (DEFAULT_MODEL_GATES, DEFAULT_MODEL_RETURN))
    architectures = config.get("architectures") or []
    if not architectures or not all(a.endswith("ForCausalLM") for a in architectures):
        raise ValueError(f"no rule here reads the runner type of {architectures}")
    for architecture in architectures:  # runner_type is "generate" for a *ForCausalLM
        bases = _model_class_bases(src, architecture)
        if {"IsHybrid", "IsAttentionFree"} & bases:
            return "V1"
    is_moe = any(config.get(field) for field in _expert_fields(src))
    if any(a in _v2_architectures(src) for a in architectures) or not is_moe:
        return "V2"
    return "V1"


@cache
def runner_files(src: Path) -> dict[str, frozenset[str]]:
    """{"V1": files only the V1 runner runs, "V2": the V2 runner's files}. gpu_worker.py imports
    one GPUModelRunner or the other (Worker.init_device: if self.use_v2_model_runner); the V2
    runner is the package of its module; the V1 runner is its module and the worker modules it
    imports that no file of the V2 package imports."""
    worker = _tree(src, "vllm/v1/worker/gpu_worker.py")
    branch = next(node for node in ast.walk(worker) if isinstance(node, ast.If)
                  and ast.unparse(node.test) == "self.use_v2_model_runner"
                  and any(isinstance(n, ast.ImportFrom) for n in node.body))

    def runner(body) -> str:
        imported = next(n for n in body if isinstance(n, ast.ImportFrom))
        return imported.module.replace(".", "/") + ".py"

    v2_module, v1_module = runner(branch.body), runner(branch.orelse)
    v2_package = v2_module.rsplit("/", 1)[0]
    v2 = frozenset(path.relative_to(src).as_posix()
                   for path in (src / v2_package).rglob("*.py"))

    def worker_imports(relative: str) -> set[str]:
        return {node.module.replace(".", "/") + ".py" for node in ast.walk(_tree(src, relative))
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "vllm.v1.worker.") and (src / (node.module.replace(".", "/") + ".py")).is_file()}

    shared = set().union(*(worker_imports(relative) for relative in v2))
    v1 = {v1_module} | {path for path in worker_imports(v1_module)
                        if path not in v2 and path not in shared}
    return {"V1": frozenset(v1), "V2": v2}


if __name__ == "__main__":
    # `python -m coursekit.vllm_source wheel`: the pinned wheel's path, for .ci/setup.
    if sys.argv[1:] != ["wheel"]:
        sys.exit("usage: python -m coursekit.vllm_source wheel")
    print(wheel())
