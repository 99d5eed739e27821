// RUN: parc-opt %s --dist-annotate=tp=0 -verify-diagnostics

// expected-error @+1 {{tp must be at least 1, not 0}}
module {
  func.func @main() {
    return
  }
}
