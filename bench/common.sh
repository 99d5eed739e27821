# Sourced by the bench scripts that take [MODEL.onnx [parc compile flags...]]
# after their own arguments.
#   model_and_flags WORK NAME "DEFAULT FLAGS" [MODEL.onnx [FLAGS...]]
# sets `model` to MODEL.onnx, or to examples/models/generate.py's NAME
# written into WORK (once), and the array `flags` to FLAGS, or to the
# defaults when none are given.
model_and_flags() {
  local work=$1 name=$2 defaults=$3
  shift 3
  if [ $# -gt 0 ]; then
    model=$1
    shift
  else
    model=$work/$name.onnx
    [ -f "$model" ] ||
      /usr/bin/python3 examples/models/generate.py --out "$work" --only "$name" >/dev/null
  fi
  flags=("$@")
  [ ${#flags[@]} -gt 0 ] || read -r -a flags <<<"$defaults"
}
