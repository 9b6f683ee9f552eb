#include "spyre/runner/program_cache.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <boost/uuid/detail/sha1.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "spyre/error.h"
#include "spyre/io.h"
#include "spyre/isa/format.h"

namespace spyre::runner {

namespace fs = std::filesystem;

namespace {

const std::string kEntryExt = ".entry";  // programs: MessagePack; ir: JSON text

class Sha1 {
 public:
  // Each part is length-prefixed, so no two different part lists hash the same bytes.
  void part(const void* data, size_t n) {
    const uint64_t len = n;
    h_.process_bytes(&len, sizeof len);
    h_.process_bytes(data, n);
  }
  void part(const std::string& s) { part(s.data(), s.size()); }
  std::string hex() {
    boost::uuids::detail::sha1::digest_type d;
    h_.get_digest(d);
    char buf[41];
    for (int i = 0; i < 5; ++i) std::snprintf(buf + 8 * i, 9, "%08x", d[i]);
    return std::string(buf, 40);
  }

 private:
  boost::uuids::detail::sha1 h_;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

nlohmann::json binding_json(const compiler::TensorBinding& b) {
  return {{"name", b.name},     {"dtype", static_cast<int>(b.dtype)}, {"size", b.size},
          {"stride", b.stride}, {"dram_addr", b.dram_addr},           {"mutated", b.mutated}};
}

compiler::TensorBinding binding_of(const nlohmann::json& j) {
  compiler::TensorBinding b;
  b.name = j.at("name").get<std::string>();
  b.dtype = static_cast<isa::DType>(j.at("dtype").get<int>());
  b.size = j.at("size").get<std::vector<int64_t>>();
  b.stride = j.at("stride").get<std::vector<int64_t>>();
  b.dram_addr = j.at("dram_addr").get<uint64_t>();
  b.mutated = j.at("mutated").get<bool>();
  return b;
}

// Removes the least recently used entries (of every kind) until the cache holds at most
// `max_bytes`.
void evict(const fs::path& dir, uint64_t max_bytes) {
  struct Entry {
    fs::file_time_type time;
    uint64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != kEntryExt) continue;
    std::error_code e2;
    const uint64_t bytes = it->file_size(e2);
    const auto time = it->last_write_time(e2);
    if (e2) continue;
    entries.push_back({time, bytes, it->path()});
    total += bytes;
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.time < b.time; });
  for (const auto& e : entries) {
    if (total <= max_bytes) break;
    std::error_code e2;
    if (fs::remove(e.path, e2)) total -= e.bytes;
  }
}

}  // namespace

ProgramCache ProgramCache::from_env() {
  ProgramCache c;
  const char* set = std::getenv("SPYRE_SIM_CACHE");
  if (set) {
    const std::string v = set;
    if (v != "off" && v != "0" && !v.empty()) c.dir = v;
  } else if (!env("XDG_CACHE_HOME").empty()) {
    c.dir = (fs::path(env("XDG_CACHE_HOME")) / "spyre-sim").string();
  } else if (!env("HOME").empty()) {
    c.dir = (fs::path(env("HOME")) / ".cache" / "spyre-sim").string();
  }
  const std::string mb = env("SPYRE_SIM_CACHE_MAX_MB");
  if (!mb.empty()) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(mb.c_str(), &end, 10);
    if (end == mb.c_str() || *end != '\0')
      throw Error("SPYRE_SIM_CACHE_MAX_MB", "expected a whole number of MiB, got '" + mb + "'");
    c.max_bytes = static_cast<uint64_t>(v) << 20;
  }
  return c;
}

std::string ProgramCache::entry_path(const std::string& kind, const std::string& key) const {
  const auto plain = [](const std::string& s, const char* what) {
    const bool ok = !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    });
    if (!ok) throw Error(std::string("cache ") + what, "expected [a-z0-9_]+, got '" + s + "'");
  };
  plain(kind, "kind");
  plain(key, "key");
  return (fs::path(dir) / kind / (key + kEntryExt)).string();
}

std::string ProgramCache::path_of(const std::string& key) const {
  return entry_path("programs", key);
}

std::optional<std::vector<uint8_t>> ProgramCache::load_entry(const std::string& kind,
                                                             const std::string& key) const {
  if (!enabled()) return std::nullopt;
  const std::string path = entry_path(kind, key);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    std::vector<uint8_t> bytes = read_file_bytes(path);
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
    return bytes;
  } catch (const Error&) {
    return std::nullopt;
  }
}

void ProgramCache::store_entry(const std::string& kind, const std::string& key,
                               const std::vector<uint8_t>& bytes) const {
  if (!enabled()) return;
  std::error_code ec;
  fs::create_directories(fs::path(dir) / kind, ec);
  if (ec) return;
  try {
    write_file_atomic(entry_path(kind, key), bytes.data(), bytes.size());
  } catch (const Error&) {
    return;
  }
  evict(dir, max_bytes);
}

std::optional<compiler::CompileResult> ProgramCache::load(const std::string& key) const {
  const auto bytes = load_entry("programs", key);
  if (!bytes) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::from_msgpack(*bytes);
    if (j.at("key").get<std::string>() != key) return std::nullopt;
    compiler::CompileResult r;
    r.program = isa::decode(j.at("program").get_binary(), path_of(key));
    for (const auto& b : j.at("inputs")) r.inputs.push_back(binding_of(b));
    for (const auto& b : j.at("outputs")) r.outputs.push_back(binding_of(b));
    r.report = j.at("report");
    return r;
  } catch (const std::exception&) {  // truncated, foreign or corrupt: compile again
    return std::nullopt;
  }
}

void ProgramCache::store(const std::string& key, const compiler::CompileResult& r) const {
  if (!enabled()) return;
  nlohmann::json j;
  j["key"] = key;
  j["program"] = nlohmann::json::binary(isa::encode(r.program));
  j["inputs"] = nlohmann::json::array();
  for (const auto& b : r.inputs) j["inputs"].push_back(binding_json(b));
  j["outputs"] = nlohmann::json::array();
  for (const auto& b : r.outputs) j["outputs"].push_back(binding_json(b));
  j["report"] = r.report;
  store_entry("programs", key, nlohmann::json::to_msgpack(j));
}

const std::string& build_id() {
  static const std::string id = [] {
    Dl_info info{};
    std::string path;
    if (dladdr(reinterpret_cast<void*>(&build_id), &info) && info.dli_fname) path = info.dli_fname;
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec)) path = fs::read_symlink("/proc/self/exe", ec);
    const std::vector<uint8_t> image = read_file_bytes(path);
    Sha1 h;
    h.part(image.data(), image.size());
    return h.hex();
  }();
  return id;
}

std::string program_key(const std::string& build, const arch::ArchConfig& cfg,
                        const std::vector<std::string>& compiler_sets, const std::string& ir_text) {
  Sha1 h;
  h.part("spyre-sim program cache 1");
  h.part(build);
  h.part(cfg.to_yaml());
  for (const auto& s : compiler_sets) h.part(s);
  h.part("ir");
  h.part(ir_text);
  return h.hex();
}

}  // namespace spyre::runner
