#include "sources/trace/framework_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "core/ascii.h"
#include "core/units.h"
#include "sources/trace/framework_log_internal.h"
#include "sources/trace/framework_log_match.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

using framework_match::DriverMatch;
using framework_match::KeyMatch;
using framework_match::KeyPairMatch;
using framework_match::Matchers;
using framework_match::Span;

enum class Metric { kAllocated, kReserved, kDriver };

// Only a line's first 64 KiB are looked at for values: a printed memory_stats() dict runs to
// about 5 KiB; a longer line is some dump that happens to say "allocated". A line cut there that
// names a key after the cut is reported.
constexpr size_t kMaxLineLooked = 64 * 1024;
constexpr size_t kMaxSkippedExamples = 10;

struct Value {
  Metric metric;
  int device;
  uint64_t bytes;
};

// Bytes per unit as the lines write it ("kb", "MiB", "G", "bytes"; binary, as trace_values.h's
// MemUnit); 0 for no unit or an unknown one.
double UnitBytes(const std::string& u) {
  const std::optional<MemUnit> unit = u.empty() ? std::nullopt : ParseMemUnit(u);
  return unit ? MemUnitBytes(*unit) : 0;
}

// The unit a line names for its unit-less values: "(MB)", "[MiB]", "in GB" and the like.
double LineUnit(const std::string& lower, const Matchers& match) {
  return UnitBytes(std::string(match.line_unit_word(lower)));
}

// A value's bytes, or nullopt for one that is not a memory size after all: a whole number under
// 1024 with no unit anywhere (the "4" of "allocated 4 workers"), or a fraction with no unit
// (`*no_unit` set: "allocated: 20.4" where the line names no unit is MB or GB, not bytes).
// `number` may hold thousands separators ("1,234") and an exponent ("3.1898624e+08").
Result<std::optional<uint64_t>> ToBytes(std::string number, const std::string& unit, double line_unit,
                                        const std::string& shown, const std::string& where, bool* no_unit) {
  number.erase(std::remove(number.begin(), number.end(), ','), number.end());
  const double v = std::strtod(number.c_str(), nullptr);
  double scale = 0;
  if (!unit.empty()) {
    scale = UnitBytes(unit);
  } else if (line_unit > 0) {
    scale = line_unit;
  } else if (v != std::floor(v) || (number.find('.') != std::string::npos && number.find('e') == std::string::npos)) {
    *no_unit = true;  // "20.4", "26.0": MB or GB left unsaid
    return std::optional<uint64_t>();
  } else if (v < 1024) {
    return std::optional<uint64_t>();
  } else {
    scale = 1;  // a whole number with no unit anywhere: bytes, as torch.cuda.memory_*() return them
  }
  const double bytes = v * scale;
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 1.8e19) {
    return Status::ParseError(fmt::format("{}: '{}' is not a memory size", where, shown));
  }
  return std::optional<uint64_t>(static_cast<uint64_t>(std::round(bytes)));
}

// The device number `digits` (at most six of them) of `lower` spell.
int Number(const std::string& lower, Span digits) {
  return std::stoi(digits.Of(lower));
}

// The device a value at `at` belongs to: the last "cuda:N", "GPU N", "[rankN]", "rank N |",
// "rank N of M", "[rank: N]", "local_rank=N" or "Device N:" before it in the line, else the fallback. Values are asked
// for in the order of their places, so each part of the line is searched once.
class DeviceBefore {
 public:
  DeviceBefore(const std::string& lower, int fallback, const Matchers& match)
      : lower_(lower), match_(match), device_(fallback) {}

