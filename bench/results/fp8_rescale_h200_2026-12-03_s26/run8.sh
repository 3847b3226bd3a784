#!/bin/bash
# Session 26 run8: fa.attention from PyTorch with a bundle of the final compiler (the causal d256
# kernels now 64-key tiles, split release, conditional rescaling): correctness and behaviour.
timeout 400 python3 bench/python_h200.py --bundle .dev/s26/bundle --out $OUT/run8_python.json --skip compile,overhead 2>&1 | grep -v "^ok\| ok$\|OK$" | tail -25
