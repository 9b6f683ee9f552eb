#pragma once
// The chip configuration: every parameter of params.def as a typed field (specs: immutable
// once validated), loaded from the built-in "spyre" defaults, a preset name or a YAML file,
// then `--set key=value` overrides. Errors are spyre::Error naming the file/key.
#include <cstdint>
#include <string>
#include <vector>

namespace spyre::arch {

struct ParamInfo {
  std::string key;
  std::string type;  // "int", "float" or "string"
  std::string unit;
  std::string range;  // the interval of params.def ("" for names)
  std::string description;
  std::string default_text;
};

struct ArchConfig {
  std::string name = "spyre";
#define SPYRE_PARAM(type, field, key, def, unit, range, desc) type field = def;
#include "spyre/arch/params.def"
#undef SPYRE_PARAM

  // Derived quantities (never stored twice).
  int64_t lx_usable_bytes() const;
  double period_ps() const { return 1000.0 / clock_ghz; }
  double dram_bytes_per_cycle() const { return dram_bw_gbps / clock_ghz; }
  int64_t ns_to_cycles(double ns) const;  // rounded up
  int64_t pt_macs_per_cycle() const { return pt_rows * pt_lanes; }

  void set(const std::string& key, const std::string& value);  // throws on unknown key/bad value
  std::string get_text(const std::string& key) const;
  void validate() const;        // throws naming the first bad parameter
  std::string to_yaml() const;  // every parameter, with unit and description as comments
};

const std::vector<ParamInfo>& param_table();

// A parameter's range as params.def declares it: an interval, each end open or closed.
struct ParamRange {
  double lo = 0, hi = 0;
  bool lo_closed = true, hi_closed = true;
  // "[0, inf)", "(0, 1]", ...; anything else is an Error naming `key`.
  static ParamRange parse(const std::string& text, const std::string& key);
  bool contains(double v) const;
};
// The known parameter closest to a misspelt key (edit distance), or "" when none is close.
std::string nearest_param(const std::string& key);
std::vector<std::string> preset_names();  // "spyre" and the YAML files beside it

// The parameters of one YAML configuration text (nested mappings or dotted keys), read as the
// file `file` for messages; not yet validated (load_arch validates after its --set overrides).
ArchConfig parse_arch_yaml(const std::string& text, const std::string& file);

// NAME (built-in or preset) or a path to a YAML file; then each "key=value" of `sets`.
ArchConfig load_arch(const std::string& name_or_file, const std::vector<std::string>& sets = {});

}  // namespace spyre::arch