  int At(size_t at) {
    if (at < from_ || by_rank_) return device_;  // by_rank_: see below; at < from_ cannot happen, kept safe
    // A matcher that found nothing in [from_, at) finds nothing from a later from_ either: it is not
    // asked again in this call (a line of thousands of "cuda:0" rescanned it to `at` each time).
    bool a_done = false, b_done = false;
    for (;;) {
      const std::optional<Span> a = a_done ? std::nullopt : match_.find_device(lower_, from_, at, true);
      const std::optional<Span> b = b_done ? std::nullopt : match_.find_rank_device(lower_, from_, at);
      a_done = !a;
      b_done = !b;
      if (!a && !b) {
        // Nothing names a device before `at`: the next value's search starts near it, not at the
        // line's start again (a name is far shorter than kNameReach; one running across `at` stays
        // in reach).
        if (at > from_ + kNameReach) from_ = at - kNameReach;
        break;
      }
      const bool rank = b && (!a || b->begin < a->begin) && AfterRank(b->begin);
      const Span n = !b || (a && a->begin < b->begin) ? *a : *b;
      device_ = Number(lower_, n);
      from_ = n.end;
      // A rank names its process: each rank its own series, whatever device it calls its own
      // (torchrun ranks with one GPU each all print "cuda:0").
      if (rank) {
        by_rank_ = true;
        break;
      }
    }
    return device_;
  }

 private:
  // Whether the digits at `digits` follow the word "rank" ("local_rank", "global_rank"), then
  // spaces, or a ':' or '=' between spaces, not "device".
  bool AfterRank(size_t digits) const {
    auto spaces_before = [&](size_t p) {
      while (p > 0 && std::isspace(static_cast<unsigned char>(lower_[p - 1]))) --p;
      return p;
    };
    size_t p = spaces_before(digits);
    if (p > 0 && (lower_[p - 1] == ':' || lower_[p - 1] == '=')) p = spaces_before(p - 1);
    return p >= 4 && lower_.compare(p - 4, 4, "rank") == 0;
  }

  static constexpr size_t kNameReach = 64;  // characters: longer than any "global_rank = 12345 of 12345"

  const std::string& lower_;
  const Matchers& match_;
  int device_;
  size_t from_ = 0;
  bool by_rank_ = false;  // the line named its rank: the series is the rank's
};

// The unit the values of a line carry when they all carry the same one ("allocated: 2048 MB
// reserved: 4096" gives MB to the 4096), or empty.
std::string SharedUnit(const std::vector<std::string>& units) {
  std::string shared;
  for (const std::string& u : units) {
    if (u.empty()) continue;
    if (!shared.empty() && UnitBytes(u) != UnitBytes(shared)) return {};
    shared = u;
  }
  return shared;
}

// The driver's figure of an nvidia-smi line: its used memory, not its total or free memory. The
// first figure after "memory" whose words before it, or the word right after it, name `used`, else
// the first that names neither `total` nor `free` (one the word after it calls free or total is
// never taken: no figure rather than a wrong one).
std::optional<DriverMatch> DriverFigure(const std::string& lower, size_t smi, const Matchers& match) {
  std::optional<DriverMatch> first;
  for (size_t from = smi;;) {
    const std::optional<DriverMatch> v = match.find_driver_figure(lower, from);
    if (!v) break;
    from = v->whole.end;
    const std::string_view words = std::string_view(lower).substr(v->whole.begin, v->number.begin - v->whole.begin);
    // The word right after it ("75559 MiB free, 6000 MiB used"): a figure it calls free or total is
    // not the used memory, whatever came before it.
    size_t w = v->whole.end;
    while (w < lower.size() && lower[w] == ' ') ++w;
    size_t w_end = w;
    while (w_end < lower.size() && std::isalpha(static_cast<unsigned char>(lower[w_end]))) ++w_end;
    const std::string_view after = std::string_view(lower).substr(w, w_end - w);
    if (after == "free" || after == "total") continue;
    if (after == "used" || words.find("used") != std::string_view::npos) return v;
    if (words.find("total") != std::string_view::npos || words.find("free") != std::string_view::npos) continue;
    if (!first) first = v;
  }
  return first;
}

