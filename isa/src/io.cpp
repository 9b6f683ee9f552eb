#include "spyre/io.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "spyre/error.h"

namespace spyre {

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path, std::string("cannot open for reading: ") + std::strerror(errno));
  // In blocks, the first one the file's size when it has one (a pipe or /proc file has none):
  // a program cache entry is tens of MB, which a byte-wise stream iterator reads ten times
  // slower.
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::vector<uint8_t> out;
  size_t block = ec ? size_t{1} << 16 : static_cast<size_t>(size) + 1;
  for (;;) {
    const size_t have = out.size();
    out.resize(have + block);
    f.read(reinterpret_cast<char*>(out.data() + have), static_cast<std::streamsize>(block));
    out.resize(have + static_cast<size_t>(f.gcount()));
    if (!f) break;
    block = std::max(block, have);  // doubles the buffer when the file keeps growing
  }
  if (f.bad()) throw Error(path, std::string("cannot read: ") + std::strerror(errno));
  return out;
}

std::string read_file_text(const std::string& path) {
  auto b = read_file_bytes(path);
  return std::string(b.begin(), b.end());
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(path, std::string("cannot open for writing: ") + std::strerror(errno));
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path, std::string("cannot write: ") + std::strerror(errno));
  }
}

}  // namespace spyre
