#pragma once
// A small JSON Schema (draft 2020-12) validator for the IR schema
// (compiler/frontend/schema/ir-v1.schema.json). It implements exactly the keywords that file
// uses (see `supported_keywords()`); a schema with any other keyword is refused when it is
// compiled, so a keyword added to the schema file can never be silently ignored.
//
// Supported: type, const, enum, required, properties, additionalProperties (schema or bool),
// items (one schema for every item), minItems, maxItems, minLength, minimum, pattern
// (ECMAScript, searched as the spec says), allOf, anyOf, not, if/then/else, $ref (to a JSON
// pointer inside the same document, e.g. "#/$defs/op"), $defs, boolean schemas (true/false),
// and the annotations $schema, $id, title, description (ignored).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spyre::compiler::json_schema {

// One step of an instance location: an object key or an array index.
struct PathItem {
  std::string key;  // empty when `is_index`
  size_t index = 0;
  bool is_index = false;
};
using Path = std::vector<PathItem>;

// "nodes[3].sizes[1]"; empty for the document itself.
std::string path_string(const Path& path);

// The first violation found (keywords are checked in a fixed order, so it is deterministic).
struct Violation {
  Path path;            // where in the instance; a missing or unknown field ends with its key
  std::string message;  // "expected integer, got string", "missing", "unknown field ..."
  std::string schema_location;  // JSON pointer of the failing keyword, e.g. "#/$defs/op/required"
};

// The keywords `Schema` understands, in alphabetical order.
const std::vector<std::string>& supported_keywords();

class Schema {
 public:
  // Compiles `schema`; throws spyre::Error("schema <pointer>", ...) on an unsupported keyword,
  // a malformed keyword value or a $ref that does not resolve.
  explicit Schema(const nlohmann::json& schema);
  // Keeps the schema's key order, so `properties` are checked in the order they are written.
  explicit Schema(const nlohmann::ordered_json& schema);
  // Parses JSON text (as ordered_json); throws spyre::Error("schema", ...) when it is not JSON.
  static Schema parse(const std::string& text);
  ~Schema();
  Schema(Schema&&) noexcept;
  Schema& operator=(Schema&&) noexcept;

  // nullopt when `instance` is valid.
  std::optional<Violation> validate(const nlohmann::json& instance) const;
  bool is_valid(const nlohmann::json& instance) const { return !validate(instance); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spyre::compiler::json_schema
