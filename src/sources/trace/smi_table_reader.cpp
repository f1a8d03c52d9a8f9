// Repeated full `nvidia-smi` tables (a loop or `watch nvidia-smi` capture), with or without
// `date` / `==== date ====` lines between them, or back to back.
//
// Per snapshot and GPU: index, name, bus id, Memory-Usage "11948MiB / 46068MiB" -> used/total,
// GPU-Util "37%" (N/A -> missing), and the rows of the Processes table for that GPU ("N/A" memory ->
// missing; "No running processes found" or an empty panel -> empty list). The snapshot's time is
// the last clock line before the table: nvidia-smi's own first line ("Tue Oct 29 19:00:23 2024") or
// a `date` line; without any, snapshot i is at i * --interval. Old (390-era) and new (550-590)
// layouts and the Windows "KMD Version"/"Driver-Model" layout are read. Under MIG, the MIG devices
// table gives each GPU instance's memory ("11091MiB / 40448MiB", the first row of an instance; the
// BAR1 line below it is not memory), and a process row's GI column names its instance: the
// process carries that instance's memory (ProcessMemory::instance_*). Instances are not GPUs.
#include <fmt/format.h>

#include <deque>
#include <string>
#include <vector>

#include "sources/trace/line_trace_reader.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

void SplitWords(std::string_view s, std::vector<std::string_view>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out->push_back(s.substr(i, j - i));
    i = j;
  }
}

// "|a|b|c|" -> {"a","b","c"} (untrimmed views).
void SplitCells(std::string_view s, std::vector<std::string_view>* out) {
  out->clear();
  if (!s.empty() && s.front() == '|') s.remove_prefix(1);
  if (!s.empty() && s.back() == '|') s.remove_suffix(1);
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '|') {
      out->push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
}

// "11948MiB / 46068MiB" -> used, total.
bool ParseMemoryUsage(std::string_view cell, std::optional<uint64_t>* used, std::optional<uint64_t>* total) {
  std::string_view c = Trim(cell);
  size_t slash = c.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view a = Trim(c.substr(0, slash)), b = Trim(c.substr(slash + 1));
  if (a.size() < 4 || b.size() < 4 || a.substr(a.size() - 3) != "MiB" || b.substr(b.size() - 3) != "MiB") return false;
  return ParseMemoryValue(a, MemUnit::kMiB, used) == ValueError::kOk &&
         ParseMemoryValue(b, MemUnit::kMiB, total) == ValueError::kOk;
}

// One MIG GPU instance's memory, from the MIG devices table.
struct MigRow {
  unsigned gpu_instance_id = 0;
  std::optional<uint64_t> used, total;
};

struct GpuRow {
  GpuIdentity id;
  std::optional<uint64_t> used, total;
  std::optional<double> util;
  std::vector<ProcessMemory> processes;
  std::vector<MigRow> mig;  // in table order, one per GPU instance
};

enum class Section { kOutside, kGpus, kMig, kProcesses };

// Bounds that keep memory independent of the input (a real table has a few GPUs and processes).
constexpr size_t kMaxGpus = 1024;
constexpr size_t kMaxProcesses = 65536;

class SmiTableReader : public LineTraceReader {
 public:
  SmiTableReader(std::unique_ptr<LineReader> in, std::string display, const TraceOptions& options)
      : LineTraceReader(std::move(in), std::move(display), options, TraceFormat::kSmiTable) {}

 protected:
  Status ReadNext(TraceRecord* out, bool* got) override {
    for (;;) {
      if (!ready_.empty()) {
        *out = std::move(ready_.front());
        *got = true;
        ready_.pop_front();
        return Status::Ok();
      }
      if (done_) return Status::Ok();
      std::string_view line;
      if (!NextLine(&line)) {
        done_ = true;
        VW_RETURN_IF_ERROR(Flush(line_number()));
        continue;
      }
      VW_RETURN_IF_ERROR(HandleLine(line));
    }
  }

