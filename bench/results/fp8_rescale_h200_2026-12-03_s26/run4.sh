#!/bin/bash
timeout 200 python3 bench/results/fp8_rescale_h200_2026-12-03_s26/run4_diag_growth.py 2>&1 | tail -30
