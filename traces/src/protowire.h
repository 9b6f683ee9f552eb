#pragma once
// Protobuf wire-format appenders (varint, fixed64, length-delimited) used by the Perfetto
// writer. Appends to a std::string.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace spyre::traces::pb {

inline void varint(std::string& o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  o.push_back(static_cast<char>(v));
}
inline void tag(std::string& o, int field, int wire) {
  varint(o, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire));
}
inline void u64(std::string& o, int field, uint64_t v) {
  tag(o, field, 0);
  varint(o, v);
}
inline void i64(std::string& o, int field, int64_t v) {  // int64: two's complement varint
  u64(o, field, static_cast<uint64_t>(v));
}
inline void f64(std::string& o, int field, double v) {
  tag(o, field, 1);
  char b[8];
  std::memcpy(b, &v, 8);
  o.append(b, 8);
}
inline void fixed64(std::string& o, int field, uint64_t v) {
  tag(o, field, 1);
  for (int i = 0; i < 8; ++i) o.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void bytes(std::string& o, int field, std::string_view s) {
  tag(o, field, 2);
  varint(o, s.size());
  o.append(s.data(), s.size());
}

}  // namespace spyre::traces::pb
