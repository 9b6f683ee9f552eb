#include "spyre/traces/chrome.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "spyre/error.h"

namespace spyre::traces {

void write_json_string(FILE* f, std::string_view s) {
  std::fputc('"', f);
  for (char c : s) {
    if (c == '"' || c == '\\') {
      std::fputc('\\', f);
      std::fputc(c, f);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      std::fprintf(f, "\\u%04x", c);
    } else {
      std::fputc(c, f);
    }
  }
  std::fputc('"', f);
}

void write_json_number(FILE* f, double v) {
  if (std::isfinite(v))
    std::fprintf(f, "%.17g", v);
  else
    std::fputs("null", f);
}

ChromeTraceWriter::ChromeTraceWriter(std::string path, double clock_ghz)
    : ChromeTraceWriter(std::move(path), [clock_ghz] {
        TraceMeta m;
        m.clock_ghz = clock_ghz;
        return m;
      }()) {}

ChromeTraceWriter::ChromeTraceWriter(std::string path, const TraceMeta& meta)
    : path_(std::move(path)), file_(path_, "w"), clock_ghz_(meta.clock_ghz) {
  f_ = file_.get();
  // Line 1: the metadata, so a streaming reader has it before any event.
  std::fputs("{\"displayTimeUnit\":\"ns\",\"metadata\":{\"format\":\"chrome-json\",", f_);
  std::fprintf(f_, "\"version\":%d,\"clock_ghz\":", kTraceFormatVersion);
  write_json_number(f_, meta.clock_ghz);
  std::fputs(",\"graph\":", f_);
  write_json_string(f_, meta.graph);
  std::fprintf(
      f_, ",\"cores\":%d,\"counter_window_cycles\":%lld,\"detail\":\"%s\",\"arch\":", meta.cores,
      static_cast<long long>(meta.counter_window_cycles), trace_detail_name(meta.detail));
  std::fputs(meta.arch_json.empty() ? "{}" : meta.arch_json.c_str(), f_);
  std::fputs("},\n\"traceEvents\":[\n", f_);
}

void ChromeTraceWriter::event_prefix() {
  if (!first_) std::fputs(",\n", f_);
  first_ = false;
}

void ChromeTraceWriter::ts(const char* key, uint64_t cycle) {
  // Microseconds to the picosecond (integer picoseconds printed as us.pppppp, no float
  // formatting): exact enough to recover the cycle at any clock <= 1000 GHz.
  const auto ps =
      static_cast<uint64_t>(std::llround(static_cast<double>(cycle) * 1000.0 / clock_ghz_));
  char buf[64];
  char* p = buf;
  *p++ = ',';
  *p++ = '"';
  for (const char* k = key; *k;) *p++ = *k++;
  *p++ = '"';
  *p++ = ':';
  p = std::to_chars(p, buf + sizeof buf, ps / 1000000).ptr;
  *p++ = '.';
  char frac[8];
  const auto n = static_cast<size_t>(std::to_chars(frac, frac + 8, ps % 1000000).ptr - frac);
  for (size_t i = n; i < 6; ++i) *p++ = '0';
  for (size_t i = 0; i < n; ++i) *p++ = frac[i];
  std::fwrite(buf, 1, static_cast<size_t>(p - buf), f_);
}

int ChromeTraceWriter::pid_of(std::string_view group) {
  auto it = pids_.find(group);
  if (it != pids_.end()) return it->second;
  int pid = static_cast<int>(pids_.size());
  pids_.emplace(std::string(group), pid);
  tids_per_pid_.push_back(0);
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":", pid);
  write_json_string(f_, group);
  std::fprintf(f_,
               "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,"
               "\"args\":{\"sort_index\":%d}}",
               pid, pid);
  return pid;
}

int ChromeTraceWriter::track(std::string_view group, std::string_view track) {
  int pid = pid_of(group);
  auto key = std::make_pair(pid, std::string(track));
  auto it = tracks_.find(key);
  if (it != tracks_.end()) return it->second;
  int id = static_cast<int>(track_ids_.size());
  int tid = tids_per_pid_[static_cast<size_t>(pid)]++;
  tracks_.emplace(key, id);
  track_ids_.push_back({pid, tid});
  event_prefix();
  std::fprintf(
      f_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", pid,
      tid);
  write_json_string(f_, track);
  std::fprintf(f_,
               "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
               "\"args\":{\"sort_index\":%d}}",
               pid, tid, tid);
  return id;
}

