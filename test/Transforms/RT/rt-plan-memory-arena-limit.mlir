// RUN: parc-opt %s --verify-diagnostics --pass-pipeline='builtin.module(func.func(rt-plan-memory{max-bytes=4096}))'

// Each buffer fits the limit (4096 bytes), but both are live at once: the
// arena is 8192 bytes.
// expected-error @below {{rank program 'both_live' needs an arena of 8192 bytes, more than the 4096 bytes one device may hold}}
func.func @both_live() {
  %x = rt.input 0 "x" : memref<1024xf32>
  %a = rt.alloc : memref<1024xf32>
  rt.kernel "relu" ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = rt.alloc : memref<1024xf32>
  rt.kernel "add" ins(%a, %x : memref<1024xf32>, memref<1024xf32>) outs(%b : memref<1024xf32>)
  rt.output 0 "a", %a : memref<1024xf32>
  rt.output 1 "b", %b : memref<1024xf32>
  return
}
