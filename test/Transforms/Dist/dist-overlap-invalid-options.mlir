// RUN: parc-opt %s --dist-overlap='chunks=-1' -verify-diagnostics

// expected-error @+1 {{dist-overlap: chunks must be non-negative, min-rows at least 1 and memory-budget non-negative}}
module {
}