void ChromeTraceWriter::span(int track, std::string_view name, uint64_t start_cycle,
                             uint64_t dur_cycles, const SpanArgs& a) {
  auto [pid, tid] = track_ids_.at(static_cast<size_t>(track));
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d", pid, tid);
  ts("ts", start_cycle);
  ts("dur", dur_cycles);
  std::fputs(",\"name\":", f_);
  write_json_string(f_, name);
  if (!a.kernel.empty()) {
    std::fputs(",\"cat\":", f_);
    write_json_string(f_, a.kernel);
  }
  std::fputs(",\"args\":{", f_);
  bool first = true;
  auto key = [&](const char* k) {
    std::fprintf(f_, "%s\"%s\":", first ? "" : ",", k);
    first = false;
  };
  if (!a.kernel.empty()) {
    key("kernel");
    write_json_string(f_, a.kernel);
  }
  if (a.core >= 0) {
    key("core");
    std::fprintf(f_, "%d", a.core);
  }
  if (a.pc >= 0) {
    key("pc");
    std::fprintf(f_, "%lld", static_cast<long long>(a.pc));
  }
  if (!a.detail.empty()) {
    key("detail");
    write_json_string(f_, a.detail);
  }
  if (a.lx) {
    key("lx");
    std::fputc('[', f_);
    for (size_t i = 0; i < a.lx->size(); ++i) {
      const LxAccess& x = (*a.lx)[i];
      std::fprintf(f_, "%s[%lld,%lld,\"%c\"]", i ? "," : "", static_cast<long long>(x.addr),
                   static_cast<long long>(x.bytes), x.write ? 'w' : 'r');
    }
    std::fputc(']', f_);
  }
  if (a.extra)
    for (const Arg& x : *a.extra) {
      std::fputs(first ? "" : ",", f_);
      first = false;
      write_json_string(f_, x.key);
      std::fputc(':', f_);
      switch (x.kind) {
        case Arg::Kind::Int: std::fprintf(f_, "%lld", static_cast<long long>(x.i)); break;
        case Arg::Kind::Double: write_json_number(f_, x.d); break;
        case Arg::Kind::Str: write_json_string(f_, x.s); break;
      }
    }
  std::fputs("}}", f_);
}

void ChromeTraceWriter::counter(std::string_view group, std::string_view name, uint64_t cycle,
                                double value) {
  int pid = pid_of(group);
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"C\",\"pid\":%d", pid);
  ts("ts", cycle);
  std::fputs(",\"name\":", f_);
  write_json_string(f_, name);
  std::fputs(",\"args\":{\"value\":", f_);
  write_json_number(f_, value);
  std::fputs("}}", f_);
}

void ChromeTraceWriter::flow(uint64_t id, int src_track, uint64_t src_cycle, int dst_track,
                             uint64_t dst_cycle) {
  auto [sp, st] = track_ids_.at(static_cast<size_t>(src_track));
  auto [dp, dt] = track_ids_.at(static_cast<size_t>(dst_track));
  // The two halves are written together so a streaming reader pairs them without a table.
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"s\",\"id\":%llu,\"pid\":%d,\"tid\":%d",
               static_cast<unsigned long long>(id), sp, st);
  ts("ts", src_cycle);
  std::fputs(",\"name\":\"flow\",\"cat\":\"flow\"}", f_);
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"pid\":%d,\"tid\":%d",
               static_cast<unsigned long long>(id), dp, dt);
  ts("ts", dst_cycle);
  std::fputs(",\"name\":\"flow\",\"cat\":\"flow\"}", f_);
}

void ChromeTraceWriter::finish() {
  if (!f_) return;
  std::fputs("\n]}\n", f_);
  f_ = nullptr;
  file_.commit();
}

}  // namespace spyre::traces
