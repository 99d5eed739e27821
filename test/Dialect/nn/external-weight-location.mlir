// RUN: parc-opt %s --split-input-file --verify-diagnostics

// The weight writer reads an external weight's location relative to the
// model's folder: IR naming a path outside it is invalid.
// expected-error @below {{'nn.external_weight' op may not read '../../etc/passwd': its location has a '..' component}}
%w = nn.external_weight {length = 8 : i64, location = "../../etc/passwd", name = "W", offset = 0 : i64} : tensor<2xf32>

// -----

// expected-error @below {{'nn.external_weight' op may not read '/etc/passwd': its location is an absolute path}}
%w = nn.external_weight {length = 8 : i64, location = "/etc/passwd", name = "W", offset = 0 : i64} : tensor<2xf32>
