#include "spyre/arch/arch.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "presets.h"
#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/io.h"

namespace spyre::arch {

namespace {

template <typename T>
std::string type_name();
template <>
std::string type_name<int64_t>() {
  return "int";
}
template <>
std::string type_name<double>() {
  return "float";
}
template <>
std::string type_name<std::string>() {
  return "string";
}

std::string fmt_value(int64_t v) { return std::to_string(v); }
std::string fmt_value(const std::string& v) { return v; }
std::string fmt_value(double v) {
  std::ostringstream o;
  o.precision(15);
  o << v;
  return o.str();
}

void parse_value(const std::string& key, const std::string& text, int64_t& out) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used, 0);
    if (used != text.size()) throw std::invalid_argument(text);
    out = v;
  } catch (const std::exception&) {
    throw Error(key, "expected an integer, got '" + text + "'");
  }
}
void parse_value(const std::string& key, const std::string& text, std::string& out) {
  if (text.empty()) throw Error(key, "expected a name, got an empty value");
  out = text;
}
void parse_value(const std::string& key, const std::string& text, double& out) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument(text);
    out = v;
  } catch (const std::exception&) {
    throw Error(key, "expected a finite number, got '" + text + "'");
  }
}

struct Accessor {
  std::function<void(ArchConfig&, const std::string&)> set;
  std::function<std::string(const ArchConfig&)> get;
};

const std::map<std::string, Accessor>& accessors() {
  static const std::map<std::string, Accessor> m = [] {
    std::map<std::string, Accessor> a;
#define SPYRE_PARAM(type, field, key, def, unit, range, desc)                                  \
  a[key] = Accessor{[](ArchConfig& c, const std::string& t) { parse_value(key, t, c.field); }, \
                    [](const ArchConfig& c) { return fmt_value(c.field); }};
#include "spyre/arch/params.def"
#undef SPYRE_PARAM
    return a;
  }();
  return m;
}

// A YAML key as text; a key that is itself a sequence or mapping is bad input, not a crash.
std::string key_text(const YAML::Node& key, const std::string& file) {
  if (!key.IsScalar())
    throw Error(file + ":" + std::to_string(key.Mark().line + 1),
                "expected a parameter name as key, got a sequence or mapping");
  return key.Scalar();
}

void flatten(const YAML::Node& n, const std::string& prefix, const std::string& file,
             std::vector<std::pair<std::string, YAML::Node>>& out) {
  for (const auto& kv : n) {
    const std::string name = key_text(kv.first, file);
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (kv.second.IsMap())
      flatten(kv.second, key, file, out);
    else
      out.emplace_back(key, kv.second);
  }
}

}  // namespace

ArchConfig parse_arch_yaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  std::vector<std::pair<std::string, YAML::Node>> items;
  try {
    root = YAML::Load(text);
    if (!root.IsMap()) throw Error(file, "expected a mapping of parameters");
    flatten(root, "", file, items);
  } catch (const YAML::Exception& e) {
    throw Error(
        file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1),
        e.msg);
  }
  ArchConfig c;
  c.name = std::filesystem::path(file).stem().string();
  std::set<std::string> seen;
  for (const auto& [key, node] : items) {
    std::string where = file + ":" + std::to_string(node.Mark().line + 1) + ": " + key;
    if (!seen.insert(key).second) throw Error(where, "set twice in this file");
    if (!node.IsScalar()) throw Error(where, "expected a scalar value");
    if (key == "name") {
      if (node.Scalar().empty()) throw Error(where, "expected a name, got an empty value");
      c.name = node.Scalar();
      continue;
    }
    try {
      c.set(key, node.Scalar());
    } catch (const Error& e) {
      throw Error(where, e.what());
    }
  }
  return c;
}

namespace {
ArchConfig load_yaml(const std::string& path) {
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const Error&) {
    throw Error(path, "cannot open architecture file");
  }
  return parse_arch_yaml(text, path);
}
}  // namespace

const std::vector<ParamInfo>& param_table() {
  static const std::vector<ParamInfo> t = [] {
    std::vector<ParamInfo> v;
#define SPYRE_PARAM(type, field, key, def, unit, range, desc) \
  v.push_back(ParamInfo{key, type_name<type>(), unit, range, desc, fmt_value(type{def})});
#include "spyre/arch/params.def"
#undef SPYRE_PARAM
    return v;
  }();
  return t;
}

int64_t ArchConfig::lx_usable_bytes() const {
  double rest = static_cast<double>(lx_size_bytes - lx_reserve_bytes);
  auto usable = static_cast<int64_t>(std::floor(rest * (1.0 - lx_backend_reserve_fraction)));
  return usable / stick_bytes * stick_bytes;
}

int64_t ArchConfig::ns_to_cycles(double ns) const {
  return static_cast<int64_t>(std::ceil(ns * clock_ghz - 1e-9));
}

