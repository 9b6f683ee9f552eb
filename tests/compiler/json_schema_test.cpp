// The JSON Schema validator on its own: each keyword, $ref, the error paths and messages, and
// the refusal of keywords it does not implement.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "spyre/compiler/ir.h"
#include "spyre/compiler/json_schema.h"
#include "spyre/error.h"

namespace spyre::compiler::json_schema {
namespace {

using nlohmann::json;

// "<path>: <message>" of the first violation, or "valid".
std::string check(const json& schema, const json& instance) {
  auto v = Schema(schema).validate(instance);
  if (!v) return "valid";
  std::string p = path_string(v->path);
  return (p.empty() ? "" : p + ": ") + v->message;
}

std::string compile_error(const json& schema) {
  try {
    Schema s(schema);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonSchema, PathString) {
  EXPECT_EQ(path_string({}), "");
  EXPECT_EQ(path_string({{"nodes", 0, false}, {"", 3, true}, {"sizes", 0, false}, {"", 1, true}}),
            "nodes[3].sizes[1]");
  EXPECT_EQ(path_string({{"", 0, true}, {"a", 0, false}}), "[0].a");
}

TEST(JsonSchema, Type) {
  json s = {{"type", "integer"}};
  EXPECT_EQ(check(s, 3), "valid");
  EXPECT_EQ(check(s, -3), "valid");
  EXPECT_EQ(check(s, 3.0), "valid");  // the spec: a number with no fraction is an integer
  EXPECT_EQ(check(s, 3.5), "expected integer, got number");
  // Whole numbers beyond int64 (the fuzzer's 3.2e63 was cast to int64 first: undefined).
  EXPECT_EQ(check(s, 3.2e63), "valid");
  EXPECT_EQ(check(s, 1e300), "valid");
  EXPECT_EQ(check(s, 2.5e-300), "expected integer, got number");
  EXPECT_EQ(check(s, "3"), "expected integer, got string");
  EXPECT_EQ(check(s, json::array()), "expected integer, got array");
  EXPECT_EQ(check({{"type", "number"}}, 3), "valid");
  EXPECT_EQ(check({{"type", "number"}}, 3.5), "valid");
  EXPECT_EQ(check({{"type", "number"}}, true), "expected number, got boolean");
  EXPECT_EQ(check({{"type", "boolean"}}, false), "valid");
  EXPECT_EQ(check({{"type", "boolean"}}, 0), "expected boolean, got integer");
  EXPECT_EQ(check({{"type", "null"}}, nullptr), "valid");
  EXPECT_EQ(check({{"type", "null"}}, json::object()), "expected null, got object");
  EXPECT_EQ(check({{"type", "string"}}, "x"), "valid");
  EXPECT_EQ(check({{"type", "array"}}, json::array()), "valid");
  EXPECT_EQ(check({{"type", "object"}}, json::object()), "valid");
  EXPECT_EQ(check({{"type", "object"}}, nullptr), "expected object, got null");
  json two = {{"type", {"string", "null"}}};
  EXPECT_EQ(check(two, nullptr), "valid");
  EXPECT_EQ(check(two, "a"), "valid");
  EXPECT_EQ(check(two, 1), "expected string or null, got integer");
}

TEST(JsonSchema, ConstAndEnum) {
  EXPECT_EQ(check({{"const", 1}}, 1), "valid");
  EXPECT_EQ(check({{"const", 1}}, 1.0), "valid");  // equal numbers
  EXPECT_EQ(check({{"const", 1}}, 2), "expected 1, got 2");
  EXPECT_EQ(check({{"const", 1}}, true), "expected 1, got true");
  EXPECT_EQ(check({{"const", "a"}}, "b"), "expected \"a\", got \"b\"");
  EXPECT_EQ(check({{"const", nullptr}}, "b"), "expected null, got \"b\"");
  json e = {{"enum", {"sum", "max", 3}}};
  EXPECT_EQ(check(e, "max"), "valid");
  EXPECT_EQ(check(e, 3), "valid");
  EXPECT_EQ(check(e, "min"), "expected one of \"sum\", \"max\" or 3, got \"min\"");
  EXPECT_EQ(check(e, json::array({1})), "expected one of \"sum\", \"max\" or 3, got array");
  // A long value is cut in messages.
  std::string lng(100, 'x');
  std::string msg = check({{"const", "a"}}, lng);
  EXPECT_LT(msg.size(), 80u) << msg;
  EXPECT_NE(msg.find("..."), std::string::npos);
}

TEST(JsonSchema, NumbersStringsAndArrays) {
  json min = {{"type", "integer"}, {"minimum", 0}};
  EXPECT_EQ(check(min, 0), "valid");
  EXPECT_EQ(check(min, -1), "expected >= 0, got -1");
  EXPECT_EQ(check({{"minimum", 0.5}}, 0.25), "expected >= 0.5, got 0.25");
  EXPECT_EQ(check({{"minimum", 0}}, "not a number"), "valid");  // minimum applies to numbers
  EXPECT_EQ(check({{"minimum", 0}}, json(18446744073709551615ull)), "valid");

  EXPECT_EQ(check({{"minLength", 1}}, "a"), "valid");
  EXPECT_EQ(check({{"minLength", 1}}, ""), "expected a non-empty string, got \"\"");
  EXPECT_EQ(check({{"minLength", 3}}, "ab"), "expected at least 3 characters, got \"ab\"");
  EXPECT_EQ(check({{"minLength", 2}}, "\xc3\xa9"),
            "expected at least 2 characters, got \"\xc3\xa9\"")
      << "code points, not bytes";
  EXPECT_EQ(check({{"minLength", 1}}, 5), "valid");

  json pat = {{"pattern", "^v[0-9]+(\\.[0-9]+)?$"}};
  EXPECT_EQ(check(pat, "v12"), "valid");
  EXPECT_EQ(check(pat, "v12.0"), "valid");
  EXPECT_EQ(check(pat, "v12.x"),
            "expected a string matching /^v[0-9]+(\\.[0-9]+)?$/, got \"v12.x\"");
  EXPECT_EQ(check({{"pattern", ":[0-9]+$"}}, "model.py:17"), "valid") << "searched, not anchored";
  EXPECT_EQ(check({{"pattern", ":[0-9]+$"}}, "model.py"),
            "expected a string matching /:[0-9]+$/, got \"model.py\"");

  EXPECT_EQ(check({{"minItems", 1}}, json::array()), "expected at least 1 item, got 0 items");
  EXPECT_EQ(check({{"minItems", 1}, {"maxItems", 1}}, {1, 2}),
            "expected at most 1 item, got 2 items");
  EXPECT_EQ(check({{"maxItems", 0}}, {1}), "expected an empty array, got 1 item");
  EXPECT_EQ(check({{"maxItems", 0}}, json::array()), "valid");
  EXPECT_EQ(check({{"minItems", 1}}, "not an array"), "valid");

  json items = {{"type", "array"}, {"items", {{"type", "integer"}}}};
  EXPECT_EQ(check(items, {1, 2, 3}), "valid");
  EXPECT_EQ(check(items, {1, "2", 3}), "[1]: expected integer, got string");
}

TEST(JsonSchema, Objects) {
  json s = {{"type", "object"},
            {"required", {"a", "b"}},
            {"properties", {{"a", {{"type", "integer"}}}, {"b", true}, {"c", false}}},
            {"additionalProperties", false}};
  EXPECT_EQ(check(s, {{"a", 1}, {"b", "anything"}}), "valid");
  EXPECT_EQ(check(s, {{"a", 1}}), "b: missing");
  EXPECT_EQ(check(s, {{"a", "1"}, {"b", 0}}), "a: expected integer, got string");
  EXPECT_EQ(check(s, {{"a", 1}, {"b", 0}, {"c", 0}}), "c: not allowed here");
  EXPECT_EQ(check(s, {{"a", 1}, {"b", 0}, {"zz", 0}}),
            "zz: unknown field (the IR schema does not allow it here)");
  json map = {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}};
  EXPECT_EQ(check(map, {{"x0", 256}, {"x1", 1}}), "valid");
  EXPECT_EQ(check(map, {{"x0", 256}, {"x1", "1"}}), "x1: expected integer, got string");
  // Keywords for other types do not apply.
  EXPECT_EQ(check({{"required", {"a"}}}, 3), "valid");
  // Properties are checked in the schema's order (an ordered schema keeps it).
  auto ordered =
      Schema::parse(R"({"properties": {"z": {"type": "string"}, "a": {"type": "string"}}})");
  auto v = ordered.validate({{"a", 1}, {"z", 2}});
  ASSERT_TRUE(v);
  EXPECT_EQ(path_string(v->path), "z");
}

TEST(JsonSchema, BooleanSchemas) {
  EXPECT_EQ(check(true, 1), "valid");
  EXPECT_EQ(check(false, 1), "not allowed here");
}

TEST(JsonSchema, AllOfAnyOfNot) {
  json all = {{"allOf", {{{"type", "integer"}}, {{"minimum", 2}}}}};
  EXPECT_EQ(check(all, 3), "valid");
  EXPECT_EQ(check(all, 1), "expected >= 2, got 1");
  // anyOf: alternatives that all fail right here are merged...
  json dtype = json::parse(R"({"anyOf": [{"enum": ["float16", "int8"]}, {"type": "null"}]})");
  EXPECT_EQ(check(dtype, nullptr), "valid");
  EXPECT_EQ(check(dtype, "int8"), "valid");
  EXPECT_EQ(check(dtype, "complex64"),
            "expected one of \"float16\", \"int8\" or null, got \"complex64\"");
  EXPECT_EQ(check(dtype, 3), "expected one of \"float16\", \"int8\" or null, got 3");
  // ... and the one that got deepest into the value is reported.
  json affine =
      json::parse(R"({"anyOf": [{"type": "null"}, {"type": "object", "required": ["offset"],
                                            "properties": {"offset": {"type": "integer"}}}]})");
  EXPECT_EQ(check(affine, {{"offset", "0"}}), "offset: expected integer, got string");
  EXPECT_EQ(check(affine, json::object()), "offset: missing");
  EXPECT_EQ(check(affine, "x"), "expected object or null, got string");
  // not: a forbidden key is named.
  json store =
      json::parse(R"({"not": {"anyOf": [{"required": ["id"]}, {"required": ["dtype"]}]}})");
  EXPECT_EQ(check(store, {{"op", "store"}}), "valid");
  EXPECT_EQ(check(store, {{"op", "store"}, {"dtype", "float16"}}), "dtype: not allowed here");
  auto other = Schema(json{{"not", {{"type", "string"}}}}).validate("s");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->message, "matches the schema at #/not, which it must not");
  EXPECT_EQ(other->schema_location, "#/not");
}

