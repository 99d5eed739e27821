//===- OptionRef.h - how library diagnostics name pass options --*- C++ -*-===//
//
// A pass (or a sharding rule it runs) that blames one of its options names
// the option, never a driver's flag: "option 'tp=4' does not fit this
// model". parc-opt's user reads that as the pass option they typed; a driver
// rewrites each reference into its own wording (`parc compile` says
// "--tp 4") with respellOptionRefs. The two sides share this one format.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_OPTIONREF_H
#define PARC_SUPPORT_OPTIONREF_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace parc {

/// "option 'NAME'": a reference to the pass option NAME.
inline std::string optionRef(llvm::StringRef name) {
  return ("option '" + name + "'").str();
}

/// "option 'NAME=VALUE'": the option with the value it was given.
inline std::string optionRef(llvm::StringRef name, const llvm::Twine &value) {
  return ("option '" + name + "=" + value + "'").str();
}

inline std::string optionRef(llvm::StringRef name, int64_t value) {
  return optionRef(name, llvm::Twine(value));
}

/// Turns an option name ("pp-layout") into the word a message uses for it:
/// how libraries that validate a driver's options whole (CompileOptions,
/// plan::checkFlags) leave the spelling to it.
using OptionSpeller = llvm::function_ref<std::string(llvm::StringRef)>;

/// A driver's words for option `name` given `value` (none: the option
/// itself), or nullopt to leave the reference as it is.
using OptionRespeller = llvm::function_ref<std::optional<std::string>(
    llvm::StringRef name, std::optional<llvm::StringRef> value)>;

/// `message` with every optionRef in it replaced by what `respell` says.
std::string respellOptionRefs(llvm::StringRef message,
                              OptionRespeller respell);

} // namespace parc

#endif // PARC_SUPPORT_OPTIONREF_H
