//===- OptionRef.cpp - a driver's wording of library option references ----===//

#include "parc/Support/OptionRef.h"

using namespace llvm;

std::string parc::respellOptionRefs(StringRef message,
                                    OptionRespeller respell) {
  static constexpr StringLiteral kOpen = "option '";
  std::string out;
  while (!message.empty()) {
    size_t at = message.find(kOpen);
    size_t end = at == StringRef::npos
                     ? StringRef::npos
                     : message.find('\'', at + kOpen.size());
    if (end == StringRef::npos)
      break;
    StringRef ref = message.slice(at + kOpen.size(), end);
    auto [name, value] = ref.split('=');
    std::optional<std::string> words =
        respell(name, ref.contains('=') ? std::optional<StringRef>(value)
                                        : std::nullopt);
    out += message.take_front(at).str();
    out += words ? *words : message.slice(at, end + 1).str();
    message = message.drop_front(end + 1);
  }
  return out + message.str();
}