 private:
  Status HandleLine(std::string_view line) {
    const size_t ln = line_number();
    if (LineOverlong()) return OverlongLine();
    std::string_view t = Trim(line);
    if (t.empty()) {
      if (section_ == Section::kGpus || section_ == Section::kMig) section_ = Section::kOutside;
      return Status::Ok();
    }
    if (t.front() == '|' || t.front() == '+') return TableLine(t, ln, line);
    // Outside the box drawing: clock lines, separators, `watch` headers.
    Timestamp ts;
    if (ParseDateLine(t, &ts) || WatchHeaderTime(t, &ts)) {
      VW_RETURN_IF_ERROR(Flush(ln));
      NoteTime(ts);
      next_time_ = ts.seconds;
      section_ = Section::kOutside;
      return Status::Ok();
    }
    if (IsSeparatorLine(t)) return Status::Ok();
    return Malformed(ln, ColumnOf(line, t), "an nvidia-smi table line or a date line", t);
  }

  static bool WatchHeaderTime(std::string_view t, Timestamp* ts) {
    // "Every 2.0s: nvidia-smi      host: Tue Oct 29 19:00:23 2024"
    if (!StartsWith(t, "Every ")) return false;
    for (size_t i = t.find(' '); i != std::string_view::npos; i = t.find(' ', i + 1)) {
      if (ParseDateLine(t.substr(i + 1), ts)) return true;
    }
    return false;
  }

  Status TableLine(std::string_view t, size_t ln, std::string_view line) {
    if (StartsWith(t, "| NVIDIA-SMI")) {
      VW_RETURN_IF_ERROR(Flush(ln));
      in_snapshot_ = true;
      snapshot_time_ = next_time_;
      next_time_.reset();
      section_ = Section::kGpus;
      rows_started_ = false;
      return Status::Ok();
    }
    if (StartsWith(t, "| MIG devices")) {
      section_ = Section::kMig;
      mig_rows_started_ = false;
      return Status::Ok();
    }
    if (StartsWith(t, "| Processes")) {
      section_ = Section::kProcesses;
      processes_seen_ = true;
      proc_rows_started_ = false;
      proc_has_gi_ci_ = false;
      return Status::Ok();
    }
    if (!in_snapshot_) {
      // A table line before any "| NVIDIA-SMI" header (a cut capture): nothing to attach it to.
      if (t.front() == '+') return Status::Ok();
      return Malformed(ln, ColumnOf(line, t), "an nvidia-smi table starting with its '| NVIDIA-SMI' header", t);
    }
    switch (section_) {
      case Section::kGpus: return GpuLine(t, ln, line);
      case Section::kProcesses: return ProcessLine(t, ln, line);
      case Section::kMig: return MigLine(t, ln, line);
      case Section::kOutside: return Status::Ok();
    }
    return Status::Ok();
  }

  Status GpuLine(std::string_view t, size_t ln, std::string_view line) {
    if (StartsWith(t, "|=") || StartsWith(t, "+-") || StartsWith(t, "|-")) {
      if (StartsWith(t, "|=")) rows_started_ = true;
      expect_first_ = rows_started_;
      return Status::Ok();
    }
    if (!rows_started_) return Status::Ok();  // the column-title lines
    SplitCells(t, &cells_);
    if (expect_first_) {
      expect_first_ = false;
      // "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:AB:00.0 Off |   0 |"
      SplitWords(cells_[0], &words_);
      uint64_t idx = 0;
      if (cells_.size() < 2 || words_.empty() || !ParseUint(words_[0], &idx) || idx > 100000) {
        std::string_view at = words_.empty() ? t : words_[0];
        return Malformed(ln, ColumnOf(line, at), "a GPU row '|   0  NAME ... | BUS-ID ... |'", t);
      }
      if (gpus_.size() >= kMaxGpus) {
        return Malformed(ln, 1, fmt::format("at most {} GPUs in one table", kMaxGpus), t);
      }
      GpuRow row;
      row.id.index = static_cast<int>(idx);
      row.id.key = std::to_string(idx);
      size_t name_words = words_.size();
      if (name_words > 2) {
        std::string_view last = words_.back();
        if (last == "On" || last == "Off" || last == "WDDM" || last == "TCC" || last == "WDM" || last == "MCDM" ||
            last == "N/A") {
          --name_words;
        }
      }
      if (name_words > 1) {
        std::string_view first = words_[1], last = words_[name_words - 1];
        row.id.name.assign(first.data(), static_cast<size_t>(last.data() + last.size() - first.data()));
      }
      SplitWords(cells_[1], &words_);
      if (!words_.empty() && words_[0].find(':') != std::string_view::npos) {
        row.id.pci_bus_id = NormalizePciBusId(words_[0]);
      }
      gpus_.push_back(std::move(row));
      return Status::Ok();
    }
    if (gpus_.empty() || cells_.size() < 3) return Status::Ok();
    std::optional<uint64_t> used, total;
    if (!ParseMemoryUsage(cells_[1], &used, &total)) return Status::Ok();  // the MIG M. line and the like
    GpuRow& row = gpus_.back();
    row.used = used;
    row.total = total;
    SplitWords(cells_[2], &words_);
    if (!words_.empty()) {
      std::optional<double> util;
      if (ParsePercentValue(words_[0], &util) != ValueError::kOk) {
        return Malformed(ln, ColumnOf(line, words_[0]), "GPU-Util as a percentage or N/A", words_[0]);
      }
      row.util = util;
    }
    return Status::Ok();
  }

