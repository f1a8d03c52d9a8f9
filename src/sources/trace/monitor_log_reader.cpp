// `nvidia-smi dmon` and `nvidia-smi pmon` logs. Columns are found by their header names
// ("# gpu pwr gtemp ... fb bar1 ...", "#Date Time gpu pid type sm mem ... fb command"), never by
// position, and a repeated header may change them. "-" is a missing value.
//
// dmon: one record per row; `fb` (MB, which nvidia-smi means as MiB) is the used memory, `sm` %
// the utilisation. Without an `fb` column records have no used memory.
// pmon: rows are grouped into sample instants (a new instant starts when the Date/Time changes or a
// (gpu, pid) pair repeats); each instant gives one record per GPU with `processes` filled (pid,
// type, command, `fb` as used_bytes, `sm` % as sm_util_ratio). pmon does not report the device's
// used memory and the sum of process memory is not it, so used_bytes stays missing.
//
// Time: Date+Time columns ("20240104 13:54:35") give the wall clock; Time alone gives the time of
// day (a day is added when it wraps); otherwise sample i is at i * --interval seconds.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "sources/trace/line_trace_reader.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

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

// "20240104", "2024/01/04", "2024-01-04" -> days since the epoch.
bool ParseDmonDate(std::string_view s, long long* days) {
  int y = 0, m = 0, d = 0;
  auto digits = [&](size_t at, size_t n, int* v) {
    if (at + n > s.size()) return false;
    *v = 0;
    for (size_t k = 0; k < n; ++k) {
      if (s[at + k] < '0' || s[at + k] > '9') return false;
      *v = *v * 10 + (s[at + k] - '0');
    }
    return true;
  };
  bool ok = false;
  if (s.size() == 8) ok = digits(0, 4, &y) && digits(4, 2, &m) && digits(6, 2, &d);
  if (s.size() == 10 && (s[4] == '/' || s[4] == '-') && s[7] == s[4]) {
    ok = digits(0, 4, &y) && digits(5, 2, &m) && digits(8, 2, &d);
  }
  if (!ok || y < 1970 || !ValidCivilDate(y, m, d)) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

bool ParseDmonTime(std::string_view s, int* secs) {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') return false;
  int v[3];
  for (int k = 0; k < 3; ++k) {
    char a = s[static_cast<size_t>(k) * 3], b = s[static_cast<size_t>(k) * 3 + 1];
    if (a < '0' || a > '9' || b < '0' || b > '9') return false;
    v[k] = (a - '0') * 10 + (b - '0');
  }
  if (v[0] > 23 || v[1] > 59 || v[2] > 60) return false;
  *secs = v[0] * 3600 + v[1] * 60 + v[2];
  return true;
}

// Rows collected into one sample instant at most (keeps memory bounded on odd input).
constexpr size_t kMaxRowsPerInstant = 65536;

struct PendingGpu {
  int index = 0;
  std::vector<ProcessMemory> processes;
};

class MonitorLogReader : public LineTraceReader {
 public:
  MonitorLogReader(std::unique_ptr<LineReader> in, std::string display, const TraceOptions& options, TraceFormat which)
      : LineTraceReader(std::move(in), std::move(display), options, which), pmon_(which == TraceFormat::kPmon) {}

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
        FlushGroup();
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
    if (t.empty()) return Status::Ok();
    if (t.front() == '#') {
      SplitWords(t.substr(1), &words_);
      if (!words_.empty() && (words_[0] == "gpu" || words_[0] == "Date" || words_[0] == "Time")) SetHeader();
      return Status::Ok();  // the units line ("# Idx W C ...") and comments
    }
    if (IsSeparatorLine(t)) return Status::Ok();
    if (cols_.empty()) {
      return Malformed(ln, ColumnOf(line, t),
                       fmt::format("a '# gpu ...' header line before the {} rows", pmon_ ? "pmon" : "dmon"), t);
    }
    SplitWords(t, &words_);
    const size_t need = cols_.size();
    if (words_.size() < need || (!pmon_ && words_.size() > need) ||
        (pmon_ && command_col_ < 0 && words_.size() > need)) {
      std::string_view at = words_.size() > need ? words_[need] : line.substr(line.size());
      return Malformed(ln, ColumnOf(line, at), fmt::format("{} columns as in the header", need),
                       fmt::format("{} columns", words_.size()));
    }
    // Clock.
    std::optional<double> t_row;
    std::string_view stamp;
    if (date_col_ >= 0 && time_col_ >= 0) {
      long long days = 0;
      int secs = 0;
      std::string_view d = words_[static_cast<size_t>(date_col_)], tm = words_[static_cast<size_t>(time_col_)];
      if (!ParseDmonDate(d, &days)) return Malformed(ln, ColumnOf(line, d), "a date YYYYMMDD in Date", d);
      if (!ParseDmonTime(tm, &secs)) return Malformed(ln, ColumnOf(line, tm), "a time HH:MM:SS in Time", tm);
      t_row = static_cast<double>(days) * 86400.0 + secs;
      stamp = std::string_view(d.data(), static_cast<size_t>(tm.data() + tm.size() - d.data()));
    } else if (time_col_ >= 0) {
      int secs = 0;
      std::string_view tm = words_[static_cast<size_t>(time_col_)];
      if (!ParseDmonTime(tm, &secs)) return Malformed(ln, ColumnOf(line, tm), "a time HH:MM:SS in Time", tm);
      if (last_tod_ >= 0 && secs + 12 * 3600 < last_tod_) day_offset_ += 86400.0;
      last_tod_ = secs;
      t_row = day_offset_ + secs;
      stamp = tm;
    }
    // GPU index.
    uint64_t idx = 0;
    std::string_view gw = words_[static_cast<size_t>(gpu_col_)];
    if (!ParseUint(gw, &idx) || idx > 1000000) return Malformed(ln, ColumnOf(line, gw), "a GPU index in gpu", gw);
    const int gpu = static_cast<int>(idx);

    std::optional<uint64_t> fb;
    if (fb_col_ >= 0) {
      std::string_view v = words_[static_cast<size_t>(fb_col_)];
      if (ParseMemoryValue(v, MemUnit::kMiB, &fb) != ValueError::kOk) {
        return Malformed(ln, ColumnOf(line, v), "a number of MB in fb (or '-')", v);
      }
    }
    std::optional<double> sm;
    if (sm_col_ >= 0) {
      std::string_view v = words_[static_cast<size_t>(sm_col_)];
      if (ParsePercentValue(v, &sm) != ValueError::kOk) {
        return Malformed(ln, ColumnOf(line, v), "a percentage in sm (or '-')", v);
      }
    }

    if (!pmon_) {
      // dmon: a record per row; a repeated GPU index starts a new instant (for the synthetic clock).
      double when;
      if (t_row) {
        when = *t_row;
      } else {
        // Without memory there is nothing to analyse: say so before asking for a clock.
        if (fb_col_ < 0 && !(options().interval_s && *options().interval_s > 0)) {
          return Fatal(ln, 1,
                       "no memory values: this dmon log has no fb column (record with nvidia-smi dmon -s m, or -s "
                       "pucvmet, -o DT)");
        }
        auto interval = RequireInterval(ln, "this dmon log has no Date/Time columns (nvidia-smi dmon -o DT)");
        if (!interval.ok()) return interval.status();
        if (seen_gpus_.size() >= kMaxRowsPerInstant ||
            std::find(seen_gpus_.begin(), seen_gpus_.end(), gpu) != seen_gpus_.end()) {
          ++group_index_;
          seen_gpus_.clear();
        }
        seen_gpus_.push_back(gpu);
        when = static_cast<double>(group_index_) * *interval;
        set_synthetic_time();
      }
      TraceRecord rec;
      rec.gpu.key = std::to_string(gpu);
      rec.gpu.index = gpu;
      rec.sample.t = when;
      rec.sample.used_bytes = fb;
      rec.sample.gpu_util_ratio = sm;
      ready_.push_back(std::move(rec));
      return Status::Ok();
    }

    // pmon.
    std::string_view pw = words_[static_cast<size_t>(pid_col_)];
    std::optional<int64_t> pid;
    if (!IsMissingValue(pw)) {
      uint64_t p = 0;
      if (!ParseUint(pw, &p) || p > (uint64_t{1} << 40)) return Malformed(ln, ColumnOf(line, pw), "a PID in pid", pw);
      pid = static_cast<int64_t>(p);
    }
    const int64_t pid_key = pid ? *pid : -1;
    bool new_group = false;
    if (t_row) {
      new_group = stamp != group_stamp_;
    }
    if (std::find(group_keys_.begin(), group_keys_.end(), std::make_pair(gpu, pid_key)) != group_keys_.end()) {
      new_group = true;
    }
    if (group_keys_.size() >= kMaxRowsPerInstant) new_group = true;  // bounded memory on odd input
    if (new_group && !group_keys_.empty()) FlushGroup();
    if (group_keys_.empty()) {
      if (t_row) {
        group_t_ = *t_row;
      } else {
        auto interval = RequireInterval(ln, "this pmon log has no Date/Time columns (nvidia-smi pmon -o DT)");
        if (!interval.ok()) return interval.status();
        group_t_ = static_cast<double>(group_index_++) * *interval;
        set_synthetic_time();
      }
      group_stamp_.assign(stamp.data(), stamp.size());
    }
    group_keys_.emplace_back(gpu, pid_key);
    auto it = std::find_if(group_.begin(), group_.end(), [&](const PendingGpu& g) { return g.index == gpu; });
    if (it == group_.end()) {
      group_.push_back(PendingGpu{gpu, {}});
      it = group_.end() - 1;
    }
    if (pid) {
      ProcessMemory p;
      p.pid = *pid;
      if (type_col_ >= 0 && !IsMissingValue(words_[static_cast<size_t>(type_col_)])) {
        p.type = std::string(words_[static_cast<size_t>(type_col_)]);
      }
      if (command_col_ >= 0 && static_cast<size_t>(command_col_) < words_.size()) {
        std::string_view first = words_[static_cast<size_t>(command_col_)];
        std::string_view last = words_.back();
        std::string_view cmd(first.data(), static_cast<size_t>(last.data() + last.size() - first.data()));
        if (!IsMissingValue(cmd)) p.command = std::string(cmd);
      }
      p.used_bytes = fb;
      p.sm_util_ratio = sm;
      it->processes.push_back(std::move(p));
    }
    return Status::Ok();
  }

  void SetHeader() {
    cols_.assign(words_.begin(), words_.end());
    date_col_ = time_col_ = gpu_col_ = fb_col_ = sm_col_ = pid_col_ = type_col_ = command_col_ = -1;
    for (size_t i = 0; i < cols_.size(); ++i) {
      const std::string& c = cols_[i];
      const int k = static_cast<int>(i);
      if (c == "Date")
        date_col_ = k;
      else if (c == "Time")
        time_col_ = k;
      else if (c == "gpu")
        gpu_col_ = k;
      else if (c == "fb")
        fb_col_ = k;
      else if (c == "sm")
        sm_col_ = k;
      else if (c == "pid")
        pid_col_ = k;
      else if (c == "type")
        type_col_ = k;
      else if (c == "command")
        command_col_ = k;
    }
    if (gpu_col_ < 0 || (pmon_ && pid_col_ < 0)) cols_.clear();  // not a header we can read rows by
  }

  void FlushGroup() {
    for (PendingGpu& g : group_) {
      TraceRecord rec;
      rec.gpu.key = std::to_string(g.index);
      rec.gpu.index = g.index;
      rec.sample.t = group_t_;
      rec.sample.processes = std::move(g.processes);
      ready_.push_back(std::move(rec));
    }
    group_.clear();
    group_keys_.clear();
  }

  const bool pmon_;
  bool done_ = false;
  std::vector<std::string_view> words_;
  std::vector<std::string> cols_;
  int date_col_ = -1, time_col_ = -1, gpu_col_ = -1, fb_col_ = -1, sm_col_ = -1;
  int pid_col_ = -1, type_col_ = -1, command_col_ = -1;
  std::deque<TraceRecord> ready_;
  // Synthetic clock.
  std::vector<int> seen_gpus_;
  uint64_t group_index_ = 0;
  // Time-of-day clock.
  int last_tod_ = -1;
  double day_offset_ = 0;
  // pmon instant being collected.
  std::vector<PendingGpu> group_;
  std::vector<std::pair<int, int64_t>> group_keys_;
  std::string group_stamp_;
  double group_t_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> NewMonitorLogReader(std::unique_ptr<LineReader> in, std::string display,
                                                 const TraceOptions& options, TraceFormat which) {
  return std::make_unique<MonitorLogReader>(std::move(in), std::move(display), options, which);
}

}  // namespace vw::trace