// Every value one line gives. `table_device`: the device of the memory_summary() table the line
// is in, or -1. A value with no unit that cannot be bytes is left out and, when it is a fraction,
// added to `left_out` ("train.log:2: 'allocated: 20.4' has no unit"), as is one written with a
// decimal comma ("1234,5 MB"). A value without a unit takes, in this order, the unit in brackets
// after its key ("allocated (GB): 1.5"), the whole's it is a part of ("allocated 2048 / 81920
// MiB"), the line's ("(MB)"), or the one every other value of its device in the line carries
// ("allocated: 2048 MB reserved: 4096").
Result<std::vector<Value>> ValuesOf(std::string_view line, int table_device, const std::string& where,
                                    std::vector<std::string>* left_out, const Matchers& match) {
  std::vector<Value> out;
  const std::string lower = AsciiLower(line);
  const double line_unit = LineUnit(lower, match);
  const int line_device = table_device >= 0 ? table_device : 0;

  // The driver's view: a line naming nvidia-smi and memory; its used memory, in MiB unless it says
  // otherwise; the device from "GPU N" anywhere in the line, else the rank or device before it.
  if (const size_t smi = lower.find("nvidia-smi"); smi != std::string::npos) {
    if (const std::optional<DriverMatch> v = DriverFigure(lower, smi, match)) {
      const std::optional<Span> gpu = match.find_device(lower, 0, lower.size(), false);
      const int device = gpu ? Number(lower, *gpu) : DeviceBefore(lower, line_device, match).At(v->whole.begin);
      bool fraction = false;
      auto bytes = ToBytes(v->number.Of(lower), v->unit.Of(lower), line_unit > 0 ? line_unit : 1024.0 * 1024,
                           v->whole.Of(lower), where, &fraction);
      if (!bytes.ok()) return bytes.status();
      if (*bytes) out.push_back({Metric::kDriver, device, **bytes});
    }
  }

  // The key, a memory_stats() name ("allocated_bytes.all.current") or a plain word, the device in
  // brackets when the call names one ("(0)", "('cuda:1')", "(device=1)"), then the value: a number
  // (thousands separators and an exponent allowed) and its unit. Quotes around a key (a printed
  // dict, JSON) are allowed. Two keys with their values as fractions ("allocated/reserved:
  // 2048/4096 MB") are read as two values of the pair's unit.
  struct Found {
    size_t at;
    std::string metric, number, unit, shown;
    std::optional<int> device;  // the call's, then the one it belongs to
  };
  std::vector<Found> found;
  std::vector<Span> pairs;
  for (size_t from = 0;;) {
    const std::optional<KeyPairMatch> m = match.find_key_pair(lower, from);
    if (!m) break;
    from = m->whole.end;
    if (match.max_or_peak_before(lower, m->whole.begin)) continue;
    pairs.push_back(m->whole);
    const std::string shown(Trim(line.substr(m->whole.begin, m->whole.size())));
    found.push_back({m->whole.begin, std::string(m->first), m->first_number.Of(lower), m->unit.Of(lower), shown, {}});
    found.push_back({m->whole.begin, std::string(m->second), m->second_number.Of(lower), m->unit.Of(lower), shown, {}});
  }
  for (size_t from = 0;;) {
    const std::optional<KeyMatch> m = match.find_key(lower, from);
    if (!m) break;
    from = m->whole.end;
    const size_t at = m->whole.begin;
    if (std::any_of(pairs.begin(), pairs.end(), [&](Span p) { return at >= p.begin && at < p.end; })) continue;
    if (m->which == "peak" || m->which == "max" || match.max_or_peak_before(lower, at)) continue;
    // A part of a dotted memory_stats() name ("allocated_bytes.all.allocated" counts every byte
    // ever allocated): only a name's start is a key.
    if (at > 0 && lower[at] != 'm' && (lower[at - 1] == '.' || lower[at - 1] == '_')) continue;
    const std::string shown(Trim(line.substr(at, m->whole.size())));
    const std::string number = m->number.Of(lower);
    // "1234,5 MB": a decimal comma, which the number stops at, and its unit is left behind. Read,
    // it would be 1234 bytes; it is left out and reported instead.
    if (const size_t end = m->number.end;
        end + 1 < lower.size() && lower[end] == ',' && std::isdigit(static_cast<unsigned char>(lower[end + 1]))) {
      if (left_out != nullptr) {
        size_t to = end + 1;
        while (to < lower.size() && (std::isdigit(static_cast<unsigned char>(lower[to])) || lower[to] == ' ')) ++to;
        while (to < lower.size() && std::isalpha(static_cast<unsigned char>(lower[to]))) ++to;
        left_out->push_back(
            fmt::format("{}: '{}' has a decimal comma (write a decimal point)", where, Trim(line.substr(at, to - at))));
      }
      continue;
    }
    if (!number.empty() && number[0] == '-') {
      return Status::ParseError(fmt::format("{}: '{}' is not a memory size (negative)", where, shown));
    }
    // "allocated: 40%": a share of the card, not a size; left out and reported, never given the
    // unit of the line's other values.
    if (m->unit.size() == 0) {
      size_t e = m->number.end;
      while (e < lower.size() && lower[e] == ' ') ++e;
      if (e < lower.size() && lower[e] == '%') {
        if (left_out != nullptr) {
          left_out->push_back(fmt::format("{}: '{}%' is a percentage, not a memory size", where, shown));
        }
        continue;
      }
    }
    std::string unit = m->unit.Of(lower);
    if (unit.empty()) unit = m->bracket_unit.Of(lower);
    if (unit.empty()) {
      if (const std::optional<Span> whole_unit = match.ratio_unit_at(lower, m->number.end)) {
        unit = whole_unit->Of(lower);
      }
    }
    std::optional<int> device;
    if (m->device && m->device->size() > 0) device = Number(lower, *m->device);
    found.push_back({at, std::string(m->metric), number, unit, shown, device});
  }
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.at < b.at; });
  DeviceBefore device_before(lower, line_device, match);
  std::map<int, std::vector<std::string>> units;  // by device
  for (Found& f : found) {
    if (!f.device) f.device = device_before.At(f.at);
    units[*f.device].push_back(f.unit);
  }
  std::map<int, double> shared_units;  // by device, each worked out once (per value, it was quadratic)
  for (const auto& [device, list] : units)
    shared_units[device] = line_unit > 0 ? line_unit : UnitBytes(SharedUnit(list));
  for (const Found& f : found) {
    const double shared_unit = shared_units[*f.device];
    bool fraction = false;
    auto bytes = ToBytes(f.number, f.unit, shared_unit, f.shown, where, &fraction);
    if (!bytes.ok()) return bytes.status();
    if (fraction && left_out != nullptr) {
      left_out->push_back(
          fmt::format("{}: '{}' has no unit (a fraction cannot be bytes; write the unit, or one for "
                      "the line such as '(MB)')",
                      where, f.shown));
    }
    if (!*bytes) continue;
    out.push_back({f.metric == "reserved" ? Metric::kReserved : Metric::kAllocated, *f.device, **bytes});
  }
  return out;
}

