// RUN: parc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// dist.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{shape has 2 dimensions but 1 axis names are given}}
dist.mesh @mesh(shape = 2x4, axes = ["tp"])

// -----

// expected-error @+1 {{mesh axis "tp" is declared twice}}
dist.mesh @mesh(shape = 2x4, axes = ["tp", "tp"])

// -----

// expected-error @+1 {{mesh axis names must not be empty}}
dist.mesh @mesh(shape = 2x4, axes = ["pp", ""])

// -----

// expected-error @+1 {{mesh axis "tp" has size 0; sizes must be positive}}
dist.mesh @mesh(shape = 2x0, axes = ["pp", "tp"])

// -----

// expected-error @+1 {{a mesh has at least one axis}}
"dist.mesh"() <{sym_name = "mesh", shape = array<i64>, axes = []}> : () -> ()

// -----

func.func @mesh_in_function() {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  dist.mesh @mesh(shape = 4, axes = ["tp"])
  return
}

//===----------------------------------------------------------------------===//
// #dist.sharding: structure
//===----------------------------------------------------------------------===//

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @axis_splits_two_dims(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis "tp" splits dimension 0 and dimension 1; an axis splits at most once}}
  %0 = dist.shard %x to <@mesh, [["tp"], ["tp"]]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @axis_twice_in_dim(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis "tp" is listed twice for dimension 0}}
  %0 = dist.shard %x to <@mesh, [["tp", "tp"]]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @split_and_partial(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis "tp" is both a split axis and a partial axis}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], partial = ["tp"]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @partial_twice(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{partial axis "tp" is listed twice}}
  %0 = dist.shard %x to <@mesh, [], partial = ["tp", "tp"]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @kind_without_partial(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{reduction kind 'max' given without partial axes}}
  %0 = dist.shard %x to <@mesh, [], partial = max []> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @empty_axis_name(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis names must not be empty}}
  %0 = dist.shard %x to <@mesh, [[""]]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @axes_not_names(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{split axes of dimension 0 must be a list of mesh axis names, got [1]}}
  %0 = dist.shard %x to <@mesh, [[1]]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @sizes_per_dimension(%x: tensor<10x8xf32>) {
  // expected-error @+1 {{sizes has 1 entries but the sharding lists 2 dimensions}}
  %0 = dist.shard %x to <@mesh, [["tp"], []], sizes = [[3, 3, 2, 2]]> : tensor<10x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @sizes_on_replicated_dim(%x: tensor<10x8xf32>) {
  // expected-error @+1 {{dimension 1 has shard sizes but is not split}}
  %0 = dist.shard %x to <@mesh, [["tp"], []], sizes = [[3, 3, 2, 2], [4, 4]]> : tensor<10x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @negative_size(%x: tensor<10x8xf32>) {
  // expected-error @+1 {{shard sizes of dimension 0 must be non-negative}}
  %0 = dist.shard %x to <@mesh, [["tp"]], sizes = [[6, 3, 2, -1]]> : tensor<10x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @blocks_per_dimension(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{blocks has 1 entries but the sharding lists 2 dimensions}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], blocks = [[8, 8, 8]]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @blocks_on_replicated_dim(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{dimension 0 has blocks but is not split}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], blocks = [[4, 4], [8, 8, 8]]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @negative_block(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{blocks of dimension 1 must be non-negative}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], blocks = [[], [32, -8]]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @sizes_and_blocks(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{dimension 1 has both sizes and blocks}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], sizes = [[], [6, 6, 6, 6]], blocks = [[], [8, 8, 8]]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @replicas_per_dimension(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{replicas has 1 entries but the sharding lists 2 dimensions}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], replicas = [2]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @replicas_positive(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{replicas of dimension 1 must be positive, got 0}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], replicas = [1, 0]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @replicas_on_replicated_dim(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{dimension 0 has replicas but is not split}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], replicas = [2, 1]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @unknown_kind(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{unknown reduction kind 'prod' (expected sum, max or min)}}
  %0 = dist.shard %x to <@mesh, [], partial = prod ["tp"]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @unknown_key(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{expected 'partial', 'sizes', 'blocks' or 'replicas' (each at most once), got 'halo'}}
  %0 = dist.shard %x to <@mesh, [], halo = [1]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @qualified_in_shard(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{#dist.sharding has no type; after dist.shard's `to`, write the sharding as <@mesh, ...>}}
  %0 = dist.shard %x to #dist.sharding<@mesh, []> : tensor<8x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// #dist.sharding: where it is used
//===----------------------------------------------------------------------===//

// -----

func.func @unknown_mesh(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.shard' op sharding refers to unknown mesh @mesh}}
  %0 = dist.shard %x to <@mesh, [["tp"]]> : tensor<8x8xf32>
  return
}

// -----

func.func private @mesh()
func.func @not_a_mesh(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.shard' op sharding refers to @mesh, which is not a dist.mesh}}
  %0 = dist.shard %x to <@mesh, [["tp"]]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @unknown_axis(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.shard' op mesh @mesh has no axis "dp"}}
  %0 = dist.shard %x to <@mesh, [["dp"]]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @unknown_partial_axis(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.shard' op mesh @mesh has no axis "sp"}}
  %0 = dist.shard %x to <@mesh, [], partial = ["sp"]> : tensor<8x8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @too_many_dims(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.shard' op sharding lists 2 dimensions but the tensor has rank 1}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]]> : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @sizes_count(%x: tensor<10xf32>) {
  // expected-error @+1 {{'dist.shard' op dimension 0 has 3 shard sizes but is split into 4 shards}}
  %0 = dist.shard %x to <@mesh, [["tp"]], sizes = [[4, 3, 3]]> : tensor<10xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @sizes_sum(%x: tensor<10xf32>) {
  // expected-error @+1 {{'dist.shard' op shard sizes of dimension 0 sum to 9, not its size 10}}
  %0 = dist.shard %x to <@mesh, [["tp"]], sizes = [[3, 2, 2, 2]]> : tensor<10xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @blocks_sum(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{'dist.shard' op blocks of dimension 1 sum to 16, not its size 24}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], blocks = [[], [8, 8]]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @block_divides(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{'dist.shard' op block of 6 of dimension 1 does not split evenly into 4 shards}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], blocks = [[], [6, 6, 12]]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @replicas_divide(%x: tensor<8x24xf32>) {
  // expected-error @+1 {{'dist.shard' op replicas 3 of dimension 1 do not divide its 4 ranks}}
  %0 = dist.shard %x to <@mesh, [[], ["tp"]], replicas = [1, 3]> : tensor<8x24xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @replicas_sizes_count(%x: tensor<10xf32>) {
  // 4 ranks, each chunk on 2: 2 shards.
  // expected-error @+1 {{'dist.shard' op dimension 0 has 4 shard sizes but is split into 2 shards}}
  %0 = dist.shard %x to <@mesh, [["tp"]], sizes = [[3, 3, 2, 2]], replicas = [2]> : tensor<10xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @uneven_without_sizes(%x: tensor<10xf32>) {
  // expected-error @+1 {{'dist.shard' op dimension 0 of size 10 does not split evenly into 8 shards; give explicit sizes}}
  %0 = dist.shard %x to <@mesh, [["pp", "tp"]]> : tensor<10xf32>
  return
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

// -----

func.func @negative_stage(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.stage' must be a non-negative integer, got -1 : i64}}
  %0 = arith.addf %x, %x {dist.stage = -1 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @stage_not_integer(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.stage' must be a non-negative integer, got "first"}}
  %0 = arith.addf %x, %x {dist.stage = "first"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @sharding_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.sharding' belongs on function arguments and results; annotate values with dist.shard}}
  %0 = arith.addf %x, %x {dist.sharding = #dist.sharding<@mesh, [["tp"]]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}


// -----

// expected-error @+1 {{'dist.sharding' on argument 0 must be a #dist.sharding, got 1 : i64}}
func.func @argument_not_sharding(%x: tensor<8xf32> {dist.sharding = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'dist.stage' belongs on ops, not on argument 0}}
func.func @stage_on_argument(%x: tensor<8xf32> {dist.stage = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{sharding refers to unknown mesh @mesh}}
func.func @result_unknown_mesh(%x: tensor<2xf32>) -> (tensor<2xf32> {dist.sharding = #dist.sharding<@mesh, [["tp"]]>}) {
  return %x : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// dist.local_part
//===----------------------------------------------------------------------===//

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_divides(%w: tensor<64x250xf32>) -> tensor<64x62xf32> {
  // expected-error @+1 {{'dist.local_part' op dimension 1 of size 250 does not split evenly into 4 shards; give explicit sizes}}
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<64x250xf32> -> tensor<64x62xf32>
  return %0 : tensor<64x62xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_extent(%w: tensor<64x256xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'dist.local_part' op result must be 'tensor<64x64xf32>', this rank's part of 'tensor<64x256xf32>', got 'tensor<64x128xf32>'}}
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<64x256xf32> -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_blocks_sum(%w: tensor<64x128xf32>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'dist.local_part' op blocks of dimension 1 sum to 96, not its size 128}}
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]], blocks = [[], [32, 32, 32]]> : tensor<64x128xf32> -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_block_divides(%w: tensor<64x128xf32>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'dist.local_part' op block of 30 of dimension 1 does not split evenly into 4 shards}}
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]], blocks = [[], [64, 30, 34]]> : tensor<64x128xf32> -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_dim_range(%w: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'dist.local_part' op sharding lists 3 dimensions but the tensor has rank 2}}
  %0 = dist.local_part %w to <@mesh, [[], [], ["tp"]]> : tensor<64x128xf32> -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_empty_axis(%w: tensor<64x128xf32>) -> tensor<64x32xf32> {
  // expected-error @+1 {{mesh axis names must not be empty}}
  %0 = dist.local_part %w to <@mesh, [[], [""]]> : tensor<64x128xf32> -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_unknown_axis(%w: tensor<64x128xf32>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'dist.local_part' op mesh @mesh has no axis "ep"}}
  %0 = dist.local_part %w to <@mesh, [[], ["ep"]]> : tensor<64x128xf32> -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_replicas_divide(%w: tensor<64x128xf32>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'dist.local_part' op replicas 3 of dimension 1 do not divide its 4 ranks}}
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]], replicas = [1, 3]> : tensor<64x128xf32> -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @local_part_replicas_shape(%w: tensor<64x32xf32>) -> tensor<64x8xf32> {
  // 2 chunks of 16 (each on 2 ranks), not 4 of 8.
  // expected-error @+1 {{'dist.local_part' op result must be 'tensor<64x16xf32>', this rank's part of 'tensor<64x32xf32>', got 'tensor<64x8xf32>'}}
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]], replicas = [1, 2]> : tensor<64x32xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @local_part_uneven(%w: tensor<5x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'dist.local_part' op gives every rank a part of one type: its sharding has no uneven sizes, got #dist.sharding<@mesh, [["tp"]], sizes = [[3, 2]]>}}
  %0 = dist.local_part %w to <@mesh, [["tp"]], sizes = [[3, 2]]> : tensor<5x8xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @local_part_partial(%w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dist.local_part' op takes a part of a whole value, not of a partial one}}
  %0 = dist.local_part %w to <@mesh, [], partial = ["tp"]> : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @local_part_unknown_mesh(%w: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'dist.local_part' op sharding refers to unknown mesh @mesh}}
  %0 = dist.local_part %w to <@mesh, [["tp"]]> : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

//===----------------------------------------------------------------------===//
// Collectives: the mesh and its axes
//===----------------------------------------------------------------------===//

// -----

func.func @collective_unknown_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op refers to unknown mesh @mesh}}
  %0 = dist.all_reduce %x on @mesh mesh_axes = ["tp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @mesh()
func.func @collective_not_a_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op refers to @mesh, which is not a dist.mesh}}
  %0 = dist.all_reduce %x on @mesh mesh_axes = ["tp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @collective_unknown_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op mesh @mesh has no axis "dp"}}
  %0 = dist.all_reduce %x on @mesh mesh_axes = ["dp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @collective_axis_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op mesh axis "tp" is listed twice}}
  %0 = dist.all_reduce %x on @mesh mesh_axes = ["tp", "tp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @collective_empty_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op mesh axis names must not be empty}}
  %0 = dist.all_reduce %x on @mesh mesh_axes = [""] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @collective_no_axes(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op attribute 'mesh_axes' failed to satisfy constraint}}
  %0 = dist.all_reduce %x on @mesh mesh_axes = [] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Collectives: shapes
//===----------------------------------------------------------------------===//

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_extent(%x: tensor<8x16xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'dist.all_gather' op result extent along gather_axis must be 64 (input extent 16 x group size 4), got 32}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_two_axes(%x: tensor<8x16xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dist.all_gather' op result extent along gather_axis must be 128 (input extent 16 x group size 8), got 64}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["pp", "tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_root_range(%x: tensor<8x16xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dist.all_gather' op root 4 is not a member of the 4-member group}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 root = 4 : tensor<8x16xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_start_negative_root(%x: tensor<8x16xf32>) -> !dist.async<tensor<8x64xf32>> {
  // expected-error @+1 {{'dist.all_gather_start' op root -1 is not a member of the group}}
  %0 = dist.all_gather_start %x on @mesh mesh_axes = ["tp"] gather_axis = 1 root = -1 : tensor<8x16xf32> -> !dist.async<tensor<8x64xf32>>
  return %0 : !dist.async<tensor<8x64xf32>>
}
// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_axis_range(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'dist.all_gather' op gather_axis 2 is out of range for rank 2}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 2 : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_negative_axis(%x: tensor<8x16xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dist.all_gather' op attribute 'gather_axis' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = -1 : tensor<8x16xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_element_type(%x: tensor<8x16xf32>) -> tensor<8x64xf16> {
  // expected-error @+1 {{'dist.all_gather' op result element type 'f16' differs from the input element type 'f32'}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64xf16>
  return %0 : tensor<8x64xf16>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_rank(%x: tensor<8x16xf32>) -> tensor<8x64x1xf32> {
  // expected-error @+1 {{'dist.all_gather' op result rank 3 differs from the input rank 2}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64x1xf32>
  return %0 : tensor<8x64x1xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_other_dims(%x: tensor<8x16xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'dist.all_gather' op result shape [4x64] must match the input shape [8x16] except along gather_axis}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_sizes_sum(%x: tensor<3x8xf32>) -> tensor<12x8xf32> {
  // expected-error @+1 {{'dist.all_gather' op sizes sum to 10 but the result extent along gather_axis is 12}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] : tensor<3x8xf32> -> tensor<12x8xf32>
  return %0 : tensor<12x8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_sizes_local(%x: tensor<2x8xf32>) -> tensor<10x8xf32> {
  // expected-error @+1 {{'dist.all_gather' op input extent 2 along gather_axis is less than the largest of sizes}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] : tensor<2x8xf32> -> tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_sizes_count(%x: tensor<5x8xf32>) -> tensor<10x8xf32> {
  // expected-error @+1 {{'dist.all_gather' op sizes has 2 entries for a group of 4 ranks}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [5, 5] : tensor<5x8xf32> -> tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_sizes_negative(%x: tensor<5x8xf32>) -> tensor<10x8xf32> {
  // expected-error @+1 {{'dist.all_gather' op sizes must be non-negative}}
  %0 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [5, 5, 1, -1] : tensor<5x8xf32> -> tensor<10x8xf32>
  return %0 : tensor<10x8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_gather_start_extent(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'dist.all_gather_start' op result extent along gather_axis must be 64 (input extent 16 x group size 4), got 16}}
  %0 = dist.all_gather_start %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> !dist.async<tensor<8x16xf32>>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @reduce_scatter_divides(%x: tensor<6x16xf32>) -> tensor<1x16xf32> {
  // expected-error @+1 {{'dist.reduce_scatter' op input extent 6 along scatter_axis does not divide into 4 shards}}
  %0 = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<6x16xf32> -> tensor<1x16xf32>
  return %0 : tensor<1x16xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @reduce_scatter_extent(%x: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dist.reduce_scatter' op result extent along scatter_axis must be 2 (input extent 8 / group size 4), got 4}}
  %0 = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @reduce_scatter_sizes(%x: tensor<10x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dist.reduce_scatter' op result extent 4 along scatter_axis is not one of sizes}}
  %0 = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 sizes = [3, 3, 2, 2] : tensor<10x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @reduce_scatter_start_extent(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter_start' op result extent along scatter_axis must be 2 (input extent 8 / group size 4), got 8}}
  %0 = dist.reduce_scatter_start %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x16xf32> -> !dist.async<tensor<8x16xf32>>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_to_all_divides(%x: tensor<8x6xf32>) -> tensor<32x1xf32> {
  // expected-error @+1 {{'dist.all_to_all' op input extent 6 along split_axis does not divide into 4 slices}}
  %0 = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x6xf32> -> tensor<32x1xf32>
  return %0 : tensor<32x1xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_to_all_shape(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'dist.all_to_all' op result shape must be [32x4] for a group of 4 ranks, got [8x16]}}
  %0 = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_to_all_concat_range(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'dist.all_to_all' op concat_axis 3 is out of range for rank 2}}
  %0 = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 3 : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_to_all_start_shape(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'dist.all_to_all_start' op result shape must be [32x4] for a group of 4 ranks, got [16x8]}}
  %0 = dist.all_to_all_start %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> !dist.async<tensor<16x8xf32>>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_counts(%x: tensor<64x32xf32>, %c: tensor<2xi64>, %r: tensor<4xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v' op send_counts must have one entry per group member (4), got 2}}
  %0 = dist.all_to_all_v %x, %c, %r on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<2xi64>, tensor<4xi64> -> tensor<96x32xf32>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_recv_counts(%x: tensor<64x32xf32>, %c: tensor<4xi64>, %r: tensor<8xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v' op recv_counts must have one entry per group member (4), got 8}}
  %0 = dist.all_to_all_v %x, %c, %r on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<8xi64> -> tensor<96x32xf32>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_other_dims(%x: tensor<64x32xf32>, %c: tensor<4xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v' op result shape [96x16] must match the input shape [64x32] except along axis}}
  %0 = dist.all_to_all_v %x, %c, %c on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<96x16xf32>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_count_type(%x: tensor<64x32xf32>, %c: tensor<4xi32>, %r: tensor<4xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v' op operand #1 must be 1D tensor of 64-bit signless integer values}}
  %0 = dist.all_to_all_v %x, %c, %r on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi32>, tensor<4xi64> -> tensor<96x32xf32>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_axis(%x: tensor<64x32xf32>, %c: tensor<4xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v' op axis 2 is out of range}}
  %0 = dist.all_to_all_v %x, %c, %c on @mesh mesh_axes = ["ep"] axis = 2 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<96x32xf32>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_start_counts(%x: tensor<64x32xf32>, %c: tensor<4xi64>, %r: tensor<2xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v_start' op recv_counts must have one entry per group member (4), got 2}}
  %0 = dist.all_to_all_v_start %x, %c, %r on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<2xi64> -> !dist.async<tensor<96x32xf32>>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @all_to_all_v_start_other_dims(%x: tensor<64x32xf32>, %c: tensor<4xi64>) {
  // expected-error @+1 {{'dist.all_to_all_v_start' op result shape [96x16] must match the input shape [64x32] except along axis}}
  %0 = dist.all_to_all_v_start %x, %c, %c on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> !dist.async<tensor<96x16xf32>>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_recv_counts(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op recv_counts must have one entry per member (4), got 3}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<3xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_input(%x: tensor<8x2x32xf32>, %i: tensor<8x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op input must be [tokens, hidden] of a float type, got 'tensor<8x2x32xf32>'}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x2x32xf32>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_ids(%x: tensor<8x32xf32>, %i: tensor<4x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op expert_ids must be [8, top_k] of i64, got 'tensor<4x2xi64>'}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<4x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_layout(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op layout must be [members, local experts] of i64, got 'tensor<8xi64>'}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<8xi64>, tensor<16xi64>, tensor<4xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_counts(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<8xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op counts must hold every member's count of every expert (32), got 8}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<8xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_send_counts(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op send_counts must have one entry per member (4), got 2}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<2xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<2xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_rows(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op rows must be [16, 32] of f32 (one per pair), got 'tensor<8x32xf32>'}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<32xi64> -> tensor<8x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_pairs(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<32xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op pair_rows must have one entry per pair (16), got 8}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<8xi64>, tensor<4xi64>
  return
}

// -----

dist.mesh @mesh(shape = 4, axes = ["ep"])
func.func @moe_permute_group(%x: tensor<8x32xf32>, %i: tensor<8x2xi64>, %c: tensor<16xi64>) {
  // expected-error @+1 {{'dist.moe_permute' op layout must have one row per group member (4), got 2}}
  %0, %1, %2, %3, %4 = dist.moe_permute %x, %i, %c on @mesh mesh_axes = ["ep"] : tensor<8x32xf32>, tensor<8x2xi64>, tensor<16xi64> -> tensor<16x32xf32>, tensor<2xi64>, tensor<2x4xi64>, tensor<16xi64>, tensor<2xi64>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_reduce_type(%x: tensor<8xf32>) -> tensor<8xf16> {
  // expected-error @+1 {{'dist.all_reduce' op requires the same type for all operands and results}}
  %0 = "dist.all_reduce"(%x) <{mesh = @mesh, mesh_axes = ["tp"]}> : (tensor<8xf32>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @all_reduce_start_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.all_reduce_start' op result must be !dist.async<'tensor<8xf32>'>}}
  %0 = dist.all_reduce_start %x on @mesh mesh_axes = ["tp"] : tensor<8xf32> -> !dist.async<tensor<4xf32>>
  return
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @send_peer_and_shift(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op needs exactly one of peer and shift}}
  dist.send %x on @mesh mesh_axes = ["pp"] peer = 1 shift = 1 : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @recv_no_peer() -> tensor<8xf32> {
  // expected-error @+1 {{'dist.recv' op needs exactly one of peer and shift}}
  %0 = dist.recv on @mesh mesh_axes = ["pp"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @send_peer_range(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op peer 2 is out of range for a group of 2 ranks}}
  dist.send %x on @mesh mesh_axes = ["pp"] peer = 2 : tensor<8xf32>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @recv_start_shift_self() {
  // expected-error @+1 {{'dist.recv_start' op shift 4 is a multiple of the group size 4: a rank would talk to itself}}
  %0 = dist.recv_start on @mesh mesh_axes = ["tp"] shift = 4 : !dist.async<tensor<8xf32>>
  return
}

// -----

dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
func.func @send_start_with_value(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send_start' op result #0 must be !dist.async without a value}}
  %0 = dist.send_start %x on @mesh mesh_axes = ["pp"] peer = 1 : tensor<8xf32> -> !dist.async<tensor<8xf32>>
  return
}

//===----------------------------------------------------------------------===//
// dist.wait
//===----------------------------------------------------------------------===//

// -----

func.func @wait_wrong_type(%a: !dist.async<tensor<8xf32>>) -> tensor<4xf32> {
  // expected-error @+2 {{'dist.wait' op inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'dist.wait' op failed to infer returned types}}
  %0 = "dist.wait"(%a) : (!dist.async<tensor<8xf32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wait_not_tensor(%a: !dist.async<i32>) {
  // expected-error @+1 {{'dist.wait' op result #0 must be statically shaped tensor of any type values, but got 'i32'}}
  %0 = dist.wait %a : !dist.async<i32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.reshard
//===----------------------------------------------------------------------===//

dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @reshard_rank(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{must keep the rank and element type, got 'tensor<4x8xf32>' -> 'tensor<32xf32>'}}
  %y = dist.reshard %x from <@mesh, []> to <@mesh, [["tp"]]> : tensor<4x8xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

dist.mesh @mesh(shape = 2, axes = ["tp"])
dist.mesh @other(shape = 2, axes = ["tp"])
func.func @reshard_meshes(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{reshards between meshes @mesh and @other}}
  %y = dist.reshard %x from <@mesh, []> to <@other, [["tp"]]> : tensor<4x8xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// dist.result_shardings (between the dist passes)
//===----------------------------------------------------------------------===//

dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @result_shardings(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dist.result_shardings' must list one #dist.sharding per result (1), got []}}
  %y = nn.relu %x {dist.result_shardings = []} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
