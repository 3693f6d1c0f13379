#!/usr/bin/env bash
# Post-job hook (ACTIONS_RUNNER_HOOK_JOB_COMPLETED): no GPU process outlives its job.
nvidia-smi --query-compute-apps=pid --format=csv,noheader | xargs -r kill -9 || true
