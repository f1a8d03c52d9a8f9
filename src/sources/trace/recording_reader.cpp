// Reads `vramwatch record` files (format in recording_writer.h): a schema header line, then one JSON
// object per GPU per sample. Unknown fields are ignored; null means missing. Recordings appended to
// one file (`record >> file`) are read as one when each later header has the first's schema and
// host; another host's or format's header is an error naming its line.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "sources/trace/line_trace_reader.h"
#include "sources/trace/recording_writer.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

using nlohmann::json;

// 1-based column of `"key"` in the line, or 1.
size_t KeyColumn(std::string_view line, std::string_view key) {
  std::string quoted = fmt::format("\"{}\"", key);
  size_t at = line.find(quoted);
  return at == std::string_view::npos ? 1 : at + 1;
}

class RecordingReader : public LineTraceReader {
 public:
  RecordingReader(std::unique_ptr<LineReader> in, std::string display, const TraceOptions& options)
      : LineTraceReader(std::move(in), std::move(display), options, TraceFormat::kRecording) {}

  std::string host() const override { return host_; }

 protected:
  Status ReadNext(TraceRecord* out, bool* got) override {
    std::string_view line, t;
    Status error;
    while (NextContentLine(&line, &t, &error)) {
      const size_t ln = line_number();
      json j;
      try {
        j = json::parse(t.begin(), t.end());
      } catch (const json::parse_error& e) {
        size_t col = ColumnOf(line, t) + (e.byte > 0 ? e.byte - 1 : 0);
        // Bytes that are no UTF-8 (a command line edited in another encoding), or a lone surrogate
        // escape: say so, rather than only "expected a JSON object" at a column inside a string.
        const std::string_view what = e.what();
        const bool utf8 =
            what.find("UTF-8") != std::string_view::npos || what.find("surrogate") != std::string_view::npos;
        VW_RETURN_IF_ERROR(Malformed(
            ln, col,
            utf8 ? "a JSON object in UTF-8 (this string holds bytes that are not UTF-8 text)" : "a JSON object", t));
        continue;
      } catch (const json::exception&) {  // a number too large for a double (out_of_range 406)
        VW_RETURN_IF_ERROR(Malformed(ln, ColumnOf(line, t), "a JSON object whose numbers fit a double", t));
        continue;
      }
      if (!j.is_object()) {
        VW_RETURN_IF_ERROR(Malformed(ln, ColumnOf(line, t), "a JSON object", t));
        continue;
      }
      if (!saw_header_) {
        auto it = j.find("schema");
        if (it == j.end() || !it->is_string()) {
          return Fatal(ln, ColumnOf(line, t),
                       fmt::format("expected the recording header {{\"schema\":\"{}\",...}} as the first line",
                                   kRecordingSchema));
        }
        const std::string schema = it->get<std::string>();
        if (schema != kRecordingSchema) {
          return Fatal(ln, KeyColumn(line, "schema"),
                       fmt::format("unsupported recording schema '{}'; this vramwatch reads '{}'", Shown(schema),
                                   kRecordingSchema));
        }
        saw_header_ = true;
        if (auto h = j.find("host"); h != j.end() && h->is_string()) host_ = h->get<std::string>();
        continue;
      }
      if (j.contains("schema") && !j.contains("t")) {
        // Another recording appended to this one (`record >> file`): read on when it is the same
        // format from the same host (a new segment of that host's samples), else say where to split.
        VW_RETURN_IF_ERROR(SecondHeader(j, line, t, ln));
        continue;
      }
      TraceRecord rec;
      std::string expected;
      std::string key;
      if (!Decode(j, &rec, &expected, &key)) {
        VW_RETURN_IF_ERROR(Malformed(ln, key.empty() ? ColumnOf(line, t) : KeyColumn(line, key), expected,
                                     key.empty() ? t : std::string_view(j.contains(key) ? j[key].dump() : "")));
        continue;
      }
      *out = std::move(rec);
      *got = true;
      return Status::Ok();
    }
    return error;
  }

