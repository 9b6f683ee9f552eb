// A JSON Schema (draft 2020-12) validator for exactly the keywords of the IR schema; see
// json_schema.h. The schema is compiled once into a graph of `Node`s ($ref edges may form
// cycles: an op's `body` holds ops); validation walks the instance with a path stack and builds
// a message only when something fails.
#include "spyre/compiler/json_schema.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <unordered_map>

#include "spyre/error.h"

namespace spyre::compiler::json_schema {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

enum TypeBit : unsigned {
  kNull = 1u << 0,
  kBoolean = 1u << 1,
  kInteger = 1u << 2,
  kNumber = 1u << 3,  // any number, integers included
  kString = 1u << 4,
  kArray = 1u << 5,
  kObject = 1u << 6,
};

const std::vector<std::pair<const char*, unsigned>>& type_names() {
  // In messages, null comes last: "expected string or null".
  static const std::vector<std::pair<const char*, unsigned>> names = {
      {"boolean", kBoolean}, {"integer", kInteger}, {"number", kNumber}, {"string", kString},
      {"array", kArray},     {"object", kObject},   {"null", kNull}};
  return names;
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  // A whole number of any size (3.2e63 too): casting it to int64 first would be undefined.
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

// The types `v` belongs to (an integer is also a number; 1.0 is an integer, as the spec says).
unsigned type_bits(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return kNull;
    case json::value_t::boolean: return kBoolean;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return kInteger | kNumber;
    case json::value_t::number_float: return is_integral(v) ? (kInteger | kNumber) : kNumber;
    case json::value_t::string: return kString;
    case json::value_t::array: return kArray;
    case json::value_t::object: return kObject;
    case json::value_t::binary:  // not produced by the JSON parser: no schema type
    case json::value_t::discarded: return 0;
  }
  return 0;
}

std::string type_name(const json& v) {
  unsigned b = type_bits(v);
  if (b & kInteger) return "integer";
  for (const auto& [name, bit] : type_names())
    if (b & bit) return name;
  return "unknown";
}

std::string join_or(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) s += i + 1 == parts.size() ? " or " : ", ";
    s += parts[i];
  }
  return s;
}

std::vector<std::string> type_list(unsigned mask) {
  std::vector<std::string> parts;
  for (const auto& [name, bit] : type_names())
    if ((mask & bit) && !(bit == kInteger && (mask & kNumber))) parts.push_back(name);
  return parts;
}

