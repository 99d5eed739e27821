//===- parc-tblgen.cpp - parc's TableGen backends ---------------*- C++ -*-===//
//
// Generates the compiler -> runtime contract from dialects/rt/RTKernels.td:
// the kernel table the rt verifiers read, and a translation unit that
// checks runtime.h against it. A separate tool (not mlir-tblgen plugins) so
// that the table is plain C++ with no MLIR at generation time.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <cstring>

using namespace llvm;

namespace {

enum class Action { KernelDecls, KernelDefs, AbiCheck };

cl::opt<Action> action(
    cl::desc("Action to perform:"),
    cl::values(clEnumValN(Action::KernelDecls, "gen-rt-kernel-decls",
                          "The rt::Kernel enum"),
               clEnumValN(Action::KernelDefs, "gen-rt-kernel-defs",
                          "The kernel table the rt verifiers check against"),
               clEnumValN(Action::AbiCheck, "gen-rt-abi-check",
                          "static_asserts that runtime.h declares every "
                          "entry point with its declared signature")));

/// snake_case -> CamelCase: the enumerator of a kernel.
std::string camel(StringRef name) {
  std::string out;
  for (StringRef part : llvm::split(name, '_'))
    if (!part.empty())
      out += (Twine(toUpper(part.front())) + part.drop_front()).str();
  return out;
}

/// The C function type `result (*)(params)` of an entry, with `extra`
/// appended (a _start form's request).
std::string pointerType(const Record *entry, StringRef extra = "") {
  std::vector<StringRef> params = entry->getValueAsListOfStrings("params");
  std::string list = join(params, ", ");
  if (!extra.empty())
    list += (params.empty() ? "" : ", ") + extra.str();
  return (entry->getValueAsString("result") + " (*)(" + list + ")").str();
}

std::vector<const Record *> sortedDefs(const RecordKeeper &records,
                                       StringRef cls) {
  std::vector<const Record *> defs = records.getAllDerivedDefinitions(cls);
  llvm::sort(defs, [](const Record *a, const Record *b) {
    return a->getID() < b->getID();
  });
  return defs;
}

bool checkKernels(ArrayRef<const Record *> kernels) {
  StringSet<> names;
  for (const Record *k : kernels) {
    if (!names.insert(k->getValueAsString("name")).second)
      PrintFatalError(k, "kernel '" + k->getValueAsString("name") +
                             "' is declared twice");
    // `?`: a kernel outside every family's `let` block.
    if (!isa<DefInit>(k->getValue("family")->getValue()))
      PrintFatalError(k, "kernel '" + k->getValueAsString("name") +
                             "' has no family (convert-rt-to-emitc emitter)");
  }
  return false;
}

bool emitDecls(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("rt kernels (dialects/rt/RTKernels.td)", os, records);
  std::vector<const Record *> kernels = sortedDefs(records, "RT_Kernel");
  checkKernels(kernels);
  os << "namespace parc::rt {\n\n/// Every rt.kernel / rt.start callee.\n"
        "enum class Kernel : unsigned {\n";
  for (const Record *k : kernels)
    os << "  " << camel(k->getValueAsString("name")) << ",\n";
  os << "};\n\ninline constexpr unsigned kNumKernels = " << kernels.size()
     << ";\n\n/// How convert-rt-to-emitc lays out a kernel's C call.\n"
        "enum class KernelFamily : unsigned {\n";
  for (const Record *f : sortedDefs(records, "RT_Family"))
    os << "  " << f->getName().drop_front(strlen("RT_Family")) << ",\n";
  os << "};\n\n} // namespace parc::rt\n";
  return false;
}

void emitParamKinds(raw_ostream &os, const RecordKeeper &records) {
  for (const Record *kind : sortedDefs(records, "RT_ParamKind")) {
    std::string pred = kind->getValueAsString("predicate").str();
    for (size_t at; (at = pred.find("$_attr")) != std::string::npos;)
      pred.replace(at, 6, "attr");
    os << formatv("static bool rtParamIs{0}(::mlir::Attribute attr) {{\n"
                  "  return {1};\n}\n",
                  kind->getName(), pred);
  }
}

bool emitDefs(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("rt kernel table (dialects/rt/RTKernels.td)", os,
                       records);
  std::vector<const Record *> kernels = sortedDefs(records, "RT_Kernel");
  emitParamKinds(os, records);
  for (const Record *k : kernels) {
    std::string id = camel(k->getValueAsString("name"));
    std::vector<const Record *> params = k->getValueAsListOfDefs("params");
    if (!params.empty()) {
      os << "static const ::parc::rt::KernelParam rtParams" << id << "[] = {\n";
      for (const Record *p : params) {
        const Record *kind = p->getValueAsDef("kind");
        os << formatv("  {{\"{0}\", \"{1}\", rtParamIs{2}, {3}, {4}},\n",
                      p->getValueAsString("name"),
                      kind->getValueAsString("summary"), kind->getName(),
                      p->getValueAsBit("optional") ? "true" : "false",
                      p->getValueAsBit("annotation") ? "true" : "false");
      }
      os << "};\n";
    }
    os << "static const ::llvm::StringRef rtProducers" << id << "[] = {";
    for (StringRef producer : k->getValueAsListOfStrings("producers"))
      os << "\"" << producer << "\", ";
    os << "};\n";
  }
  os << "\nstatic const ::parc::rt::KernelDecl rtKernelTable[] = {\n";
  for (const Record *k : kernels) {
    std::string id = camel(k->getValueAsString("name"));
    const Record *entry = k->getValueAsDef("entry");
    bool hasParams = !k->getValueAsListOfDefs("params").empty();
    os << formatv(
        "  {{\"{0}\", ::parc::rt::Kernel::{1}, "
        "::parc::rt::KernelFamily::{11}, \"{2}\", {3}, {4}, "
        "{5}, {6}, {7}, {8}, \"{9}\", {10}, rtProducers{1}},\n",
        k->getValueAsString("name"), id, entry->getValueAsString("symbol"),
        k->getValueAsInt("minIns"), k->getValueAsInt("maxIns"),
        k->getValueAsInt("minOuts"), k->getValueAsInt("maxOuts"),
        entry->getValueAsBit("hasStart") ? "true" : "false",
        k->getValueAsBit("sameElementType") ? "true" : "false",
        k->getValueAsString("operands"),
        hasParams ? "rtParams" + id
                  : "::llvm::ArrayRef<::parc::rt::KernelParam>()",
        k->getValueAsDef("family")->getName().drop_front(strlen("RT_Family")));
  }
  os << "};\n\n";
  // Arity of every C entry (and _start form) generated code calls.
  os << "static const ::parc::rt::EntryDecl rtEntryTable[] = {\n";
  for (const Record *e : sortedDefs(records, "RT_Entry")) {
    size_t n = e->getValueAsListOfStrings("params").size();
    StringRef support = e->getValueAsBit("support") ? "true" : "false";
    os << formatv("  {{\"{0}\", {1}, {2}},\n", e->getValueAsString("symbol"), n,
                  support);
    if (e->getValueAsBit("hasStart"))
      os << formatv("  {{\"{0}_start\", {1}, {2}},\n",
                    e->getValueAsString("symbol"), n + 1, support);
  }
  // runtime.h functions generated code does not call, and why.
  os << "};\n\nstatic const ::parc::rt::RuntimeOnlyEntry "
        "rtRuntimeOnlyTable[] = {\n";
  for (const Record *r : sortedDefs(records, "RT_RuntimeOnly"))
    for (StringRef symbol : r->getValueAsListOfStrings("symbols"))
      os << formatv("  {{\"{0}\", \"{1}\"},\n", symbol,
                    r->getValueAsString("why"));
  os << "};\n\nstatic const ::parc::rt::NoKernelOp rtNoKernelTable[] = {\n";
  for (const Record *r : sortedDefs(records, "RT_NoKernel"))
    os << formatv("  {{\"{0}\", \"{1}\"},\n", r->getValueAsString("op"),
                  r->getValueAsString("how"));
  os << "};\n";
  return false;
}

bool emitAbiCheck(raw_ostream &os, const RecordKeeper &records) {
  emitSourceFileHeader("runtime.h against dialects/rt/RTKernels.td", os,
                       records);
  os << "#include \"parc/program.h\"\n\n#include <type_traits>\n\n";
  auto check = [&](StringRef symbol, const std::string &type) {
    os << formatv("static_assert(std::is_same_v<decltype(&{0}), {1}>,\n"
                  "              \"{0} is not `{1}` as dialects/rt/"
                  "RTKernels.td declares it\");\n",
                  symbol, type);
  };
  for (const Record *e : sortedDefs(records, "RT_Entry")) {
    StringRef symbol = e->getValueAsString("symbol");
    check(symbol, pointerType(e));
    if (e->getValueAsBit("hasStart"))
      check((symbol + "_start").str(), pointerType(e, "parc_rt_request_t **"));
  }
  return false;
}

bool dispatch(raw_ostream &os, const RecordKeeper &records) {
  switch (action) {
  case Action::KernelDecls:
    return emitDecls(os, records);
  case Action::KernelDefs:
    return emitDefs(os, records);
  case Action::AbiCheck:
    return emitAbiCheck(os, records);
  }
  llvm_unreachable("unknown action");
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  return TableGenMain(argv[0], TableGenMainFn(&dispatch));
}