 private:
  // Fills *rec from a record object; on failure says what was expected and under which key.
  bool Decode(const json& j, TraceRecord* rec, std::string* expected, std::string* key) {
    auto fail = [&](std::string_view k, std::string_view what) {
      *key = std::string(k);
      *expected = std::string(what);
      return false;
    };
    auto t = j.find("t");
    if (t == j.end()) return fail("", "a record with \"t\" (ISO 8601 time)");
    Timestamp ts;
    if (t->is_number()) {
      ts.seconds = t->get<double>();
      ts.has_zone = true;
      if (!PlausibleTime(ts.seconds)) return fail("t", "\"t\" as epoch seconds before the year 10000");
    } else if (!t->is_string() || !ParseTraceTimestamp(t->get_ref<const std::string&>(), &ts)) {
      return fail("t", "\"t\" as an ISO 8601 time");
    }
    NoteRowTime(ts.has_zone, line_number());  // times with and without a zone cannot share one clock
    rec->sample.t = ts.seconds;
    auto g = j.find("gpu");
    if (g == j.end() || !g->is_string()) return fail(g == j.end() ? "" : "gpu", "\"gpu\" as a string key");
    rec->gpu.key = g->get<std::string>();
    if (auto i = j.find("index"); i != j.end() && !i->is_null()) {
      if (!i->is_number_integer() || i->get<int64_t>() < 0 || i->get<int64_t>() > 1000000) {
        return fail("index", "\"index\" as a GPU index or null");
      }
      rec->gpu.index = i->get<int>();
    }
    for (auto [name, dst] : {std::pair<const char*, std::string*>{"uuid", &rec->gpu.uuid},
                             {"pci_bus_id", &rec->gpu.pci_bus_id},
                             {"name", &rec->gpu.name}}) {
      auto it = j.find(name);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_string()) return fail(name, fmt::format("\"{}\" as a string", name));
      *dst = it->get<std::string>();
    }
    MemorySample& s = rec->sample;
    for (auto [name, dst] : {std::pair<const char*, std::optional<uint64_t>*>{"used_bytes", &s.used_bytes},
                             {"total_bytes", &s.total_bytes},
                             {"free_bytes", &s.free_bytes},
                             {"reserved_bytes", &s.reserved_bytes}}) {
      if (!Bytes(j, name, dst)) return fail(name, fmt::format("\"{}\" as a number of bytes or null", name));
    }
    if (!Ratio(j, "util", &s.gpu_util_ratio)) return fail("util", "\"util\" as a ratio 0..1 or null");
    if (auto p = j.find("processes"); p != j.end() && !p->is_null()) {
      if (!p->is_array()) return fail("processes", "\"processes\" as a list");
      std::vector<ProcessMemory> list;
      for (const json& e : *p) {
        ProcessMemory pm;
        auto pid = e.is_object() ? e.find("pid") : e.end();
        if (!e.is_object() || pid == e.end() || !pid->is_number_integer()) {
          return fail("processes", "process entries with an integer \"pid\"");
        }
        pm.pid = pid->get<int64_t>();
        if (auto ty = e.find("type"); ty != e.end() && ty->is_string()) pm.type = ty->get<std::string>();
        if (auto c = e.find("command"); c != e.end() && c->is_string()) pm.command = c->get<std::string>();
        if (!Bytes(e, "used_bytes", &pm.used_bytes) || !Ratio(e, "sm_util", &pm.sm_util_ratio)) {
          return fail("processes", "process \"used_bytes\" in bytes and \"sm_util\" 0..1 or null");
        }
        if (auto gi = e.find("gpu_instance_id"); gi != e.end() && !gi->is_null()) {
          if (!gi->is_number_integer() || gi->get<int64_t>() < 0 || gi->get<int64_t>() > 1000000) {
            return fail("processes", "process \"gpu_instance_id\" as a MIG GPU instance id or null");
          }
          pm.gpu_instance_id = gi->get<unsigned>();
        }
        if (!Bytes(e, "instance_used_bytes", &pm.instance_used_bytes) ||
            !Bytes(e, "instance_total_bytes", &pm.instance_total_bytes)) {
          return fail("processes", "process \"instance_used_bytes\" and \"instance_total_bytes\" in bytes or null");
        }
        list.push_back(std::move(pm));
      }
      s.processes = std::move(list);
    }
    return true;
  }

  static bool Bytes(const json& j, const char* name, std::optional<uint64_t>* out) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return true;
    if (it->is_number_unsigned()) {
      *out = it->get<uint64_t>();
      return true;
    }
    if (it->is_number_integer()) return false;  // negative
    if (it->is_number_float()) {
      double v = it->get<double>();
      if (!(v >= 0 && v < 1.8e19)) return false;
      *out = static_cast<uint64_t>(v);
      return true;
    }
    return false;
  }

  static bool Ratio(const json& j, const char* name, std::optional<double>* out) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_number()) return false;
    double v = it->get<double>();
    if (!(v >= 0 && v <= 1)) return false;
    *out = v;
    return true;
  }

  // A header line after the first (`ln`, 1-based): fine when it has the first one's schema and
  // host; otherwise a fatal error that says it is a second recording's header and how to split.
  Status SecondHeader(const json& j, std::string_view line, std::string_view t, size_t ln) const {
    const std::string split = fmt::format(
        "split the file there (`head -n {} FILE` and `tail -n +{} FILE`) and analyse each part", ln - 1, ln);
    auto schema = j.find("schema");
    if (!schema->is_string() || schema->get<std::string>() != kRecordingSchema) {
      return Fatal(ln, KeyColumn(line, "schema"),
                   fmt::format("a second recording's header, in format '{}' where the first recording is in '{}': {}",
                               Shown(schema->is_string() ? schema->get<std::string>() : schema->dump()),
                               kRecordingSchema, split));
    }
    std::string host;
    if (auto h = j.find("host"); h != j.end() && h->is_string()) host = h->get<std::string>();
    if (host != host_) {
      return Fatal(ln, j.contains("host") ? KeyColumn(line, "host") : ColumnOf(line, t),
                   fmt::format("a second recording's header, from host '{}' where the first recording is from '{}': "
                               "samples of two hosts are not one GPU's; {}",
                               Shown(host), Shown(host_), split));
    }
    return Status::Ok();
  }

  bool saw_header_ = false;
  std::string host_;  // the first header's "host" (empty when it has none)
};

}  // namespace

std::unique_ptr<TraceReader> NewRecordingReader(std::unique_ptr<LineReader> in, std::string display,
                                                const TraceOptions& options) {
  return std::make_unique<RecordingReader>(std::move(in), std::move(display), options);
}

}  // namespace vw::trace
