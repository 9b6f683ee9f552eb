#pragma once
// File helpers shared by every part. Writes are atomic: a temporary file in the same folder,
// then rename, so a reader never sees half a file.
#include <cstdint>
#include <string>
#include <vector>

namespace spyre {

std::vector<uint8_t> read_file_bytes(const std::string& path);  // throws spyre::Error
std::string read_file_text(const std::string& path);
void write_file_atomic(const std::string& path, const void* data, size_t size);
inline void write_file_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, text.data(), text.size());
}

}  // namespace spyre
