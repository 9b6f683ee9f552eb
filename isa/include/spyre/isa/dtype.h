#pragma once
// Element types the chip stores, with sizes and fp16/bf16/fp8 conversion.
//
// Sub-byte elements (I4): two per byte, low nibble first. Element index e of an operand whose
// base is the byte address `base` lies in byte base + floor(e / 2), nibble e mod 2 (0 = bits
// 3..0, 1 = bits 7..4), as two's-complement 4-bit integers. Addresses stay byte addresses;
// element strides (lda, rs, cs, tensor strides) stay in elements. dtype_size_bytes() has no
// answer for I4 and throws: code that works in whole bytes either uses dtype_bits() /
// dtype_storage_bytes() / the indexed load_element() or rejects I4 by name.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace spyre::isa {

// Codes are the binary format's: new types are appended, existing codes never change.
//   F8E4M3: OCP FP8 E4M3FN (1 sign, 4 exponent bits bias 7, 3 mantissa bits; no infinities,
//           0x7f/0xff NaN, max finite 448, subnormals down to 2^-9).
//   I4:     signed 4-bit integer [-8, 7], two per byte (see above).
enum class DType : uint8_t {
  F16 = 0,
  BF16 = 1,
  F32 = 2,
  I8 = 3,
  I32 = 4,
  I64 = 5,
  Bool = 6,
  F8E4M3 = 7,
  I4 = 8
};
constexpr int kNumDTypes = 9;

int dtype_bits(DType dt);  // 4, 8, 16, 32 or 64
// Whole bytes per element; throws spyre::Error for I4 (half a byte), naming the alternatives.
int dtype_size_bytes(DType dt);
// Bytes that `elements` consecutive elements occupy: ceil(elements * bits / 8).
int64_t dtype_storage_bytes(DType dt, int64_t elements);
bool dtype_is_float(DType dt);  // F16, BF16, F32, F8E4M3
// "f16", "bf16", "f32", "i8", "i32", "i64", "bool", "f8e4m3", "i4"
std::string_view dtype_name(DType dt);
// Accepts our short names and torch's ("float16", "torch.float16", ...); throws spyre::Error.
DType dtype_from_name(std::string_view name);
bool dtype_valid(int64_t code);

// IEEE binary16 <-> binary32 in integer arithmetic: round to nearest even, NaNs quietened with
// their payload's top bits kept, bit for bit what the compiler's _Float16 conversions give
// (IsaDtype.SoftHalfConversionsEqualFloat16, every half and a stride through every float).
// They serve compilers without _Float16 on x86 (clang before 15 builds the fuzz targets).
inline float f16_to_f32_soft(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu, u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u);
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    u = sign;
  } else {  // subnormal: man * 2^-24, normalised
    uint32_t e = 113;
    while (!(man & 0x400u)) man <<= 1, --e;
    u = sign | (e << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f32_to_f16_soft(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t exp = (u >> 23) & 0xffu;
  const uint32_t man = u & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
  const int32_t e = static_cast<int32_t>(exp) - 112;  // rebias 127 -> 15
  // The kept bits, the dropped ones and half a unit of the last kept one; a carry out of the
  // mantissa moves into the exponent (up to infinity), as rounding should.
  const uint32_t full = e >= 1 ? man : (man | 0x800000u);
  const uint32_t shift = e >= 1 ? 13u : static_cast<uint32_t>(14 - e);
  if (shift > 24) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  uint32_t half = (e >= 1 ? static_cast<uint32_t>(e) << 10 : 0u) | (full >> shift);
  const uint32_t rest = full & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | (half >= 0x7c00u ? 0x7c00u : half));
}

#ifdef __FLT16_MANT_DIG__  // the compiler has _Float16
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
#else
inline float f16_to_f32(uint16_t h) { return f16_to_f32_soft(h); }
inline uint16_t f32_to_f16(float f) { return f32_to_f16_soft(f); }
#endif
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

// OCP FP8 E4M3FN. Decoding is exact. Encoding rounds to nearest, ties to even (from double,
// so there is no double rounding through float), and saturates: finite values beyond 448 and
// +-infinity become +-448 (0x7e / 0xfe; the OCP "satfinite" mode, as NVIDIA's
// cvt.satfinite.e4m3x2 and a quantising compiler want), NaN becomes 0x7f with its sign (0xff).
// -0 stays -0 (0x80); values below half the smallest subnormal (2^-10) become signed zero.
float f8e4m3_to_f32(uint8_t b);
uint8_t f64_to_f8e4m3(double v);
inline uint8_t f32_to_f8e4m3(float f) { return f64_to_f8e4m3(static_cast<double>(f)); }

// I4 nibbles: the value of nibble `nibble` (0 low, 1 high) of `byte`, and `byte` with that
// nibble replaced by the low 4 bits of `v`.
inline int i4_get(uint8_t byte, int nibble) {
  const int u = (byte >> (4 * (nibble & 1))) & 0xf;
  return u >= 8 ? u - 16 : u;
}
inline uint8_t i4_set(uint8_t byte, int nibble, int v) {
  const int sh = 4 * (nibble & 1);
  return static_cast<uint8_t>((byte & ~(0xf << sh)) | ((v & 0xf) << sh));
}

// Read and write one element of type dt at p, through double (exact for all our types
// except i64 beyond 2^53, which the SFP does not compute on). Integer stores truncate toward
// zero and saturate (I4 to [-8, 7]); NaN stores 0. p is a byte address, so these throw
// spyre::Error for I4: use the indexed forms below.
double load_element(const uint8_t* p, DType dt);
void store_element(uint8_t* p, DType dt, double v);

// Element `index` (in elements, may be negative) of an operand at byte address `base`: byte
// base + index * bytes for whole-byte types; for I4 byte base + floor(index / 2), nibble
// index mod 2. The store changes only that element's nibble.
double load_element(const uint8_t* base, DType dt, int64_t index);
void store_element(uint8_t* base, DType dt, int64_t index, double v);
// Byte offset of element `index` from the operand's base: floor(index * bits / 8).
int64_t dtype_byte_offset(DType dt, int64_t index);

}  // namespace spyre::isa
