#include "spyre/traces/chrome.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spyre/error.h"

namespace spyre::traces {

namespace {
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
}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::string path, double clock_ghz)
    : path_(std::move(path)), clock_ghz_(clock_ghz) {
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  f_ = std::fopen(tmp_.c_str(), "w");
  if (!f_)
    throw Error(path_, std::string("cannot open trace for writing: ") + std::strerror(errno));
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f_);
}

ChromeTraceWriter::~ChromeTraceWriter() {
  if (f_) {  // not finished: drop the partial file
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void ChromeTraceWriter::event_prefix() {
  if (!first_) std::fputs(",\n", f_);
  first_ = false;
}

int ChromeTraceWriter::pid_of(std::string_view group) {
  auto it = pids_.find(std::string(group));
  if (it != pids_.end()) return it->second;
  int pid = static_cast<int>(pids_.size());
  pids_.emplace(std::string(group), pid);
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
  int id = static_cast<int>(tracks_.size());
  int tid = 0;
  for (const auto& [k, v] : tracks_)
    if (k.first == pid) ++tid;
  tracks_.emplace(key, id);
  track_ids_[id] = {pid, tid};
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
                             uint64_t dur_cycles, std::string_view kernel,
                             std::string_view detail) {
  auto [pid, tid] = track_ids_.at(track);
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,\"name\":", pid,
               tid, static_cast<double>(start_cycle) / (clock_ghz_ * 1000.0),
               static_cast<double>(dur_cycles) / (clock_ghz_ * 1000.0));
  write_json_string(f_, name);
  std::fputs(",\"cat\":", f_);
  write_json_string(f_, kernel);
  std::fprintf(f_, ",\"args\":{\"cycle\":%llu,\"cycles\":%llu,\"kernel\":",
               static_cast<unsigned long long>(start_cycle),
               static_cast<unsigned long long>(dur_cycles));
  write_json_string(f_, kernel);
  if (!detail.empty()) {
    std::fputs(",\"detail\":", f_);
    write_json_string(f_, detail);
  }
  std::fputs("}}", f_);
}

void ChromeTraceWriter::counter(std::string_view group, std::string_view name, uint64_t cycle,
                                double value) {
  int pid = pid_of(group);
  event_prefix();
  std::fprintf(f_, "{\"ph\":\"C\",\"pid\":%d,\"ts\":%.6f,\"name\":", pid,
               static_cast<double>(cycle) / (clock_ghz_ * 1000.0));
  write_json_string(f_, name);
  std::fprintf(f_, ",\"args\":{\"value\":%.6g}}", value);
}

void ChromeTraceWriter::finish() {
  if (!f_) return;
  std::fputs("\n]}\n", f_);
  bool ok = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    throw Error(path_, std::string("cannot write trace: ") + std::strerror(errno));
  }
}

}  // namespace spyre::traces
