#include "spyre/isa/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>

#include "spyre/error.h"

namespace spyre::isa {

namespace {
struct DTypeRow {
  DType dt;
  int bits;
  std::string_view name;
  std::string_view torch_name;
};
constexpr DTypeRow kRows[] = {
    {DType::F16, 16, "f16", "float16"}, {DType::BF16, 16, "bf16", "bfloat16"},
    {DType::F32, 32, "f32", "float32"}, {DType::I8, 8, "i8", "int8"},
    {DType::I32, 32, "i32", "int32"},   {DType::I64, 64, "i64", "int64"},
    {DType::Bool, 8, "bool", "bool"},   {DType::F8E4M3, 8, "f8e4m3", "float8_e4m3fn"},
    {DType::I4, 4, "i4", "int4"},
};
static_assert(std::size(kRows) == kNumDTypes, "one row per DType, in code order");

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace

bool dtype_valid(int64_t code) { return code >= 0 && code < kNumDTypes; }
int dtype_bits(DType dt) { return kRows[static_cast<int>(dt)].bits; }
int dtype_size_bytes(DType dt) {
  const int bits = dtype_bits(dt);
  if (bits % 8 != 0)
    throw Error("dtype " + std::string(dtype_name(dt)),
                "has " + std::to_string(bits) +
                    "-bit elements (two per byte), no whole-byte size; this operation does "
                    "not support it");
  return bits / 8;
}
int64_t dtype_storage_bytes(DType dt, int64_t elements) {
  return (elements * dtype_bits(dt) + 7) / 8;
}
bool dtype_is_float(DType dt) {
  return dt == DType::F16 || dt == DType::BF16 || dt == DType::F32 || dt == DType::F8E4M3;
}
std::string_view dtype_name(DType dt) { return kRows[static_cast<int>(dt)].name; }

float f8e4m3_to_f32(uint8_t b) {
  const int exp = (b >> 3) & 0xf, man = b & 7;
  float mag;
  if (exp == 0xf && man == 7)
    mag = std::numeric_limits<float>::quiet_NaN();
  else if (exp == 0)
    mag = std::ldexp(static_cast<float>(man), -9);  // subnormal: man * 2^-6 / 8
  else
    mag = std::ldexp(static_cast<float>(8 + man), exp - 10);  // (1 + man/8) * 2^(exp-7)
  return (b & 0x80) ? -mag : mag;
}

uint8_t f64_to_f8e4m3(double v) {
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  if (std::isnan(v)) return sign | 0x7f;
  const double a = std::fabs(v);
  if (a >= 448.0) return sign | 0x7e;  // satfinite: overflow and infinity saturate to 448
  if (a == 0.0) return sign;           // frexp(0) has no binade
  // Quantum of a's binade (2^(e-3) for normals, 2^-9 below the smallest normal 2^-6); a / q
  // is exact, nearbyint rounds it to nearest even (the default rounding mode).
  int e2 = 0;
  std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1): floor(log2 a) = e2 - 1
  const int e = std::max(e2 - 1, -6);
  const int n = static_cast<int>(std::nearbyint(std::ldexp(a, 3 - e)));  // 0 .. 16
  // Exponent field e + 7 holds 8 + mantissa; n = 16 carries into the next binade and, for
  // e = -6, n < 8 is a subnormal (field 0): both fall out of the same sum.
  return sign | static_cast<uint8_t>(((e + 7) << 3) + n - 8);
}

DType dtype_from_name(std::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  for (const auto& r : kRows)
    if (name == r.name || name == r.torch_name) return r.dt;
  if (name == "half") return DType::F16;
  if (name == "float") return DType::F32;
  throw Error("dtype", "unsupported dtype '" + std::string(name) +
                           "' (expected f16, bf16, f32, i8, i32, i64, bool, f8e4m3 or i4)");
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
    case DType::F8E4M3: return f8e4m3_to_f32(*p);
    case DType::I4: break;
  }
  throw Error("dtype i4", "elements are nibbles: load_element needs the element index");
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
    case DType::F8E4M3: *p = f64_to_f8e4m3(v); return;
    case DType::I4: break;
  }
  throw Error("dtype i4", "elements are nibbles: store_element needs the element index");
}

int64_t dtype_byte_offset(DType dt, int64_t index) { return floor_div(index * dtype_bits(dt), 8); }

double load_element(const uint8_t* base, DType dt, int64_t index) {
  if (dt == DType::I4) return i4_get(base[floor_div(index, 2)], static_cast<int>(index & 1));
  return load_element(base + index * dtype_size_bytes(dt), dt);
}

void store_element(uint8_t* base, DType dt, int64_t index, double v) {
  if (dt == DType::I4) {
    uint8_t* p = base + floor_div(index, 2);
    double x = std::isnan(v) ? 0.0 : std::trunc(std::fmin(std::fmax(v, -8.0), 7.0));
    *p = i4_set(*p, static_cast<int>(index & 1), static_cast<int>(x));
    return;
  }
  store_element(base + index * dtype_size_bytes(dt), dt, v);
}

}  // namespace spyre::isa