// A value as a message shows it: scalars as JSON (long strings cut), containers by type.
std::string value_text(const json& v) {
  if (v.is_array() || v.is_object()) return type_name(v);
  std::string s = v.dump();
  if (s.size() > 48) s = s.substr(0, 45) + "...";
  return s;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string path_string(const Path& path) {
  std::string s;
  for (const auto& p : path) {
    if (p.is_index)
      s += "[" + std::to_string(p.index) + "]";
    else
      s += (s.empty() ? "" : ".") + p.key;
  }
  return s;
}

const std::vector<std::string>& supported_keywords() {
  static const std::vector<std::string> words = {
      "$defs",     "$id",     "$ref",  "$schema",     "additionalProperties",
      "allOf",     "anyOf",   "const", "description", "else",
      "enum",      "if",      "items", "maxItems",    "minItems",
      "minLength", "minimum", "not",   "pattern",     "properties",
      "required",  "then",    "title", "type"};
  return words;
}

namespace {
struct Node {
  std::string loc;   // JSON pointer in the schema document, "#/$defs/op"
  int boolean = -1;  // a boolean schema: 1 true, 0 false; -1 an object schema
  unsigned types = 0;
  std::optional<json> constant;
  std::optional<std::vector<json>> enumeration;
  std::optional<json> minimum;
  std::optional<size_t> min_length, min_items, max_items;
  std::optional<std::regex> pattern;
  std::string pattern_text;
  std::vector<std::string> required;
  std::vector<std::pair<std::string, const Node*>> properties;  // in schema order
  std::set<std::string> property_names;
  const Node* additional = nullptr;
  const Node* items = nullptr;
  const Node* ref = nullptr;
  std::vector<const Node*> all_of, any_of;
  const Node *not_ = nullptr, *if_ = nullptr, *then_ = nullptr, *else_ = nullptr;
};

}  // namespace

struct Schema::Impl {
  ordered_json doc;
  std::vector<std::unique_ptr<Node>> nodes;
  std::unordered_map<std::string, Node*> by_loc;
  const Node* root = nullptr;

  [[noreturn]] static void bad(const std::string& loc, const std::string& what) {
    throw Error("schema " + loc, what);
  }

  static size_t count(const ordered_json& v, const std::string& loc) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      bad(loc, "expected a non-negative integer, got " + v.dump());
    return v.get<size_t>();
  }

  const Node* compile(const ordered_json& s, const std::string& loc) {
    if (auto it = by_loc.find(loc); it != by_loc.end()) return it->second;
    nodes.push_back(std::make_unique<Node>());
    Node* n = nodes.back().get();
    n->loc = loc;
    by_loc[loc] = n;
    if (s.is_boolean()) {
      n->boolean = s.get<bool>() ? 1 : 0;
      return n;
    }
    if (!s.is_object()) bad(loc, "expected a schema (an object or a boolean), got " + s.dump());
    const auto& words = supported_keywords();
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      const ordered_json& v = it.value();
      const std::string at = loc + "/" + escape_pointer_token(k);
      if (std::find(words.begin(), words.end(), k) == words.end())
        bad(
            loc, "unsupported keyword '" + k + "' (this validator knows only: " + [&] {
              std::string all;
              for (const auto& w : words) all += (all.empty() ? "" : ", ") + w;
              return all;
            }() + ")");
      auto subschemas = [&](std::vector<const Node*>& out) {
        if (!v.is_array() || v.empty()) bad(at, "expected a non-empty array of schemas");
        for (size_t i = 0; i < v.size(); ++i)
          out.push_back(compile(v[i], at + "/" + std::to_string(i)));
      };
      if (k == "$schema") {
        if (v != "https://json-schema.org/draft/2020-12/schema")
          bad(at, "only draft 2020-12 is supported, got " + v.dump());
      } else if (k == "$id" || k == "title" || k == "description") {
        if (!v.is_string()) bad(at, "expected a string");
      } else if (k == "$defs") {
        if (!v.is_object()) bad(at, "expected an object of schemas");
        for (auto d = v.begin(); d != v.end(); ++d)
          compile(d.value(), at + "/" + escape_pointer_token(d.key()));
      } else if (k == "$ref") {
        if (!v.is_string() || v.get<std::string>().rfind('#', 0) != 0)
          bad(at, "expected a reference inside this document (\"#/...\"), got " + v.dump());
        n->ref = resolve(v.get<std::string>(), at);
      } else if (k == "type") {
        std::vector<std::string> names;
        if (v.is_string())
          names.push_back(v.get<std::string>());
        else if (v.is_array() && !v.empty())
          for (const auto& e : v) names.push_back(e.is_string() ? e.get<std::string>() : e.dump());
        else
          bad(at, "expected a type name or a list of them");
        for (const auto& name : names) {
          auto t = std::find_if(type_names().begin(), type_names().end(),
                                [&](const auto& p) { return name == p.first; });
          if (t == type_names().end()) bad(at, "unknown type '" + name + "'");
          n->types |= t->second;
        }
      } else if (k == "const") {
        n->constant = json(v);
      } else if (k == "enum") {
        if (!v.is_array() || v.empty()) bad(at, "expected a non-empty array");
        n->enumeration.emplace();
        for (const auto& e : v) n->enumeration->push_back(json(e));
      } else if (k == "minimum") {
        if (!v.is_number()) bad(at, "expected a number");
        n->minimum = json(v);
      } else if (k == "minLength") {
        n->min_length = count(v, at);
      } else if (k == "minItems") {
        n->min_items = count(v, at);
      } else if (k == "maxItems") {
        n->max_items = count(v, at);
      } else if (k == "pattern") {
        if (!v.is_string()) bad(at, "expected a regular expression string");
        n->pattern_text = v.get<std::string>();
        try {
          n->pattern.emplace(n->pattern_text, std::regex::ECMAScript | std::regex::optimize);
        } catch (const std::regex_error& e) {
          bad(at, "bad regular expression " + v.dump() + ": " + e.what());
        }
      } else if (k == "required") {
        if (!v.is_array()) bad(at, "expected an array of property names");
        for (const auto& e : v) {
          if (!e.is_string()) bad(at, "expected an array of property names");
          n->required.push_back(e.get<std::string>());
        }
      } else if (k == "properties") {
        if (!v.is_object()) bad(at, "expected an object of schemas");
        for (auto p = v.begin(); p != v.end(); ++p) {
          n->properties.emplace_back(p.key(),
                                     compile(p.value(), at + "/" + escape_pointer_token(p.key())));
          n->property_names.insert(p.key());
        }
      } else if (k == "additionalProperties") {
        n->additional = compile(v, at);
      } else if (k == "items") {
        if (!v.is_object() && !v.is_boolean())
          bad(at, "expected one schema for every item (the array form is not draft 2020-12)");
        n->items = compile(v, at);
      } else if (k == "allOf") {
        subschemas(n->all_of);
      } else if (k == "anyOf") {
        subschemas(n->any_of);
      } else if (k == "not") {
        n->not_ = compile(v, at);
      } else if (k == "if") {
        n->if_ = compile(v, at);
      } else if (k == "then") {
        n->then_ = compile(v, at);
      } else if (k == "else") {
        n->else_ = compile(v, at);
      }
    }
    return n;
  }

  // A $ref cycle that applies to the same value without descending into it ("a": {"$ref":
  // "#/$defs/a"}) would recurse forever: refuse it (the spec says such a schema is invalid).
  void check_cycles() const {
    std::unordered_map<const Node*, int> state;  // 1 on the current path, 2 done
    std::function<void(const Node*)> visit = [&](const Node* n) {
      int& st = state[n];
      if (st == 2) return;
      if (st == 1) bad(n->loc, "$ref cycle that never descends into the value");
      st = 1;
      std::vector<const Node*> next = {n->ref, n->not_, n->if_, n->then_, n->else_};
      next.insert(next.end(), n->all_of.begin(), n->all_of.end());
      next.insert(next.end(), n->any_of.begin(), n->any_of.end());
      for (const Node* m : next)
        if (m) visit(m);
      state[n] = 2;
    };
    for (const auto& n : nodes) visit(n.get());
  }

  const Node* resolve(const std::string& ref, const std::string& at) {
    std::string loc = ref == "#" ? "#" : ref;
    if (auto it = by_loc.find(loc); it != by_loc.end()) return it->second;
    const ordered_json* target = &doc;
    if (ref.size() > 1) {
      try {
        target = &doc.at(ordered_json::json_pointer(ref.substr(1)));
      } catch (const ordered_json::exception&) {
        bad(at, "reference " + ref + " does not resolve in this document");
      }
    }
    return compile(*target, loc);
  }
};

