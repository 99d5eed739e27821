//===- CommandLine.cpp - what every parc tool's command line shares -------===//

#include "parc/Support/CommandLine.h"
#include "parc/Support/Version.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <deque>

namespace cl = llvm::cl;
using llvm::StringRef;

namespace {

bool inCategories(const cl::Option &o,
                  llvm::ArrayRef<const cl::OptionCategory *> categories) {
  return llvm::any_of(o.Categories, [&](cl::OptionCategory *c) {
    return llvm::is_contained(categories, c);
  });
}

/// "-o" or "--tp", as a user types it.
std::string flagName(StringRef name) {
  return (name.size() == 1 ? "-" : "--") + name.str();
}

/// A number as a user would type it: 0.5 or 2, not 5.000000e-01.
std::string number(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// The initial value of `o` as text, when it is a cl::opt<T> given one.
template <typename T> std::optional<std::string> defaultOf(cl::Option *o) {
  auto *opt = dynamic_cast<cl::opt<T> *>(o);
  if (!opt || !opt->getDefault().hasValue())
    return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>)
    return opt->getDefault().getValue();
  else if constexpr (std::is_integral_v<T>)
    return std::to_string(opt->getDefault().getValue());
  else
    return number(opt->getDefault().getValue());
}

/// Appends "(default: X)" to the help of each option of `categories` in
/// `sub` that has an initial value (flags, off unless given, show none), so
/// the default shown is the one in cl::init and nowhere else.
void appendDefaults(cl::SubCommand &sub,
                    llvm::ArrayRef<const cl::OptionCategory *> categories,
                    llvm::DenseSet<cl::Option *> &done) {
  static std::deque<std::string> helpTexts; // options keep a StringRef
  for (auto &entry : sub.OptionsMap) {
    cl::Option *o = entry.second;
    // Categories first: some libraries' options are built without RTTI.
    if (!inCategories(*o, categories) || dynamic_cast<cl::alias *>(o) ||
        !done.insert(o).second)
      continue;
    std::optional<std::string> value = defaultOf<int64_t>(o);
    for (auto next : {&defaultOf<int>, &defaultOf<unsigned>, &defaultOf<double>,
                      &defaultOf<std::string>})
      if (!value)
        value = next(o);
    if (!value || value->empty())
      continue;
    helpTexts.push_back((o->HelpStr + " (default: " + *value + ")").str());
    o->setDescription(helpTexts.back());
  }
}

} // namespace

void parc::cli::setUpOptions(
    llvm::ArrayRef<const cl::OptionCategory *> categories) {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { parc::printVersion(os); });
  llvm::DenseSet<cl::Option *> done;
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands()) {
    cl::HideUnrelatedOptions(categories, *sub);
    appendDefaults(*sub, categories, done);
  }
}

void parc::cli::parseCommandLine(
    int argc, const char *const *argv, StringRef overview,
    llvm::ArrayRef<const cl::OptionCategory *> categories) {
  setUpOptions(categories);
  cl::ParseCommandLineOptions(argc, argv, overview);
  if (llvm::Error err = checkRepeatedOptions(categories)) {
    llvm::WithColor::error(llvm::errs(), llvm::sys::path::filename(argv[0]))
        << llvm::toString(std::move(err)) << "\n";
    std::exit(1);
  }
}

llvm::Error parc::cli::checkRepeatedOptions(
    llvm::ArrayRef<const cl::OptionCategory *> categories) {
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands()) {
    if (!*sub) // only the subcommand given (or the top level) was parsed
      continue;
    for (auto &entry : sub->OptionsMap) {
      cl::Option *o = entry.second;
      cl::NumOccurrencesFlag once = o->getNumOccurrencesFlag();
      if (!inCategories(*o, categories) || dynamic_cast<cl::alias *>(o) ||
          (once != cl::Optional && once != cl::Required) ||
          o->getNumOccurrences() < 2)
        continue;
      return llvm::createStringError(
          flagName(o->ArgStr) + " is given " +
          llvm::Twine(o->getNumOccurrences()) +
          " times (counting its aliases): give it once");
    }
  }
  return llvm::Error::success();
}

llvm::Error parc::cli::checkDistinctNames(StringRef flag,
                                          llvm::ArrayRef<std::string> specs,
                                          bool nameEndsAtLastEq) {
  llvm::StringMap<StringRef> seen;
  for (StringRef spec : specs) {
    StringRef name =
        nameEndsAtLastEq ? spec.rsplit('=').first : spec.split('=').first;
    auto [it, inserted] = seen.try_emplace(name, spec);
    if (!inserted)
      return llvm::createStringError("--" + flag + " gives '" + name +
                                     "' twice ('" + it->second + "' and '" +
                                     spec + "'): give each name once");
  }
  return llvm::Error::success();
}

parc::cli::Range parc::cli::intRange(StringRef flag, int64_t value, int64_t min,
                                     int64_t max) {
  return {flag, value >= min && value <= max, std::to_string(value),
          std::to_string(min), std::to_string(max)};
}

parc::cli::Range parc::cli::realRange(StringRef flag, double value, double min,
                                      double max) {
  return {flag, value >= min && value <= max, // NaN fails both
          number(value), number(min), number(max)};
}

llvm::Error parc::cli::checkRanges(llvm::ArrayRef<Range> ranges) {
  for (const Range &r : ranges)
    if (!r.inRange)
      return llvm::createStringError(flagName(r.flag) + " must be at least " +
                                     r.min + " and at most " + r.max +
                                     ", not " + r.value);
  return llvm::Error::success();
}

std::optional<StringRef> parc::cli::canonicalDType(StringRef name) {
  static const std::pair<StringRef, StringRef> spellings[] = {
      {"f32", "f32"},   {"float32", "f32"}, {"fp32", "f32"},
      {"float", "f32"}, {"bf16", "bf16"},   {"bfloat16", "bf16"},
      {"f16", "f16"},   {"float16", "f16"}, {"fp16", "f16"},
      {"half", "f16"}};
  for (auto [spelling, dtype] : spellings)
    if (name == spelling)
      return dtype;
  return std::nullopt;
}

StringRef parc::cli::dtypeSpellings() {
  return "f32 (or float32, fp32, float), bf16 (bfloat16) or f16 (float16, "
         "fp16, half)";
}
