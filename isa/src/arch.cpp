#include "spyre/arch/arch.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"

#ifndef SPYRE_PRESET_DIR
#error "SPYRE_PRESET_DIR must name the folder of preset YAML files"
#endif

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
    if (used != text.size()) throw std::invalid_argument(text);
    out = v;
  } catch (const std::exception&) {
    throw Error(key, "expected a number, got '" + text + "'");
  }
}

struct Accessor {
  std::function<void(ArchConfig&, const std::string&)> set;
  std::function<std::string(const ArchConfig&)> get;
};

const std::map<std::string, Accessor>& accessors() {
  static const std::map<std::string, Accessor> m = [] {
    std::map<std::string, Accessor> a;
#define SPYRE_PARAM(type, field, key, def, unit, desc)                                         \
  a[key] = Accessor{[](ArchConfig& c, const std::string& t) { parse_value(key, t, c.field); }, \
                    [](const ArchConfig& c) { return fmt_value(c.field); }};
#include "spyre/arch/params.def"
#undef SPYRE_PARAM
    return a;
  }();
  return m;
}

void flatten(const YAML::Node& n, const std::string& prefix,
             std::vector<std::pair<std::string, YAML::Node>>& out) {
  for (const auto& kv : n) {
    std::string key =
        prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>();
    if (kv.second.IsMap())
      flatten(kv.second, key, out);
    else
      out.emplace_back(key, kv.second);
  }
}

ArchConfig load_yaml(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(path, "cannot open architecture file");
  } catch (const YAML::Exception& e) {
    throw Error(
        path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1),
        e.msg);
  }
  if (!root.IsMap()) throw Error(path, "expected a mapping of parameters");
  ArchConfig c;
  c.name = std::filesystem::path(path).stem().string();
  std::vector<std::pair<std::string, YAML::Node>> items;
  flatten(root, "", items);
  for (const auto& [key, node] : items) {
    std::string where = path + ":" + std::to_string(node.Mark().line + 1) + ": " + key;
    if (key == "name") {
      c.name = node.as<std::string>();
      continue;
    }
    if (!node.IsScalar()) throw Error(where, "expected a scalar value");
    try {
      c.set(key, node.Scalar());
    } catch (const Error& e) {
      throw Error(where, e.what());
    }
  }
  return c;
}

}  // namespace

const std::vector<ParamInfo>& param_table() {
  static const std::vector<ParamInfo> t = [] {
    std::vector<ParamInfo> v;
#define SPYRE_PARAM(type, field, key, def, unit, desc) \
  v.push_back(ParamInfo{key, type_name<type>(), unit, desc, fmt_value(type{def})});
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
// The range a parameter's unit implies (params.def declares the unit beside the default):
// amounts (counts, sizes, rates, widths, factors) must be positive, times (cycles, ns) must not
// be negative, fractions lie in [0, 1). The few amounts that may be zero are listed.
void check_unit_range(const ParamInfo& p, double v) {
  static const std::set<std::string> times = {"cycles", "ns"};
  static const std::set<std::string> zero_ok = {"lx.reserve_bytes", "dram.write_low",
                                                "dram.bank_xor"};
  if (times.count(p.unit)) {
    if (v < 0) throw Error(p.key, "must not be negative, got " + fmt_value(v));
  } else if (p.unit == "fraction") {
    if (v < 0 || v >= 1) throw Error(p.key, "must be in [0, 1), got " + fmt_value(v));
  } else if (zero_ok.count(p.key) ? v < 0 : !(v > 0)) {
    throw Error(p.key,
                std::string(zero_ok.count(p.key) ? "must not be negative" : "must be positive") +
                    ", got " + fmt_value(v));
  }
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

void ArchConfig::validate() const {
  for (const auto& p : param_table())
    if (p.type != "string") check_unit_range(p, std::stod(get_text(p.key)));
  auto positive = [](const char* key, double v) {
    if (!(v > 0)) throw Error(key, "must be positive, got " + fmt_value(v));
  };
  positive("chip.cores", static_cast<double>(cores));
  if (cores > 1024) throw Error("chip.cores", "at most 1024 cores are modelled");
  positive("chip.clock_ghz", clock_ghz);
  if (corelets != 2 && corelets != 1) throw Error("core.corelets", "must be 1 or 2");
  positive("core.queue_depth", static_cast<double>(queue_depth));
  positive("pt.rows", static_cast<double>(pt_rows));
  positive("pt.lanes", static_cast<double>(pt_lanes));
  positive("sfp.lanes_fp16", static_cast<double>(sfp_lanes_fp16));
  positive("sfp.lanes_fp32", static_cast<double>(sfp_lanes_fp32));
  positive("sfp.transcendental_factor", static_cast<double>(sfp_transcendental_factor));
  positive("lx.size_bytes", static_cast<double>(lx_size_bytes));
  positive("lx.stick_bytes", static_cast<double>(stick_bytes));
  if (lx_size_bytes < stick_bytes)
    throw Error("lx.size_bytes",
                "must hold at least one stick (lx.stick_bytes = " + std::to_string(stick_bytes) +
                    "), got " + std::to_string(lx_size_bytes));
  if (dram_write_low >= dram_write_high)
    throw Error("dram.write_low", "must be below dram.write_high");
  if (lx_reserve_bytes < 0 || lx_reserve_bytes >= lx_size_bytes)
    throw Error("lx.reserve_bytes", "must be in [0, lx.size_bytes)");
  if (lx_backend_reserve_fraction < 0 || lx_backend_reserve_fraction >= 1)
    throw Error("lx.backend_reserve_fraction", "must be in [0, 1)");
  positive("dma.read_bytes_per_cycle", static_cast<double>(dma_read_bytes_per_cycle));
  positive("dma.write_bytes_per_cycle", static_cast<double>(dma_write_bytes_per_cycle));
  positive("dma.burst_bytes", static_cast<double>(dma_burst_bytes));
  positive("dram.word_bytes", static_cast<double>(dram_word_bytes));
  positive("dram.bw_gbps", dram_bw_gbps);
  if (dram_latency_ns < 0) throw Error("dram.latency_ns", "must not be negative");
  positive("ring.link_bytes_per_cycle", static_cast<double>(ring_link_bytes_per_cycle));
  if (ring_hop_latency_cycles < 0) throw Error("ring.hop_latency_cycles", "must not be negative");
  if (loop_issue_cycles < 0) throw Error("core.loop_issue_cycles", "must not be negative");
  validate_unit_timing(*this);
}

std::string ArchConfig::to_yaml() const {
  std::ostringstream o;
  o << "name: " << name << "\n";
  for (const auto& p : param_table())
    o << p.key << ": " << get_text(p.key) << "  # " << p.unit << ": " << p.description << "\n";
  return o.str();
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names{"spyre"};
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(SPYRE_PRESET_DIR, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
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
    std::filesystem::path p = std::filesystem::path(SPYRE_PRESET_DIR) / (name_or_file + ".yaml");
    if (!std::filesystem::exists(p)) {
      std::string known;
      for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
      throw Error("--arch " + name_or_file, "unknown architecture (known: " + known + ")");
    }
    c = load_yaml(p.string());
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
