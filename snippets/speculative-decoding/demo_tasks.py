"""Two generations to watch speculation on, words standing for tokens: a rewriting task,
whose answer copies its prompt with one word changed, and a free-writing one, whose
answer repeats little. The target's greedy answer is given; run_task runs it through
spec_scheduler.py with n-gram drafts."""

from spec_scheduler import Request, SpecStats, SpecStep, run

END = "<end>"
TASKS = {
    "edit": (
        "copy , with lay for sat : the dog sat on the mat and the cat sat on the rug .",
        "the dog lay on the mat and the cat sat on the rug .",
    ),
    "free": (
        "write one line about the sea :",
        "the sea keeps its old songs , and the gulls answer the wind with new ones .",
    ),
}
K_MOST = 8  # the most drafts the component offers


def vocabulary(task: str) -> list[str]:
    """The task's words, each once, in order of first use: a word's token id is its
    index."""
    prompt, answer = TASKS[task]
    return list(dict.fromkeys(prompt.split() + answer.split() + [END]))


def run_task(
    task: str, k: int, min_n: int, max_n: int
) -> tuple[list[SpecStep], SpecStats, list[str]]:
    """The steps and counters of the task's generation, and its vocabulary."""
    if task not in TASKS:
        raise ValueError(f"no task {task!r}: the tasks are {', '.join(TASKS)}")
    if not 1 <= k <= K_MOST:
        raise ValueError(f"k must be from 1 to {K_MOST}, got {k}")
    words = vocabulary(task)
    prompt, answer = (text.split() for text in TASKS[task])
    request = Request(
        task,
        [words.index(w) for w in prompt],
        [words.index(w) for w in answer + [END] * k],
        max_tokens=len(answer),
    )
    steps, stats = run([request], k, min_n, max_n)
    return steps, stats, words


if __name__ == "__main__":
    print("task   k  steps  drafted  accepted  acceptance  tokens/step")
    for task in TASKS:
        for k in (1, 3, 5):
            steps, stats, _ = run_task(task, k, 2, 4)
            rate = stats.num_accepted_tokens / stats.num_draft_tokens
            tokens = len(TASKS[task][1].split())
            print(
                f"{task:<5} {k:>2} {len(steps):>6} {stats.num_draft_tokens:>8}"
                f" {stats.num_accepted_tokens:>9} {rate:>10.1%}"
                f" {tokens / len(steps):>12.2f}"
            )
