"""`npm run new-lesson` creates a lesson that builds and passes the tests right away."""

import shutil
import subprocess
import sys

import pytest

from pages import ROOT


@pytest.fixture
def course_copy(repo_copy):
    shutil.copytree(ROOT / "tests", repo_copy / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "requirements-gpu.txt", repo_copy)
    return repo_copy


def new_lesson(root, *arguments):
    return subprocess.run([sys.executable, "tests/new_lesson.py", *arguments], cwd=root,
                          capture_output=True, text=True)


def test_new_lesson_builds_and_passes_the_tests(course_copy):
    result = new_lesson(course_copy, "paged-attention", "PagedAttention：分页的 KV 缓存",
                        "PagedAttention: a paged KV cache")
    assert result.returncode == 0, result.stderr
    assert (course_copy / "docs/lessons/paged-attention.zh.md").is_file()
    assert "lessons/paged-attention.md" in (course_copy / "mkdocs.yml").read_text("utf-8")

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
         "tests/test_guards.py::test_course_passes", "tests/test_snippets.py",
         "tests/test_build.py", "tests/test_translations.py::test_notice_shown_exactly_on_stale_pages"],
        cwd=course_copy, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-3000:]
    for language in ("zh", "en"):
        assert f"docs/lessons/paged-attention.{language}.md" in tests.stdout  # its snippet ran


@pytest.mark.parametrize(("arguments", "message"), [
    (("Paged Attention", "中文", "English"), "is not a slug"),
    (("kv-cache", "中文", "English"), "exists already"),
    (("new-one", "中文", " "), "both titles are needed"),
])
def test_bad_arguments_are_named(course_copy, arguments, message):
    result = new_lesson(course_copy, *arguments)
    assert result.returncode != 0 and message in result.stderr
    assert "Traceback" not in result.stderr
