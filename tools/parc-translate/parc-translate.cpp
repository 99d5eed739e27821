//===- parc-translate.cpp - translations into and out of parc's IR --------===//

#include "parc/Import/Onnx/OnnxImporter.h"
#include "parc/Support/CommandLine.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  // Hides the LLVM and MLIR library options registered so far; those that
  // mlirTranslateMain registers (the translations, -o) stay visible.
  parc::cli::setUpOptions({});
  parc::registerOnnxImportTranslation();
  // --mlir-to-cpp prints the emitc form of a rank program as C++.
  mlir::registerToCppTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "parc translation driver\n"));
}