TEST(JsonSchema, IfThenElse) {
  json s = {{"if", {{"properties", {{"kind", {{"const", "view"}}}}}}},
            {"then", {{"required", {"view_of"}}}},
            {"else", {{"properties", {{"view_of", {{"type", "null"}}}}}}}};
  EXPECT_EQ(check(s, {{"kind", "view"}, {"view_of", "buf0"}}), "valid");
  EXPECT_EQ(check(s, {{"kind", "view"}}), "view_of: missing");
  EXPECT_EQ(check(s, {{"kind", "input"}}), "valid");
  EXPECT_EQ(check(s, {{"kind", "input"}, {"view_of", "buf0"}}),
            "view_of: expected null, got string");
  // then / else alone do nothing (the spec); if alone only annotates.
  EXPECT_EQ(check({{"then", false}}, 1), "valid");
  EXPECT_EQ(check({{"if", false}}, 1), "valid");
}

TEST(JsonSchema, RefsIntoDefsIncludingRecursion) {
  json s = {{"$defs",
             {{"name", {{"type", "string"}, {"minLength", 1}}},
              {"op",
               {{"type", "object"},
                {"required", {"id"}},
                {"properties",
                 {{"id", {{"$ref", "#/$defs/name"}}},
                  {"body", {{"type", "array"}, {"items", {{"$ref", "#/$defs/op"}}}}}}}}}}},
            {"type", "array"},
            {"items", {{"$ref", "#/$defs/op"}}}};
  json ok = json::parse(R"([{"id": "v0", "body": [{"id": "v1", "body": [{"id": "v2"}]}]}])");
  EXPECT_EQ(check(s, ok), "valid");
  json bad = ok;
  bad[0]["body"][0]["body"][0]["id"] = "";
  EXPECT_EQ(check(s, bad), "[0].body[0].body[0].id: expected a non-empty string, got \"\"");
  auto v = Schema(s).validate(bad);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->schema_location, "#/$defs/name/minLength");
  // A reference to the root.
  json tree = {{"type", "object"},
               {"properties", {{"kids", {{"type", "array"}, {"items", {{"$ref", "#"}}}}}}},
               {"additionalProperties", false}};
  EXPECT_EQ(check(tree, json::parse(R"({"kids": [{"kids": [{"x": 1}]}]})")),
            "kids[0].kids[0].x: unknown field (the IR schema does not allow it here)");
}

