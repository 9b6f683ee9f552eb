#pragma once
// An output file written under a temporary name (`<path>.tmp.<pid>`) and renamed into place by
// commit(), so a reader never sees half of it and an existing file is only replaced by a
// complete one. Destroyed uncommitted (an error, an exception), the temporary is removed.
#include <cstdio>
#include <string>

namespace spyre::traces {

class AtomicFile {
 public:
  // Opens the temporary with fopen `mode`; throws spyre::Error naming `path` on failure.
  AtomicFile(std::string path, const char* mode);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  FILE* get() const { return f_; }  // null once committed
  // Closes and renames into place; throws spyre::Error naming the path if either fails.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
};

}  // namespace spyre::traces
