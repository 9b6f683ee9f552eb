#include "spyre/traces/filter.h"

#include <algorithm>

#include "spyre/error.h"
#include "spyre/traces/chrome.h"
#include "spyre/traces/names.h"
#include "spyre/traces/perfetto.h"

namespace spyre::traces {

namespace {
const std::vector<std::string> kUnits = {"seq",  "dma_in", "dma_out", "pt",      "sfp",
                                         "ring", "dram",   "barrier", "kernels", "lx"};

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw Error("--trace-filter", "field '" + field + "': " + what);
}

std::string strip(std::string_view s) {
  std::string o;
  for (char c : s)
    if (c != ' ' && c != '\t') o += c;
  return o;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t p = 0;
  while (true) {
    size_t q = s.find(sep, p);
    out.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) return out;
    p = q + 1;
  }
}

uint64_t number(const std::string& field, const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19)
    bad(field, "'" + s + "' is not a non-negative integer");
  return std::stoull(s);
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

bool TraceFilter::keeps_unit(const std::string& unit) const {
  return units.empty() || units.count(unit) > 0;
}

bool TraceFilter::keeps_core(int core) const {
  if (cores.empty() || core < 0) return true;
  for (auto [a, b] : cores)
    if (core >= a && core <= b) return true;
  return false;
}

TraceFilter parse_trace_filter(std::string_view spec) {
  TraceFilter f;
  std::set<std::string> seen;
  const std::string s = strip(spec);
  if (s.empty()) return f;
  for (const std::string& part : split(s, ';')) {
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    if (eq == std::string::npos)
      throw Error("--trace-filter", "'" + part + "' is not key=value (keys: unit, core, window)");
    const std::string key = part.substr(0, eq), val = part.substr(eq + 1);
    if (!seen.insert(key).second) bad(key, "given twice");
    if (key == "unit") {
      for (const std::string& u : split(val, ',')) {
        if (u == "dma") {
          f.units.insert("dma_in");
          f.units.insert("dma_out");
        } else if (std::find(kUnits.begin(), kUnits.end(), u) != kUnits.end()) {
          f.units.insert(u);
        } else {
          bad(key, "unknown unit '" + u +
                       "' (known: seq, dma, dma_in, dma_out, pt, sfp, ring, dram, barrier, "
                       "kernels, lx)");
        }
      }
    } else if (key == "core") {
      for (const std::string& r : split(val, ',')) {
        const size_t dash = r.find('-');
        const uint64_t a = number(key, r.substr(0, dash));
        const uint64_t b = dash == std::string::npos ? a : number(key, r.substr(dash + 1));
        if (b < a || b > 1u << 20) bad(key, "'" + r + "' is not a range A-B with A <= B");
        f.cores.emplace_back(static_cast<int>(a), static_cast<int>(b));
      }
    } else if (key == "window") {
      const size_t colon = val.find(':');
      if (colon == std::string::npos) bad(key, "'" + val + "' is not A:B (cycles)");
      const std::string a = val.substr(0, colon), b = val.substr(colon + 1);
      f.from = a.empty() ? 0 : number(key, a);
      f.to = b.empty() ? UINT64_MAX : number(key, b);
      if (f.to <= f.from) bad(key, "'" + val + "' is empty (B must exceed A)");
    } else {
      throw Error("--trace-filter", "unknown field '" + key + "' (known: unit, core, window)");
    }
  }
  return f;
}

std::string unit_of_track(std::string_view group, std::string_view track) {
  switch (group_kind(group)) {
    case GroupKind::Core:
      if (starts(track, "pt")) return "pt";
      if (starts(track, "sfp")) return "sfp";
      return std::string(track);  // seq, dma_in, dma_out, ring
    case GroupKind::Dram: return "dram";
    case GroupKind::Ring: return "ring";
    default: return std::string(track);  // the chip: barrier, kernels
  }
}

std::string unit_of_counter(std::string_view group, std::string_view name) {
  if (starts(name, "lx")) return "lx";
  switch (group_kind(group)) {
    case GroupKind::Core: {  // "<queue> busy" belongs to that queue's unit (busy_counter_name)
      const std::string_view suffix = kBusySuffix;
      if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
        return unit_of_track(group, name.substr(0, name.size() - suffix.size()));
      return "seq";
    }
    case GroupKind::Dram: return "dram";
    case GroupKind::Ring: return "ring";
    default: return std::string(name);
  }
}

int FilteringSink::track(std::string_view group, std::string_view track) {
  const bool keep =
      f_.keeps_unit(unit_of_track(group, track)) && f_.keeps_core(core_of_group(group));
  tracks_.push_back(T{std::string(group), std::string(track), keep});
  return static_cast<int>(tracks_.size()) - 1;
}

int FilteringSink::inner_track(T& t) {
  if (t.inner < 0) t.inner = inner_.track(t.group, t.track);
  return t.inner;
}

void FilteringSink::span(int track, std::string_view name, uint64_t start, uint64_t dur,
                         const SpanArgs& args) {
  T& t = tracks_[static_cast<size_t>(track)];
  if (!t.keep) return;
  const bool in =
      dur == 0 ? (start >= f_.from && start < f_.to) : (start < f_.to && start + dur > f_.from);
  if (in) inner_.span(inner_track(t), name, start, dur, args);
}

void FilteringSink::counter(std::string_view group, std::string_view name, uint64_t cycle,
                            double value) {
  if (cycle < f_.from || cycle >= f_.to) return;
  if (!f_.keeps_unit(unit_of_counter(group, name)) || !f_.keeps_core(core_of_group(group))) return;
  inner_.counter(group, name, cycle, value);
}

void FilteringSink::flow(uint64_t id, int src_track, uint64_t src_cycle, int dst_track,
                         uint64_t dst_cycle) {
  T& s = tracks_[static_cast<size_t>(src_track)];
  T& d = tracks_[static_cast<size_t>(dst_track)];
  if (!s.keep || !d.keep) return;
  auto in = [this](uint64_t c) { return c >= f_.from && c < f_.to; };
  if (!in(src_cycle) && !in(dst_cycle)) return;
  inner_.flow(id, inner_track(s), src_cycle, inner_track(d), dst_cycle);
}

bool is_perfetto_path(const std::string& path) {
  for (const char* ext : {".pftrace", ".perfetto-trace", ".pb"}) {
    const std::string e = ext;
    if (path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0)
      return true;
  }
  return false;
}

TraceDetail parse_trace_detail(std::string_view text, std::string_view what) {
  if (text == "summary") return TraceDetail::Summary;
  if (text == "full") return TraceDetail::Full;
  throw Error(std::string(what),
              "'" + std::string(text) +
                  "' is not a trace detail: expected "
                  "summary (kernels and unit activity) or full (every instruction)");
}

const char* trace_detail_name(TraceDetail d) {
  return d == TraceDetail::Summary ? "summary" : "full";
}

TraceOutput::TraceOutput(const std::string& path, const TraceMeta& meta,
                         const std::string& filter) {
  TraceFilter f = parse_trace_filter(filter);  // before the file is created
  if (is_perfetto_path(path))
    writer_ = std::make_unique<PerfettoTraceWriter>(path, meta);
  else
    writer_ = std::make_unique<ChromeTraceWriter>(path, meta);
  if (!filter.empty()) filter_ = std::make_unique<FilteringSink>(*writer_, std::move(f));
}

TraceOutput::~TraceOutput() = default;

}  // namespace spyre::traces
