// fa-to-ptx options that upstream passes would abort on (O) or only warn
// about (features) are reported by the pipeline, naming the option.
// RUN: not fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 O=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=O4
// O4: error: fa-to-ptx option 'O=4' must be 0, 1, 2 or 3 (the NVPTX optimization level)
// RUN: not fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a O=-1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEG
// ONEG: error: fa-to-ptx option 'O=-1' must be 0, 1, 2 or 3
// RUN: not fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 features=garbage})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEAT
// FEAT: error: fa-to-ptx option 'features=garbage' must be a comma-separated list of +feature / -feature (e.g. +ptx80), got 'garbage'
// A valid list still compiles:
// RUN: fa-opt %s '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_80 features=+ptx80 O=2})' -o /dev/null

func.func @attn(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