bool Has(const FrameworkStep& s, Metric m) {
  switch (m) {
    case Metric::kAllocated: return s.allocated_bytes.has_value();
    case Metric::kReserved: return s.reserved_bytes.has_value();
    case Metric::kDriver: return s.driver_used_bytes.has_value();
  }
  return false;
}

void Set(FrameworkStep& s, Metric m, uint64_t bytes) {
  switch (m) {
    case Metric::kAllocated: s.allocated_bytes = bytes; break;
    case Metric::kReserved: s.reserved_bytes = bytes; break;
    case Metric::kDriver: s.driver_used_bytes = bytes; break;
  }
}

// Moves metric `m` from one step to another.
void Move(FrameworkStep& from, FrameworkStep& to, Metric m) {
  switch (m) {
    case Metric::kAllocated: std::swap(from.allocated_bytes, to.allocated_bytes); break;
    case Metric::kReserved: std::swap(from.reserved_bytes, to.reserved_bytes); break;
    case Metric::kDriver: std::swap(from.driver_used_bytes, to.driver_used_bytes); break;
  }
}

// Reserved memory holds the allocated memory: a step whose allocated figure is above its reserved
// one read one of them wrong (a number whose unit was left out, a total taken for a value). Neither
// figure of such a step is kept; each is reported in `log->skipped`, naming the step's line.
void DropMisreadSteps(FrameworkLog& log, const std::string& display) {
  for (FrameworkStep& s : log.steps) {
    if (!s.allocated_bytes || !s.reserved_bytes || *s.allocated_bytes <= *s.reserved_bytes) continue;
    ++log.skipped;
    if (log.skipped_examples.size() < kMaxSkippedExamples) {
      log.skipped_examples.push_back(
          fmt::format("{}:{}: allocated {} is more than reserved {}, which holds it: one of them is misread (a number "
                      "printed without its unit?); neither is read",
                      display, s.line, FormatBytes(static_cast<double>(*s.allocated_bytes)),
                      FormatBytes(static_cast<double>(*s.reserved_bytes))));
    }
    s.allocated_bytes.reset();
    s.reserved_bytes.reset();
  }
  std::erase_if(log.steps,
                [](const FrameworkStep& s) { return !s.allocated_bytes && !s.reserved_bytes && !s.driver_used_bytes; });
}