TEST(JsonSchema, UnsupportedKeywordsAreRefusedWhenCompiled) {
  EXPECT_NE(compile_error({{"oneOf", {true}}}).find("schema #: unsupported keyword 'oneOf'"),
            std::string::npos)
      << compile_error({{"oneOf", {true}}});
  // Also deep inside, and in a definition nothing references.
  EXPECT_NE(compile_error({{"properties", {{"a", {{"format", "date"}}}}}})
                .find("schema #/properties/a: unsupported keyword 'format'"),
            std::string::npos);
  EXPECT_NE(compile_error({{"$defs", {{"x", {{"maxLength", 3}}}}}})
                .find("schema #/$defs/x: unsupported keyword 'maxLength'"),
            std::string::npos);
  for (const char* k : {"maximum", "exclusiveMinimum", "patternProperties", "prefixItems",
                        "uniqueItems", "dependentRequired", "unevaluatedProperties", "contains",
                        "$anchor", "$dynamicRef", "propertyNames", "multipleOf", "minProperties"})
    EXPECT_NE(compile_error({{k, 1}}).find(std::string("unsupported keyword '") + k + "'"),
              std::string::npos)
        << k;
}

TEST(JsonSchema, MalformedKeywordValuesAreRefused) {
  EXPECT_EQ(compile_error({{"type", "float"}}), "schema #/type: unknown type 'float'");
  EXPECT_EQ(compile_error({{"required", "a"}}),
            "schema #/required: expected an array of property names");
  EXPECT_EQ(compile_error({{"$ref", "#/$defs/nope"}}),
            "schema #/$ref: reference #/$defs/nope does not resolve in this document");
  EXPECT_EQ(compile_error({{"$ref", "other.json#/x"}}),
            "schema #/$ref: expected a reference inside this document (\"#/...\"), got "
            "\"other.json#/x\"");
  EXPECT_NE(compile_error({{"pattern", "("}}).find("schema #/pattern: bad regular expression"),
            std::string::npos);
  EXPECT_EQ(compile_error({{"minItems", -1}}),
            "schema #/minItems: expected a non-negative integer, got -1");
  EXPECT_EQ(compile_error({{"anyOf", json::array()}}),
            "schema #/anyOf: expected a non-empty array of schemas");
  EXPECT_EQ(compile_error({{"items", {true, false}}}),
            "schema #/items: expected one schema for every item (the array form is not draft "
            "2020-12)");
  EXPECT_EQ(compile_error({{"$schema", "http://json-schema.org/draft-07/schema#"}}),
            "schema #/$schema: only draft 2020-12 is supported, got "
            "\"http://json-schema.org/draft-07/schema#\"");
  EXPECT_EQ(compile_error(json::parse(R"({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]},
                                                   "b": {"$ref": "#/$defs/a"}}})")),
            "schema #/$defs/a: $ref cycle that never descends into the value");
  EXPECT_EQ(compile_error(json::parse(R"({"$ref": "#"})")),
            "schema #: $ref cycle that never descends into the value");
  EXPECT_EQ(compile_error(3), "schema #: expected a schema (an object or a boolean), got 3");
  EXPECT_NE(std::string([]() -> std::string {  // a copy: e.what() dies with the exception
              try {
                Schema::parse("{");
              } catch (const Error& e) {
                return e.what();
              }
              return "no error";
            }())
                .find("schema: not valid JSON"),
            std::string::npos);
}

// The validator implements exactly the keywords the IR schema uses: the embedded schema
// compiles, and every supported keyword occurs in it.
TEST(JsonSchema, SupportsExactlyTheKeywordsOfTheIrSchema) {
  json doc = json::parse(ir::ir_schema_text());
  std::set<std::string> used;
  // Walk schema positions only (names under properties/$defs are not keywords).
  std::function<void(const json&)> walk = [&](const json& s) {
    if (!s.is_object()) return;
    for (auto it = s.begin(); it != s.end(); ++it) {
      used.insert(it.key());
      const json& v = it.value();
      if (it.key() == "properties" || it.key() == "$defs")
        for (const auto& sub : v) walk(sub);
      else if (it.key() == "allOf" || it.key() == "anyOf")
        for (const auto& sub : v) walk(sub);
      else if (it.key() == "items" || it.key() == "additionalProperties" || it.key() == "not" ||
               it.key() == "if" || it.key() == "then" || it.key() == "else")
        walk(v);
    }
  };
  walk(doc);
  const auto& supported = supported_keywords();
  EXPECT_EQ(used, std::set<std::string>(supported.begin(), supported.end()));
  EXPECT_NO_THROW(ir::ir_schema());
}

}  // namespace
}  // namespace spyre::compiler::json_schema
