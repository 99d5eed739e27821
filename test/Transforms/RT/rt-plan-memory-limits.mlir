// RUN: parc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(rt-plan-memory))'

// No device holds 4 TiB (2^20 * 2^20 * 4 bytes): the default limit is 1 TiB.
// expected-error @below {{rank program 'huge_buffer' needs a buffer of 4398046511104 bytes (4096.0 GiB), more than the 1099511627776 bytes (1024.0 GiB) one device may hold}}
func.func @huge_buffer() {
  %a = rt.alloc : memref<1048576x1048576xf32>
  rt.output 0 "y", %a : memref<1048576x1048576xf32>
  return
}

// -----

// Two weights of 768 GiB each: each fits, together they do not.
// expected-error @below {{rank program 'weights' holds weights of 1649267441664 bytes (1536.0 GiB), more than the 1099511627776 bytes (1024.0 GiB) one device may hold}}
func.func @weights() {
  %a = rt.weight "a" : memref<206158430208xf32>
  %b = rt.weight "b" : memref<206158430208xf32>
  rt.output 0 "a", %a : memref<206158430208xf32>
  rt.output 1 "b", %b : memref<206158430208xf32>
  return
}

// -----

// A size past 2^63 bytes is reported, not wrapped into a small arena.
// expected-error @below {{rank program 'wraps' needs a buffer of more than 2^63 bytes}}
func.func @wraps() {
  %a = rt.alloc : memref<4611686018427387904x4xf32>
  rt.output 0 "y", %a : memref<4611686018427387904x4xf32>
  return
}