// The device a memory_summary() table's title names ("memory summary, device id 1"), or -1.
int TableDevice(const std::string& lower, const Matchers& match) {
  const std::optional<Span> d = match.find_table_title_device(lower);
  return d ? Number(lower, *d) : -1;
}

// A CSV header naming memory_stats() columns (a logger's metrics file): where the allocated and
// reserved bytes are. A column is named by its memory_stats() key, alone or after a prefix
// ("DeviceStats/allocated_bytes.all.current"), or by the function (torch.cuda.memory_allocated).
struct CsvColumns {
  size_t fields = 0;
  std::optional<size_t> allocated, reserved;
};

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    std::string_view f =
        Trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (f.size() >= 2 && (f.front() == '"' || f.front() == '\'') && f.back() == f.front())
      f = f.substr(1, f.size() - 2);
    out.push_back(f);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<CsvColumns> CsvHeader(const std::vector<std::string_view>& fields, const Matchers& match) {
  if (fields.size() < 2) return std::nullopt;
  CsvColumns c;
  c.fields = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string f = AsciiLower(fields[i]);
    auto ends = [&](std::string_view suffix) {
      return f.size() >= suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0 &&
             (f.size() == suffix.size() || !std::isalnum(static_cast<unsigned char>(f[f.size() - suffix.size() - 1])));
    };
    auto is = [&](std::string_view a, std::string_view b, std::string_view d) {
      for (std::string_view suffix : {a, b, d}) {
        // A maximum or a peak ("max_memory_allocated", "peak_allocated_bytes.all.current") is not
        // the current value.
        if (ends(suffix) && !match.max_or_peak_before(f, f.size() - suffix.size())) return true;
      }
      return false;
    };
    // The first column of each: a second one is some other view of it.
    if (!c.allocated && is("allocated_bytes.all.current", "memory_allocated", "memory_allocated()")) c.allocated = i;
    if (!c.reserved && is("reserved_bytes.all.current", "memory_reserved", "memory_reserved()")) c.reserved = i;
  }
  if (!c.allocated && !c.reserved) return std::nullopt;
  return c;
}

// One row of such a CSV: whole numbers of bytes, written as integers or floats ("318986240.0",
// "3.1898624e+08"); an empty cell is missing. A fraction is not bytes: an error (the column is in
// MB or GB under a bytes name).
Result<std::vector<Value>> CsvValues(const std::vector<std::string_view>& fields, const CsvColumns& c,
                                     const std::string& where) {
  std::vector<Value> out;
  const std::pair<std::optional<size_t>, Metric> wanted[] = {{c.allocated, Metric::kAllocated},
                                                             {c.reserved, Metric::kReserved}};
  for (const auto& [column, metric] : wanted) {
    if (!column || fields[*column].empty()) continue;
    const std::string cell(fields[*column]);
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    if (end != cell.c_str() + cell.size() || !std::isfinite(v) || v < 0 || v > 1.8e19 || v != std::floor(v)) {
      return Status::ParseError(fmt::format("{}: column {} ({}): expected a whole number of bytes, got '{}'", where,
                                            *column + 1, metric == Metric::kAllocated ? "allocated" : "reserved",
                                            cell));
    }
    out.push_back({metric, 0, static_cast<uint64_t>(std::round(v))});
  }
  return out;
}

std::optional<CsvColumns> CsvHeader(std::string_view line, const Matchers& match) {
  if (line.find(',') == std::string_view::npos) return std::nullopt;
  return CsvHeader(SplitFields(line), match);
}

