// DType names and sizes (CONTRACT.md section 2: NumPy names).
#include "ttstore/types.hpp"

namespace tts {

namespace {
struct DTypeInfo {
  DType t;
  const char* name;
  std::size_t size;
  bool integer;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "float64", 8, false}, {DType::F32, "float32", 4, false},
    {DType::F16, "float16", 2, false}, {DType::I64, "int64", 8, true},
    {DType::I32, "int32", 4, true},    {DType::I16, "int16", 2, true},
    {DType::I8, "int8", 1, true},      {DType::U64, "uint64", 8, true},
    {DType::U32, "uint32", 4, true},   {DType::U16, "uint16", 2, true},
    {DType::U8, "uint8", 1, true},     {DType::Bool, "bool", 1, true},
};
const DTypeInfo& info(DType t) {
  for (const auto& d : kDTypes) {
    if (d.t == t) return d;
  }
  throw InvalidArgument("unknown dtype code " + std::to_string(static_cast<int>(t)));
}
}  // namespace

DType dtype_from_name(const std::string& name) {
  for (const auto& d : kDTypes) {
    if (name == d.name) return d.t;
  }
  throw InvalidArgument("unknown dtype '" + name +
                        "' (expected float64, float32, float16, int64, int32, int16, int8, uint64, "
                        "uint32, uint16, uint8 or bool)");
}
const char* dtype_name(DType t) { return info(t).name; }
std::size_t dtype_size(DType t) { return info(t).size; }
bool dtype_is_integer(DType t) { return info(t).integer; }

}  // namespace tts
