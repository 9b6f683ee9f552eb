#include "spyre/traces/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spyre/error.h"

namespace spyre::traces {

AtomicFile::AtomicFile(std::string path, const char* mode)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  f_ = std::fopen(tmp_.c_str(), mode);
  if (!f_) throw Error(path_, std::string("cannot open for writing: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!f_) return;
  std::fclose(f_);
  std::remove(tmp_.c_str());
}

void AtomicFile::commit() {
  if (!f_) return;
  const bool ok = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    throw Error(path_, std::string("cannot write: ") + std::strerror(err));
  }
}

}  // namespace spyre::traces