  // A row of the MIG devices table: "|  0    2   0   0  |  11091MiB / 40448MiB  | ..." (GPU, GI, CI,
  // MIG device; the memory of the GPU instance). The line below it (first cell blank: BAR1) adds
  // nothing, nor does another compute instance of a GPU instance already read (nvidia-smi leaves
  // its memory cell blank, the instance's cell spanning its rows). A memory cell that does not read
  // as "used / total" in MiB (N/A) leaves the instance's memory unknown: its processes are then
  // judged against the card, as before MIG tables were read.
  Status MigLine(std::string_view t, size_t ln, std::string_view line) {
    if (StartsWith(t, "|=")) {
      mig_rows_started_ = true;
      return Status::Ok();
    }
    if (!mig_rows_started_ || t.front() == '+') return Status::Ok();
    SplitCells(t, &cells_);
    if (cells_.size() < 2) return Status::Ok();  // "No MIG devices found"
    SplitWords(cells_[0], &words_);
    if (words_.empty()) return Status::Ok();  // the BAR1 line, or an empty ECC line
    uint64_t gpu = 0, gi = 0;
    if (words_.size() < 4 || !ParseUint(words_[0], &gpu) || !ParseUint(words_[1], &gi) || gi > 1000000) {
      return Malformed(ln, ColumnOf(line, words_[0]), "a MIG device row '| GPU GI CI MIG | used / total | ...'",
                       Trim(cells_[0]));
    }
    for (GpuRow& g : gpus_) {
      if (!g.id.index || *g.id.index != static_cast<int>(gpu)) continue;
      for (const MigRow& m : g.mig) {
        if (m.gpu_instance_id == gi) return Status::Ok();
      }
      MigRow row;
      row.gpu_instance_id = static_cast<unsigned>(gi);
      if (!ParseMemoryUsage(cells_[1], &row.used, &row.total)) row.used = row.total = std::nullopt;
      if (g.mig.size() < kMaxGpus) g.mig.push_back(row);
      break;
    }
    return Status::Ok();
  }

