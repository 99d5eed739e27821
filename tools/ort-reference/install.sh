#!/usr/bin/env bash
# Installs this folder's node_modules (onnxruntime-node, CPU only) from the npm
# registry, exactly as pinned in package-lock.json. Idempotent: does nothing when
# the pinned onnxruntime-node version is already installed and loads.
#
#   tools/ort-reference/install.sh           # install if needed
#   tools/ort-reference/install.sh --force   # reinstall
#
# onnxruntime-node's postinstall would otherwise try to download the CUDA/TensorRT
# provider libraries from a NuGet feed (unreachable here, and not needed: the CPU
# library ships inside the npm package). The two variables below make it skip that.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac

command -v node >/dev/null || { echo "install.sh: node not found (need Node >= 20)" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm not found" >&2; exit 1; }

want="$(node -p "require('./package.json').dependencies['onnxruntime-node']")"
have="$(node -p "try { require('./node_modules/onnxruntime-node/package.json').version } catch (e) { '' }")"

if [ "$force" = 0 ] && [ "$have" = "$want" ] &&
  node -e "require('onnxruntime-node')" >/dev/null 2>&1; then
  echo "ort-reference: onnxruntime-node $want already installed"
  exit 0
fi

export ONNXRUNTIME_NODE_INSTALL=skip
export ONNXRUNTIME_NODE_INSTALL_CUDA=skip
echo "ort-reference: installing onnxruntime-node $want (npm ci, CPU only)"
npm ci --no-audit --no-fund

node -e "const o = require('onnxruntime-node'); console.log('ort-reference: onnxruntime-node ' + o.env.versions.node + ' ok')"
