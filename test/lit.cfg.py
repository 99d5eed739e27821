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
# Debian's python3-onnx lives under /usr/bin/python3, not a pyenv shim.
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%shared_models",
    os.path.join(config.parc_src_root, "test", "Inputs", "models")))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["parc-opt", "parc-translate"]
llvm_config.add_tool_substitutions(tools, [config.parc_tools_dir])