  Status ProcessLine(std::string_view t, size_t ln, std::string_view line) {
    if (t.front() == '+') {
      if (proc_rows_started_) section_ = Section::kOutside;  // the end of the Processes box
      return Status::Ok();
    }
    if (StartsWith(t, "|=")) {
      proc_rows_started_ = true;
      return Status::Ok();
    }
    std::string_view inner = Trim(t.substr(1, t.size() >= 2 && t.back() == '|' ? t.size() - 2 : t.size() - 1));
    if (!proc_rows_started_) {
      SplitWords(inner, &words_);
      for (std::string_view w : words_) {
        if (w == "GI") proc_has_gi_ci_ = true;
      }
      return Status::Ok();
    }
    if (inner.empty() || StartsWith(inner, "No running processes")) return Status::Ok();
    SplitWords(inner, &words_);
    const size_t fixed = proc_has_gi_ci_ ? 5 : 3;  // GPU [GI CI] PID Type
    uint64_t gpu = 0, pid = 0;
    if (words_.size() < fixed + 1 || !ParseUint(words_[0], &gpu)) {
      return Malformed(ln, ColumnOf(line, inner), "a process row 'GPU [GI CI] PID Type Process-name Memory'", inner);
    }
    std::string_view pid_word = words_[fixed - 2];
    if (!ParseUint(pid_word, &pid)) return Malformed(ln, ColumnOf(line, pid_word), "a PID", pid_word);
    ProcessMemory p;
    p.pid = static_cast<int64_t>(pid);
    p.type = std::string(words_[fixed - 1]);
    // GI is "N/A" on a GPU without MIG.
    if (uint64_t gi = 0; proc_has_gi_ci_ && ParseUint(words_[1], &gi) && gi <= 1000000) {
      p.gpu_instance_id = static_cast<unsigned>(gi);
    }
    std::string_view mem = words_.back();
    if (ParseMemoryValue(mem, MemUnit::kMiB, &p.used_bytes) != ValueError::kOk) {
      return Malformed(ln, ColumnOf(line, mem), "the process's GPU memory (e.g. 386MiB or N/A)", mem);
    }
    if (words_.size() > fixed + 1) {
      std::string_view first = words_[fixed], last = words_[words_.size() - 2];
      p.command.assign(first.data(), static_cast<size_t>(last.data() + last.size() - first.data()));
    }
    for (GpuRow& row : gpus_) {
      if (row.id.index && *row.id.index == static_cast<int>(gpu)) {
        if (row.processes.size() >= kMaxProcesses) {
          return Malformed(ln, 1, fmt::format("at most {} processes per GPU", kMaxProcesses), inner);
        }
        row.processes.push_back(std::move(p));
        break;
      }
    }
    return Status::Ok();
  }

  // Emits the snapshot collected so far (if any).
  Status Flush(size_t ln) {
    if (!in_snapshot_) return Status::Ok();
    in_snapshot_ = false;
    section_ = Section::kOutside;
    if (gpus_.empty()) {
      processes_seen_ = false;
      return Status::Ok();
    }
    double when;
    if (snapshot_time_) {
      when = *snapshot_time_;
    } else {
      auto interval = RequireInterval(ln, "these nvidia-smi tables carry no time (no date line before them)");
      if (!interval.ok()) return interval.status();
      when = static_cast<double>(synthetic_index_++) * *interval;
      set_synthetic_time();
    }
    for (GpuRow& row : gpus_) {
      TraceRecord rec;
      rec.gpu = std::move(row.id);
      rec.sample.t = when;
      rec.sample.used_bytes = row.used;
      rec.sample.total_bytes = row.total;
      rec.sample.gpu_util_ratio = row.util;
      for (ProcessMemory& p : row.processes) {
        if (!p.gpu_instance_id) continue;
        for (const MigRow& m : row.mig) {
          if (m.gpu_instance_id != *p.gpu_instance_id) continue;
          p.instance_used_bytes = m.used;
          p.instance_total_bytes = m.total;
          break;
        }
      }
      if (processes_seen_) rec.sample.processes = std::move(row.processes);
      ready_.push_back(std::move(rec));
    }
    gpus_.clear();
    processes_seen_ = false;
    return Status::Ok();
  }

  bool done_ = false;
  std::deque<TraceRecord> ready_;
  std::vector<std::string_view> cells_, words_;
  Section section_ = Section::kOutside;
  bool in_snapshot_ = false;
  bool rows_started_ = false;
  bool expect_first_ = false;
  bool processes_seen_ = false;
  bool proc_rows_started_ = false;
  bool proc_has_gi_ci_ = false;
  bool mig_rows_started_ = false;
  std::optional<double> next_time_;
  std::optional<double> snapshot_time_;
  uint64_t synthetic_index_ = 0;
  std::vector<GpuRow> gpus_;
};

}  // namespace

std::unique_ptr<TraceReader> NewSmiTableReader(std::unique_ptr<LineReader> in, std::string display,
                                               const TraceOptions& options) {
  return std::make_unique<SmiTableReader>(std::move(in), std::move(display), options);
}

}  // namespace vw::trace
