#pragma once
// Element types the chip stores, with sizes and fp16/bf16 conversion.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace spyre::isa {

enum class DType : uint8_t { F16 = 0, BF16 = 1, F32 = 2, I8 = 3, I32 = 4, I64 = 5, Bool = 6 };
constexpr int kNumDTypes = 7;

int dtype_size_bytes(DType dt);
std::string_view dtype_name(DType dt);  // "f16", "bf16", "f32", "i8", "i32", "i64", "bool"
// Accepts our short names and torch's ("float16", "torch.float16", ...); throws spyre::Error.
DType dtype_from_name(std::string_view name);
bool dtype_valid(int64_t code);

inline float f16_to_f32(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}
inline uint16_t f32_to_f16(float f) {  // round to nearest even, as the hardware converts
  _Float16 v = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return h;
}
inline float bf16_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// Read and write one element of type dt at p, through double (exact for all our types
// except i64 beyond 2^53, which the SFP does not compute on).
double load_element(const uint8_t* p, DType dt);
void store_element(uint8_t* p, DType dt, double v);

}  // namespace spyre::isa
