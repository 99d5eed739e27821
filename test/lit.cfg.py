# lit configuration for parc's regression tests.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "parc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.parc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%parc_src", config.parc_src_root))
config.substitutions.append(("%parc_obj", config.parc_obj_root))
# Debian's python3-onnx lives under /usr/bin/python3, not a pyenv shim.
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%shared_models",
    os.path.join(config.parc_src_root, "test", "Inputs", "models")))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["parc-opt", "parc-translate"]
llvm_config.add_tool_substitutions(tools, [config.parc_tools_dir])

# cuda-toolkit: this build has the cuda runtime and nvcc to link generated
# programs against it (no GPU needed). cuda: a GPU is visible too, so the
# programs can run. The system paths are the ones `parc compile` uses; the
# runtime libraries are named relative to the prefix's lib/.
def _toolchain_paths():
    inc = os.path.join(config.parc_obj_root, "lib", "Target", "Cpp",
                       "ToolchainPaths.inc")
    paths = {}
    if os.path.exists(inc):
        for line in open(inc):
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[0] == "#define":
                paths[parts[1]] = parts[2].strip().strip('"')
    return paths

_paths = _toolchain_paths()
if _paths.get("PARC_RUNTIME_CUDA_LIBRARY") and os.access(
        _paths.get("PARC_NVCC", ""), os.X_OK):
    config.available_features.add("cuda-toolkit")
    import shutil
    import subprocess
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL).stdout.strip():
        config.available_features.add("cuda")
config.substitutions.append(("%parc_driver",
                             os.path.join(config.parc_tools_dir, "parc")))
config.substitutions.append(("%parc_tools", config.parc_tools_dir))
