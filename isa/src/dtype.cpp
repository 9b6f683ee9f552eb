#include "spyre/isa/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "spyre/error.h"

namespace spyre::isa {

namespace {
struct DTypeRow {
  DType dt;
  int size;
  std::string_view name;
  std::string_view torch_name;
};
constexpr DTypeRow kRows[] = {
    {DType::F16, 2, "f16", "float16"}, {DType::BF16, 2, "bf16", "bfloat16"},
    {DType::F32, 4, "f32", "float32"}, {DType::I8, 1, "i8", "int8"},
    {DType::I32, 4, "i32", "int32"},   {DType::I64, 8, "i64", "int64"},
    {DType::Bool, 1, "bool", "bool"},
};
}  // namespace

bool dtype_valid(int64_t code) { return code >= 0 && code < kNumDTypes; }
int dtype_size_bytes(DType dt) { return kRows[static_cast<int>(dt)].size; }
std::string_view dtype_name(DType dt) { return kRows[static_cast<int>(dt)].name; }

DType dtype_from_name(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  for (const auto& r : kRows)
    if (name == r.name || name == r.torch_name) return r.dt;
  if (name == "half") return DType::F16;
  if (name == "float") return DType::F32;
  throw Error("dtype", "unsupported dtype '" + std::string(name) +
                           "' (expected f16, bf16, f32, i8, i32, i64 or bool)");
}

double load_element(const uint8_t* p, DType dt) {
  switch (dt) {
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return f16_to_f32(h);
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_f32(h);
    }
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::I8: return static_cast<int8_t>(*p);
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::Bool: return *p ? 1.0 : 0.0;
  }
  return 0.0;
}

namespace {
template <typename T>
T saturate_int(double v) {
  if (std::isnan(v)) return 0;
  double lo = static_cast<double>(std::numeric_limits<T>::min());
  double hi = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(std::trunc(std::fmin(std::fmax(v, lo), hi)));
}
}  // namespace

void store_element(uint8_t* p, DType dt, double v) {
  switch (dt) {
    case DType::F16: {
      uint16_t h = f32_to_f16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::BF16: {
      uint16_t h = f32_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::I8: {
      int8_t x = saturate_int<int8_t>(v);
      std::memcpy(p, &x, 1);
      return;
    }
    case DType::I32: {
      int32_t x = saturate_int<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::I64: {
      int64_t x = saturate_int<int64_t>(v);
      std::memcpy(p, &x, 8);
      return;
    }
    case DType::Bool: *p = (v != 0.0) ? 1 : 0; return;
  }
}

}  // namespace spyre::isa