void ArchConfig::set(const std::string& key, const std::string& value) {
  auto it = accessors().find(key);
  if (it == accessors().end()) {
    const std::string hint = nearest_param(key);
    throw Error(key, "unknown architecture parameter" +
                         (hint.empty() ? std::string(" (see `spyre-sim arch show`)")
                                       : " (did you mean " + hint + "?)"));
  }
  it->second.set(*this, value);
}

std::string ArchConfig::get_text(const std::string& key) const {
  auto it = accessors().find(key);
  if (it == accessors().end()) throw Error(key, "unknown architecture parameter");
  return it->second.get(*this);
}

namespace {
// A value outside the range params.def declares beside the parameter.
void check_range(const ParamInfo& p, double v) {
  const ParamRange r = ParamRange::parse(p.range, p.key);
  if (r.contains(v)) return;
  const bool from_zero = r.lo == 0 && std::isinf(r.hi);
  const std::string what = !from_zero    ? "must be in " + p.range
                           : r.lo_closed ? "must not be negative"
                                         : "must be positive";
  throw Error(p.key, what + ", got " + fmt_value(v));
}

// Levenshtein distance, for the nearest known key of a misspelt one.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string nearest_param(const std::string& key) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& p : param_table()) {
    const size_t d = edit_distance(key, p.key);
    if (d < best_d) best_d = d, best = p.key;
  }
  return best_d <= std::max<size_t>(3, key.size() / 3) ? best : std::string();
}

ParamRange ParamRange::parse(const std::string& text, const std::string& key) {
  // "[lo, hi]", "(lo, hi)", mixed; lo and hi numbers or inf.
  auto bad = [&] {
    return Error(key, "params.def: range \"" + text + "\" is not an interval such as [0, inf)");
  };
  if (text.size() < 5 || (text.front() != '[' && text.front() != '(') ||
      (text.back() != ']' && text.back() != ')'))
    throw bad();
  const size_t comma = text.find(',');
  if (comma == std::string::npos) throw bad();
  auto bound = [&](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != s.size()) throw bad();
    return v;
  };
  ParamRange r;
  r.lo_closed = text.front() == '[';
  r.hi_closed = text.back() == ']';
  r.lo = bound(text.substr(1, comma - 1));
  r.hi = bound(text.substr(comma + 1, text.size() - comma - 2));
  if (!(r.lo <= r.hi)) throw bad();
  return r;
}

bool ParamRange::contains(double v) const {
  if (std::isnan(v)) return false;
  return (lo_closed ? v >= lo : v > lo) && (hi_closed ? v <= hi : v < hi);
}

void ArchConfig::validate() const {
  for (const auto& p : param_table())
    if (p.type != "string") check_range(p, std::stod(get_text(p.key)));
  // What relates two parameters:
  if (lx_size_bytes < stick_bytes)
    throw Error("lx.size_bytes",
                "must hold at least one stick (lx.stick_bytes = " + std::to_string(stick_bytes) +
                    "), got " + std::to_string(lx_size_bytes));
  if (dram_write_low >= dram_write_high)
    throw Error("dram.write_low", "must be below dram.write_high");
  if (lx_reserve_bytes >= lx_size_bytes)
    throw Error("lx.reserve_bytes", "must be below lx.size_bytes");
  validate_unit_timing(*this);
}

std::string ArchConfig::to_yaml() const {
  std::ostringstream o;
  // Values through yaml-cpp's emitter: a name such as "a: b # c" comes back quoted.
  auto scalar = [](const std::string& v) {
    YAML::Emitter e;
    e << v;
    return std::string(e.c_str());
  };
  o << "name: " << scalar(name) << "\n";
  for (const auto& p : param_table())
    o << p.key << ": " << scalar(get_text(p.key)) << "  # " << p.unit << ": " << p.description
      << "\n";
  return o.str();
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names{"spyre"};
  for (const auto& p : generated::presets()) names.emplace_back(p.name);
  std::sort(names.begin() + 1, names.end());
  return names;
}

ArchConfig load_arch(const std::string& name_or_file, const std::vector<std::string>& sets) {
  ArchConfig c;
  if (name_or_file.empty() || name_or_file == "spyre") {
    c = ArchConfig{};
  } else if (name_or_file.find('/') != std::string::npos ||
             name_or_file.find(".yaml") != std::string::npos ||
             name_or_file.find(".yml") != std::string::npos) {
    c = load_yaml(name_or_file);
  } else {
    const auto& all = generated::presets();
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const generated::Preset& p) { return p.name == name_or_file; });
    if (it == all.end()) {
      std::string known;
      for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
      throw Error("--arch " + name_or_file, "unknown architecture (known: " + known + ")");
    }
    c = parse_arch_yaml(std::string(it->text), "isa/arch/" + name_or_file + ".yaml");
  }
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--set " + s, "expected key=value");
    try {
      c.set(s.substr(0, eq), s.substr(eq + 1));
    } catch (const Error& e) {
      throw Error("--set", e.what());
    }
  }
  c.validate();
  return c;
}

}  // namespace spyre::arch
