// Plain value types shared by the whole core. No Node, no HTTP, no SQLite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tts {

// Element types of CONTRACT.md section 2, named as NumPy names them.
enum class DType : uint8_t { F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8, Bool };

// "float64", "uint8", ... ; throws InvalidArgument for an unknown name.
DType dtype_from_name(const std::string& name);
const char* dtype_name(DType t);
std::size_t dtype_size(DType t);
bool dtype_is_integer(DType t);  // integers and bool

// Every error the core raises on bad input. The binding turns it into a JS TypeError/RangeError
// with the same message; anything else escaping the core is an internal error.
struct InvalidArgument : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Errors of a reconstruction measured against a reference, as CONTRACT.md section 3 defines them:
// x the reference as float64, y the reconstruction after the cast to its dtype, as float64.
struct Fingerprint {
  double frobenius_error = 0;  // ||x - y||_2
  double max_abs_error = 0;    // max |x - y|
  double relative_error = 0;   // ||x - y||_2 / ||x||_2 (0 when x == 0 and y == x; inf when x == 0, y != 0)
  double reference_norm = 0;   // ||x||_2
};

}  // namespace tts