namespace {

// A violation while it is built: `expected`/`got` kept apart so anyOf can merge alternatives.
struct Fail {
  Path path;
  std::string message, loc;
  // For a type, const or enum mismatch: the alternatives expected (type names or values) and
  // what was there, so that anyOf can say "expected one of A, B or null".
  std::vector<std::string> alternatives;
  bool types_only = false;  // the alternatives are type names
  std::string got;
  bool got_is_value = false;  // `got` shows the value, not only its type
};

struct Step {
  const std::string* key;  // null for an array index
  size_t index;
};

class Walker {
 public:
  bool check(const Node* n, const json& v, Fail* out) {
    if (n->boolean >= 0) {
      if (n->boolean == 1) return true;
      if (out) fail(out, n->loc, "not allowed here");
      return false;
    }
    const unsigned bits = type_bits(v);
    if (n->types && !(n->types & bits)) {
      if (out) mismatch(out, n->loc + "/type", type_list(n->types), true, type_name(v), false);
      return false;
    }
    if (n->constant && !(v == *n->constant)) {
      if (out)
        mismatch(out, n->loc + "/const", {value_text(*n->constant)}, false, value_text(v), true);
      return false;
    }
    if (n->enumeration &&
        std::find(n->enumeration->begin(), n->enumeration->end(), v) == n->enumeration->end()) {
      if (out) {
        std::vector<std::string> opts;
        for (const auto& e : *n->enumeration) opts.push_back(value_text(e));
        mismatch(out, n->loc + "/enum", opts, false, value_text(v), true);
      }
      return false;
    }
    if (n->minimum && (bits & kNumber) && below(v, *n->minimum)) {
      if (out) expect(out, n->loc + "/minimum", ">= " + n->minimum->dump(), v.dump(), true);
      return false;
    }
    if (bits & kString) {
      if (!check_string(n, v.get_ref<const std::string&>(), out)) return false;
    } else if (bits & kArray) {
      if (!check_array(n, v, out)) return false;
    } else if (bits & kObject) {
      if (!check_object(n, v, out)) return false;
    }
    if (n->ref && !check(n->ref, v, out)) return false;
    for (const Node* s : n->all_of)
      if (!check(s, v, out)) return false;
    if (!n->any_of.empty() && !check_any_of(n, v, out)) return false;
    if (n->not_ && check(n->not_, v, nullptr)) {
      if (out) forbidden(n, v, out);
      return false;
    }
    if (n->if_) {
      const Node* branch = check(n->if_, v, nullptr) ? n->then_ : n->else_;
      if (branch && !check(branch, v, out)) return false;
    }
    return true;
  }

