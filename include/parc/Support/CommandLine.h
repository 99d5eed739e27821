//===- CommandLine.h - what every parc tool's command line shares -*- C++
//-*-===//
//
// parc's tools parse with llvm::cl, which also registers the hundreds of
// options of the LLVM and MLIR libraries they link. These helpers show a
// user only parc's own options, grouped by category with their defaults,
// print parc's version, and refuse what llvm::cl lets pass: an option given
// twice (the last one would win), a NAME given twice in NAME=VALUE lists and
// numbers outside the range a flag can take.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_COMMANDLINE_H
#define PARC_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace parc::cli {

/// Hides every option outside `categories` (and LLVM's generic --help and
/// --version) in every subcommand, appends "(default: X)" to the help of
/// each option of theirs with an initial value, and makes --version print
/// parc's version. Call before parsing; options registered after it (as
/// mlirTranslateMain's own) stay visible.
void setUpOptions(llvm::ArrayRef<const llvm::cl::OptionCategory *> categories);

/// setUpOptions, cl::ParseCommandLineOptions, then checkRepeatedOptions.
/// Exits with status 1 after printing why on a bad command line.
void parseCommandLine(
    int argc, const char *const *argv, llvm::StringRef overview,
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories);

/// Fails for an option of `categories` given more than once: llvm::cl keeps
/// the last value without a word. Lists (cl::list) repeat by design.
llvm::Error checkRepeatedOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories);

/// Fails when two of `specs` (NAME=VALUE values of --`flag`) give the same
/// NAME. NAME ends at the first '=', or at the last with `nameEndsAtLastEq`.
llvm::Error checkDistinctNames(llvm::StringRef flag,
                               llvm::ArrayRef<std::string> specs,
                               bool nameEndsAtLastEq = false);

/// One numeric flag's value and the range it accepts, both ends included,
/// as text for the message. Made by intRange or realRange.
struct Range {
  llvm::StringRef flag; // without the dashes
  bool inRange;
  std::string value, min, max;
};
Range intRange(llvm::StringRef flag, int64_t value, int64_t min, int64_t max);
/// NaN is never in range.
Range realRange(llvm::StringRef flag, double value, double min, double max);
/// Fails, naming the flag, its value and the accepted range, for the first
/// entry out of its range.
llvm::Error checkRanges(llvm::ArrayRef<Range> ranges);

/// The dtype parc means by `name`: "f32", "bf16" or "f16" for those and for
/// the spellings of PyTorch and vLLM (float32, fp32, bfloat16, float16, fp16,
/// half); nullopt for anything else.
std::optional<llvm::StringRef> canonicalDType(llvm::StringRef name);
/// The names canonicalDType accepts, for error messages.
llvm::StringRef dtypeSpellings();

} // namespace parc::cli

#endif // PARC_SUPPORT_COMMANDLINE_H
