#!/usr/bin/env bash
# The lab of the lesson, step by step (to be written: the commands the lab section gives).
# Run it from the unzipped lesson folder on the GPU machine, once vLLM is installed; the
# lesson's lab notebook runs the same steps, one cell each.
set -euo pipefail

# The lab on the GPU, its output saved for the check.
python %%module%%_lab.py > lab_output.txt
