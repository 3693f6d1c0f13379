#!/usr/bin/env bash
# Pre-job hook of the RTX 4090 runner (ACTIONS_RUNNER_HOOK_JOB_STARTED): refuse every job
# except the GPU-lab workflow of this repository's main branch, started by an allowed event.
set -euo pipefail

repository="${COURSE_REPOSITORY:?set COURSE_REPOSITORY=owner/name in the runner .env file}"
allowed_workflow="$repository/.github/workflows/gpu-labs.yml@refs/heads/main"

case "${GITHUB_EVENT_NAME:-}" in
  push | schedule | workflow_dispatch) ;;
  *)
    echo "refused: event '${GITHUB_EVENT_NAME:-}' may not use the GPU runner" >&2
    exit 1
    ;;
esac

if [ "${GITHUB_REPOSITORY:-}" != "$repository" ] ||
  [ "${GITHUB_WORKFLOW_REF:-}" != "$allowed_workflow" ]; then
  echo "refused: workflow '${GITHUB_WORKFLOW_REF:-}' is not $allowed_workflow" >&2
  exit 1
fi
echo "allowed: $GITHUB_EVENT_NAME of $GITHUB_WORKFLOW_REF"
