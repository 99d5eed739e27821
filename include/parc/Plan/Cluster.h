//===- Cluster.h - cluster descriptions for the planner ---------*- C++ -*-===//
//
// What the cost model knows about a machine: per-device peak rates and
// memory, devices per node, and the intra- and inter-node links. Read from
// JSON (share/clusters/*.json presets, user files, `parc calibrate`'s output);
// the schema is documented in docs/cluster-json.md.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_CLUSTER_H
#define PARC_PLAN_CLUSTER_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace parc::plan {

/// A link as collectives see it: the bus bandwidth one device gets (bytes/s,
/// what nccl-tests reports as busbw) and the latency of one algorithm step (s).
struct Link {
  std::string name;
  double bandwidth = 0;
  double latency = 0;
};

struct Cluster {
  std::string name;
  std::string description;
  std::string device;
  /// Peak dense FLOP/s per device, by compute dtype (f32, bf16, f16).
  llvm::StringMap<double> peakFlops;
  double memoryBytes = 0;
  double memoryBandwidth = 0;
  /// Fractions of peak that large kernels reach (GEMMs, streaming kernels).
  double computeEfficiency = 1;
  double memoryEfficiency = 1;
  /// Fixed cost of launching one kernel (s).
  double kernelLatency = 0;
  int64_t devicesPerNode = 1;
  /// Devices that compute at once on a node (0: all of them). Below
  /// devicesPerNode, ranks time-share: the cpu target with more ranks than
  /// cores (mpirun --oversubscribe).
  int64_t computeSlotsPerNode = 0;
  /// Nodes available; 0 when unbounded.
  int64_t nodes = 0;
  Link intraNode;
  Link interNode;

  /// Peak FLOP/s for `dtype`, or an error naming the dtypes the file has.
  llvm::Expected<double> flopsFor(llvm::StringRef dtype) const;
  /// The link a group of `size` ranks `stride` apart uses (ranks are laid
  /// out node by node): the inter-node link once the group spans nodes.
  const Link &linkFor(int64_t size, int64_t stride) const;
  bool spansNodes(int64_t size, int64_t stride) const;
};

/// Parses a cluster description; errors name `source` and the JSON path.
llvm::Expected<Cluster> parseCluster(llvm::StringRef text, llvm::StringRef source);

/// Serialises a cluster in the same schema (what `parc calibrate` writes).
llvm::json::Value toJSON(const Cluster &cluster);

/// The folder of the presets parc ships: share/parc/clusters under the
/// running tool's prefix (parc/Support/InstallLayout.h).
std::string presetDir();

/// The file `nameOrPath` names: itself when it is a path (it holds a '/' or
/// ends in .json), else NAME.json in the first of `presetDirs` that has it;
/// an error lists the presets when there is none.
llvm::Expected<std::string> findCluster(llvm::StringRef nameOrPath,
                                        llvm::ArrayRef<std::string> presetDirs);

/// findCluster, then parseCluster of that file.
llvm::Expected<Cluster> loadCluster(llvm::StringRef nameOrPath,
                                    llvm::ArrayRef<std::string> presetDirs);

/// The preset names found in `presetDirs`, sorted.
std::vector<std::string> presetNames(llvm::ArrayRef<std::string> presetDirs);

} // namespace parc::plan

#endif // PARC_PLAN_CLUSTER_H
