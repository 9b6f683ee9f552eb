#pragma once
// One error type for every edge of spyre-sim: loaders, parsers, the compiler and the
// simulator throw it; the CLI turns it into a message and exit status 2 (bad input).
#include <stdexcept>
#include <string>

namespace spyre {

class Error : public std::runtime_error {
 public:
  // `where` names the file, field, node or instruction; `what` says what was expected.
  Error(std::string where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(std::move(where)) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

}  // namespace spyre