 private:
  std::vector<Step> stack_;

  Path path(const std::string* extra = nullptr) const {
    Path p;
    p.reserve(stack_.size() + 1);
    for (const auto& s : stack_)
      p.push_back(s.key ? PathItem{*s.key, 0, false} : PathItem{"", s.index, true});
    if (extra) p.push_back(PathItem{*extra, 0, false});
    return p;
  }

  void fail(Fail* out, const std::string& loc, const std::string& message,
            const std::string* extra_key = nullptr) {
    *out = Fail{path(extra_key), message, loc, {}, false, "", false};
  }

  void expect(Fail* out, const std::string& loc, const std::string& expected,
              const std::string& got, bool got_is_value) {
    *out = Fail{path(), "expected " + expected + ", got " + got, loc, {}, false, got, got_is_value};
  }

  // A type, const or enum mismatch: "expected integer, got string", "expected one of ...".
  void mismatch(Fail* out, const std::string& loc, std::vector<std::string> alternatives,
                bool types_only, const std::string& got, bool got_is_value) {
    std::string expected = alternatives.size() == 1 || types_only
                               ? join_or(alternatives)
                               : "one of " + join_or(alternatives);
    *out = Fail{path(),      "expected " + expected + ", got " + got,
                loc,         std::move(alternatives),
                types_only,  got,
                got_is_value};
  }

  static bool below(const json& v, const json& min) {
    if (v.is_number_integer() && min.is_number_integer()) {
      if (v.is_number_unsigned()) return false;
      return v.get<int64_t>() < min.get<int64_t>();
    }
    return v.get<double>() < min.get<double>();
  }

  bool check_string(const Node* n, const std::string& s, Fail* out) {
    if (n->min_length && utf8_length(s) < *n->min_length) {
      if (out)
        expect(out, n->loc + "/minLength",
               *n->min_length == 1 ? "a non-empty string"
                                   : "at least " + plural(*n->min_length, "character"),
               json(s).dump(), true);
      return false;
    }
    if (n->pattern && !std::regex_search(s, *n->pattern)) {
      if (out)
        expect(out, n->loc + "/pattern", "a string matching /" + n->pattern_text + "/",
               value_text(json(s)), true);
      return false;
    }
    return true;
  }

  bool check_array(const Node* n, const json& v, Fail* out) {
    if (n->min_items && v.size() < *n->min_items) {
      if (out)
        expect(out, n->loc + "/minItems", "at least " + plural(*n->min_items, "item"),
               plural(v.size(), "item"), true);
      return false;
    }
    if (n->max_items && v.size() > *n->max_items) {
      if (out)
        expect(out, n->loc + "/maxItems",
               *n->max_items == 0 ? "an empty array" : "at most " + plural(*n->max_items, "item"),
               plural(v.size(), "item"), true);
      return false;
    }
    if (n->items) {
      for (size_t i = 0; i < v.size(); ++i) {
        stack_.push_back({nullptr, i});
        bool ok = check(n->items, v[i], out);
        stack_.pop_back();
        if (!ok) return false;
      }
    }
    return true;
  }

