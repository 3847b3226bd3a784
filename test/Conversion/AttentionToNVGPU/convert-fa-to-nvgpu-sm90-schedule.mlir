// The measured defaults (longest-first at D <= 128, split release at D = 256
// without a left window edge) overridden both ways by the tri-state options
// `auto|true|false` of convert-fa-to-nvgpu and fa-to-ptx; every switch of
// SM90/Schedule.def reaches the kernel from fa-to-ptx
// (fa-to-ptx-sm90-schedule.mlir).
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=AUTO
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a longest-first=auto split-release=auto" | FileCheck %s --check-prefix=AUTO
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a longest-first=true split-release=false" | FileCheck %s --check-prefix=FORCED
// RUN: fa-opt %s -split-input-file --fa-tile-attention-for-chip=chip=sm_90a --convert-fa-to-nvgpu="chip=sm_90a longest-first=false split-release=true" | FileCheck %s --check-prefix=FORCED2
// RUN: rm -rf %t && fa-opt %s -split-input-file '--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a longest-first=true split-release=false},fa-dump-kernel{dir=%t})' -o /dev/null
// RUN: FileCheck %s --check-prefix=PIPE-CAUSAL < %t/causal_d256_kernel.json
// RUN: FileCheck %s --check-prefix=PIPE-FULL < %t/full_d256_kernel.json

// AUTO: fa.manifest.causal_d256_kernels = {json = "{{.*}}\22longest_first\22: false{{.*}}\22split_release\22: true
// FORCED: fa.manifest.causal_d256_kernels = {json = "{{.*}}\22longest_first\22: true{{.*}}\22split_release\22: false
// FORCED2: fa.manifest.causal_d256_kernels = {json = "{{.*}}\22longest_first\22: false{{.*}}\22split_release\22: true
// PIPE-CAUSAL: "longest_first": true,
// PIPE-CAUSAL: "split_release": false,
func.func @causal_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// AUTO: fa.manifest.full_d256_kernels = {json = "{{.*}}\22split_release\22: true
// FORCED: fa.manifest.full_d256_kernels = {json = "{{.*}}\22split_release\22: false
// FORCED2: fa.manifest.full_d256_kernels = {json = "{{.*}}\22split_release\22: true
// PIPE-FULL: "split_release": false,
func.func @full_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// Causal d128: longest-first by default; the option turns it off.
// AUTO: fa.manifest.causal_d128_kernels = {json = "{{.*}}\22longest_first\22: true{{.*}}\22split_release\22: false
// FORCED: fa.manifest.causal_d128_kernels = {json = "{{.*}}\22longest_first\22: true{{.*}}\22split_release\22: false
// FORCED2: fa.manifest.causal_d128_kernels = {json = "{{.*}}\22longest_first\22: false{{.*}}\22split_release\22: true
func.func @causal_d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = fa.attention %q, %k, %v {causal} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}


// -----

// AUTO: fa.manifest.window_d256_kernels = {json = "{{.*}}\22split_release\22: false
// FORCED: fa.manifest.window_d256_kernels = {json = "{{.*}}\22split_release\22: false
// FORCED2: fa.manifest.window_d256_kernels = {json = "{{.*}}\22split_release\22: true
func.func @window_d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> tensor<?x?x?x256xbf16> {
  %o = fa.attention %q, %k, %v {window = array<i64: 256, 64>} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}