// Cheap filter before the matchers: the words every value line holds.
bool MayHoldValues(const std::string& lower) {
  return lower.find("alloc") != std::string::npos || lower.find("reserved") != std::string::npos ||
         lower.find("nvidia-smi") != std::string::npos || lower.find("memory summary") != std::string::npos;
}

// The hand-written matchers (framework_log_match.h), which framework_log.h's functions use.
constexpr Matchers kHandWritten{};

}  // namespace

bool LooksLikeFrameworkLogWith(std::string_view head, const Matchers& match) {
  size_t lines = 0;
  while (!head.empty() && lines < 200) {
    const size_t nl = head.find('\n');
    const std::string_view whole = Trim(head.substr(0, nl));
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    ++lines;
    if (whole.empty() || whole.front() == '#') continue;
    if (CsvHeader(whole, match)) return true;
    const std::string_view line = whole.substr(0, kMaxLineLooked);
    const std::string lower = AsciiLower(line);
    if (!MayHoldValues(lower)) continue;
    if (TableDevice(lower, match) >= 0) return true;
    std::vector<std::string> left_out;
    auto values = ValuesOf(line, -1, "", &left_out, match);
    // A framework line with a bad value, or one left out (no unit, a decimal comma): the parser
    // says what is wrong, where a trace reader would only say it cannot tell the format.
    if (!values.ok() || !left_out.empty()) return true;
    for (const Value& v : *values) {
      if (v.metric != Metric::kDriver) return true;
    }
  }
  return false;
}