  bool check_object(const Node* n, const json& v, Fail* out) {
    for (const auto& r : n->required) {
      if (!v.contains(r)) {
        if (out) fail(out, n->loc + "/required", "missing", &r);
        return false;
      }
    }
    for (const auto& [key, sub] : n->properties) {
      auto it = v.find(key);
      if (it == v.end()) continue;
      stack_.push_back({&key, 0});
      bool ok = check(sub, *it, out);
      stack_.pop_back();
      if (!ok) return false;
    }
    if (n->additional) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (n->property_names.count(it.key())) continue;
        if (n->additional->boolean == 0) {
          if (out)
            fail(out, n->loc + "/additionalProperties",
                 "unknown field (the IR schema does not allow it here)", &it.key());
          return false;
        }
        stack_.push_back({&it.key(), 0});
        bool ok = check(n->additional, it.value(), out);
        stack_.pop_back();
        if (!ok) return false;
      }
    }
    return true;
  }

  // All alternatives failed. Report the one that got deepest into the value (the one the author
  // most likely meant); among those that failed right here, one whose type matched but that
  // failed a further check (a pattern, a minimum); else merge what they all expected.
  bool check_any_of(const Node* n, const json& v, Fail* out) {
    for (const Node* s : n->any_of)
      if (check(s, v, nullptr)) return true;
    if (!out) return false;
    std::vector<Fail> fails(n->any_of.size());
    for (size_t i = 0; i < n->any_of.size(); ++i) check(n->any_of[i], v, &fails[i]);
    const Fail* best = &fails.front();
    for (const auto& f : fails)
      if (f.path.size() > best->path.size()) best = &f;
    if (best->path.size() > stack_.size()) {
      *out = *best;
      return false;
    }
    for (const auto& f : fails) {
      if (f.alternatives.empty()) {
        *out = f;
        return false;
      }
    }
    std::vector<std::string> alternatives;
    bool types_only = true;
    std::string got = fails.front().got;
    bool got_is_value = false;
    for (const auto& f : fails) {
      for (const auto& a : f.alternatives)
        if (std::find(alternatives.begin(), alternatives.end(), a) == alternatives.end())
          alternatives.push_back(a);
      types_only = types_only && f.types_only;
      if (f.got_is_value && !got_is_value) {
        got = f.got;
        got_is_value = true;
      }
    }
    if (types_only) {  // in the usual order: "object or null"
      auto rank = [](const std::string& t) {
        const auto& names = type_names();
        return std::find_if(names.begin(), names.end(),
                            [&](const auto& p) { return t == p.first; }) -
               names.begin();
      };
      std::stable_sort(
          alternatives.begin(), alternatives.end(),
          [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    }
    if (!got_is_value && !types_only) got = value_text(v);
    mismatch(out, n->loc + "/anyOf", alternatives, types_only, got, true);
    return false;
  }

  // `not` matched. Its schemas in the IR forbid keys ({"not": {"anyOf": [{"required": ["id"]},
  // ...]}}): name the key that is there; anything else gets the schema location.
  void forbidden(const Node* n, const json& v, Fail* out) {
    std::vector<const Node*> todo = {n->not_};
    while (!todo.empty()) {
      const Node* s = todo.back();
      todo.pop_back();
      for (const auto& r : s->required) {
        if (v.is_object() && v.contains(r)) {
          fail(out, n->loc + "/not", "not allowed here", &r);
          return;
        }
      }
      todo.insert(todo.end(), s->any_of.rbegin(), s->any_of.rend());
    }
    fail(out, n->loc + "/not", "matches the schema at " + n->not_->loc + ", which it must not");
  }
};

}  // namespace

Schema::Schema(const nlohmann::json& schema) : Schema(ordered_json(schema)) {}

Schema::Schema(const nlohmann::ordered_json& schema) : impl_(std::make_unique<Impl>()) {
  impl_->doc = schema;
  impl_->root = impl_->compile(impl_->doc, "#");
  impl_->check_cycles();
}

Schema Schema::parse(const std::string& text) {
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (const ordered_json::exception& e) {
    throw Error("schema", std::string("not valid JSON: ") + e.what());
  }
  return Schema(doc);
}

Schema::~Schema() = default;
Schema::Schema(Schema&&) noexcept = default;
Schema& Schema::operator=(Schema&&) noexcept = default;

std::optional<Violation> Schema::validate(const nlohmann::json& instance) const {
  Walker w;
  if (w.check(impl_->root, instance, nullptr)) return std::nullopt;
  Fail f;
  w.check(impl_->root, instance, &f);
  return Violation{std::move(f.path), std::move(f.message), std::move(f.loc)};
}

}  // namespace spyre::compiler::json_schema
