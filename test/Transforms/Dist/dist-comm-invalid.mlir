// RUN: parc-opt %s --dist-comm -verify-diagnostics

// No collective turns a whole value into pending sums.
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{no collective reshards from #dist.sharding<@mesh, []> to #dist.sharding<@mesh, [], partial = ["tp"]>}}
  %y = dist.reshard %x from <@mesh, []> to <@mesh, [], partial = ["tp"]> : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