bool IsFrameworkLogHeadWith(std::string_view head, bool complete, const Matchers& match) {
  const std::string lower = AsciiLower(head);
  // `nvidia-smi -q` prints "Reserved : 408 MiB" among its FB memory figures: not PyTorch's.
  if (lower.find("nvsmi log") != std::string::npos || lower.find("fb memory usage") != std::string::npos ||
      lower.find("<nvidia_smi_log>") != std::string::npos) {
    return false;
  }
  // A memory_summary() table opens with "|=====", as an nvidia-smi table does: its title decides.
  if (lower.find("memory summary, device id") != std::string::npos && lower.find("nvidia-smi") == std::string::npos) {
    return true;
  }
  // A CSV whose header names memory_stats() columns: a --query-gpu CSV's never does.
  for (std::string_view rest = head; !rest.empty();) {
    const size_t nl = rest.find('\n');
    const std::string_view line = Trim(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    if (CsvHeader(line, match)) return true;
    // memory_stats() printed as JSON or a dict opens with '{', as a recording does; Python 3.11 and
    // older print it as an OrderedDict, whose commas a CSV reader would take for its own.
    const std::string first = AsciiLower(line);
    if ((line.front() == '{' || first.starts_with("ordereddict(")) &&
        first.find("vramwatch.record") == std::string::npos &&
        (first.find("allocated_bytes.all.current") != std::string::npos ||
         first.find("reserved_bytes.all.current") != std::string::npos)) {
      return true;
    }
    break;  // only the first line of text can be the header
  }
  return !DetectTraceFormat(head, complete, "").ok() && LooksLikeFrameworkLogWith(head, match);
}

Result<FrameworkLog> ParseFrameworkLogWith(std::string_view text, const std::string& display, bool lenient,
                                           const Matchers& match) {
  FrameworkLog log;
  std::map<int, FrameworkStep> open;  // each device's step in progress
  int table_device = -1;
  std::optional<CsvColumns> csv;  // the header of a metrics CSV, once seen
  bool any_framework_value = false;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view whole = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (whole.empty() || whole.front() == '#') continue;
    if (whole.front() != '|') table_device = -1;
    // A CSV row is read whole (a logger's header runs to many KiB); other lines by their start.
    const std::string_view line = whole.substr(0, kMaxLineLooked);
    Result<std::vector<Value>> values = std::vector<Value>{};
    std::vector<std::string_view> fields;
    if (whole.find(',') != std::string_view::npos) fields = SplitFields(whole);
    if (!csv) csv = CsvHeader(fields, match);
    if (csv && csv->fields == fields.size()) {
      if (CsvHeader(fields, match)) continue;  // the header (again)
      values = CsvValues(fields, *csv, fmt::format("{}:{}", display, line_no));
    } else {
      const std::string lower = AsciiLower(line);
      if (!MayHoldValues(lower)) continue;
      if (int d = TableDevice(lower, match); d >= 0) {
        table_device = d;
        continue;
      }
      std::vector<std::string> left_out;
      values = ValuesOf(line, table_device, fmt::format("{}:{}", display, line_no), &left_out, match);
      if (line.size() < whole.size() && MayHoldValues(AsciiLower(whole.substr(line.size())))) {
        left_out.push_back(fmt::format("{}:{}: the line is {} KiB long; only its first {} KiB are read", display,
                                       line_no, (whole.size() + 1023) / 1024, kMaxLineLooked / 1024));
      }
      log.skipped += left_out.size();
      for (std::string& n : left_out) {
        if (log.skipped_examples.size() < kMaxSkippedExamples) log.skipped_examples.push_back(std::move(n));
      }
    }
    if (!values.ok()) {
      if (!lenient) return values.status();
      ++log.skipped;
      if (log.skipped_examples.size() < kMaxSkippedExamples) log.skipped_examples.push_back(values.status().message());
      continue;
    }
    if (values->empty()) continue;
    ++log.lines_read;
    // A value that the device's step already holds ends that step, and the values of this line
    // read before it go with it into the next one: one line is one step. The same value twice in
    // one line: the first counts.
    std::map<int, std::vector<Metric>> this_line;
    for (const Value& v : *values) {
      std::vector<Metric>& mine = this_line[v.device];
      if (std::find(mine.begin(), mine.end(), v.metric) != mine.end()) continue;
      auto it = open.find(v.device);
      if (it != open.end() && Has(it->second, v.metric)) {
        FrameworkStep next;
        next.line = line_no;
        next.device = v.device;
        for (Metric m : mine) Move(it->second, next, m);
        log.steps.push_back(it->second);
        it->second = next;
      }
      if (it == open.end()) {
        FrameworkStep s;
        s.line = line_no;
        s.device = v.device;
        it = open.emplace(v.device, s).first;
      }
      Set(it->second, v.metric, v.bytes);
      mine.push_back(v.metric);
      any_framework_value |= v.metric != Metric::kDriver;
    }
  }
  for (auto& [device, s] : open) log.steps.push_back(s);
  std::stable_sort(log.steps.begin(), log.steps.end(),
                   [](const FrameworkStep& a, const FrameworkStep& b) { return a.line < b.line; });
  log.lines = line_no;
  const size_t skipped_before = log.skipped, examples_before = log.skipped_examples.size();
  DropMisreadSteps(log, display);
  const bool kept = std::any_of(log.steps.begin(), log.steps.end(), [](const FrameworkStep& s) {
    return s.allocated_bytes.has_value() || s.reserved_bytes.has_value();
  });
  if (any_framework_value && !kept) {
    // Values were found, and every step was dropped as misread: say that, not "none found".
    return Status::ParseError(fmt::format(
        "{}: every step's PyTorch values were dropped as misread ({} of them), allocated above reserved; the "
        "first: {}",
        display, log.skipped - skipped_before,
        log.skipped_examples.size() > examples_before ? log.skipped_examples[examples_before] : std::string("-")));
  }
  if (!any_framework_value) {
    return Status::ParseError(fmt::format(
        "{}: no PyTorch memory value found; expected lines such as 'torch.cuda.memory_allocated(0) 318986240', "
        "'allocated: 20.4 | reserved: 26.0' with '(MB)', or memory_summary() tables{}",
        display, log.skipped_examples.empty() ? "" : " (" + log.skipped_examples.front() + ")"));
  }
  return log;
}

bool LooksLikeFrameworkLog(std::string_view head) {
  return LooksLikeFrameworkLogWith(head, kHandWritten);
}

bool IsFrameworkLogHead(std::string_view head, bool complete) {
  return IsFrameworkLogHeadWith(head, complete, kHandWritten);
}

Result<FrameworkLog> ParseFrameworkLog(std::string_view text, const std::string& display, bool lenient) {
  return ParseFrameworkLogWith(text, display, lenient, kHandWritten);
}

}  // namespace vw::trace
