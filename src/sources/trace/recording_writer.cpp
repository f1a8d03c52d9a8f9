#include "sources/trace/recording_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/time.h"

namespace vw::trace {
namespace {

// Keys in the order docs/formats.md shows them ("schema" and "t" first), not sorted.
using json = nlohmann::ordered_json;

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// An unknown string (empty) is null, never "".
json StrOrNull(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

// Names may be cut by nvidia-smi in the middle of a UTF-8 sequence; replace bad bytes instead of failing.
std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string RecordingHeaderLine(const RecordingHeader& header) {
  json j;
  j["schema"] = kRecordingSchema;
  j["started"] = FormatIso8601(header.started, true);
  j["host"] = header.host;
  j["source"] = header.source;
  j["interval_s"] = OrNull(header.interval_s);
  return Dump(j);
}

std::string RecordingRecordLine(const TraceRecord& record, bool utc) {
  const MemorySample& s = record.sample;
  json j;
  j["t"] = FormatIso8601(s.t, utc);
  j["gpu"] = record.gpu.key;
  j["index"] = OrNull(record.gpu.index);
  // A GPU whose identity could not be read yet (its handle failed) has null ones, never "".
  j["uuid"] = StrOrNull(record.gpu.uuid);
  j["pci_bus_id"] = StrOrNull(record.gpu.pci_bus_id);
  j["name"] = StrOrNull(record.gpu.name);
  j["used_bytes"] = OrNull(s.used_bytes);
  j["total_bytes"] = OrNull(s.total_bytes);
  j["free_bytes"] = OrNull(s.free_bytes);
  j["reserved_bytes"] = OrNull(s.reserved_bytes);
  j["util"] = OrNull(s.gpu_util_ratio);
  if (s.processes) {
    json procs = json::array();
    for (const ProcessMemory& p : *s.processes) {
      json e = {{"pid", p.pid},
                {"type", StrOrNull(p.type)},
                {"command", StrOrNull(p.command)},
                {"used_bytes", OrNull(p.used_bytes)},
                {"sm_util", OrNull(p.sm_util_ratio)}};
      // MIG only: the GPU instance and its memory.
      if (p.gpu_instance_id) {
        e["gpu_instance_id"] = *p.gpu_instance_id;
        e["instance_used_bytes"] = OrNull(p.instance_used_bytes);
        e["instance_total_bytes"] = OrNull(p.instance_total_bytes);
      }
      procs.push_back(std::move(e));
    }
    j["processes"] = std::move(procs);
  }
  return Dump(j);
}

Result<std::unique_ptr<RecordingWriter>> RecordingWriter::Create(const std::string& path,
                                                                 const RecordingHeader& header) {
  std::FILE* f = stdout;
  if (path != "-") {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0 || (f = ::fdopen(fd, "a")) == nullptr) {
      const int e = errno;
      if (fd >= 0) ::close(fd);
      return FromErrno(e, "create recording " + path);
    }
  }
  std::string line = RecordingHeaderLine(header);
  std::unique_ptr<RecordingWriter> w(new RecordingWriter(f, path != "-", path == "-" ? "standard output" : path, line));
  VW_RETURN_IF_ERROR(w->WriteLine(line));
  return w;
}

RecordingWriter::~RecordingWriter() {
  (void)Close();
}

Status RecordingWriter::WriteLine(const std::string& line) {
  if (file_ == nullptr) return Status::IoError("write recording to " + path_ + ": already closed");
  // Cut by someone else (copytruncate): the records that follow need their header again.
  struct stat st {};
  if (own_ && written_ > 0 && ::fstat(::fileno(file_), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) < written_) {
    written_ = 0;
    VW_RETURN_IF_ERROR(WriteLine(header_));
  }
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF ||
      std::fflush(file_) != 0) {
    return FromErrno(errno, "write recording to " + path_);
  }
  written_ += line.size() + 1;
  return Status::Ok();
}

Status RecordingWriter::Write(const TraceRecord& record, bool utc) {
  VW_RETURN_IF_ERROR(WriteLine(RecordingRecordLine(record, utc)));
  ++records_;
  return Status::Ok();
}

Status RecordingWriter::Close() {
  if (file_ == nullptr) return Status::Ok();
  std::FILE* f = file_;
  file_ = nullptr;
  if (!own_) return std::fflush(f) == 0 ? Status::Ok() : FromErrno(errno, "flush recording to " + path_);
  return std::fclose(f) == 0 ? Status::Ok() : FromErrno(errno, "close recording " + path_);
}

}  // namespace vw::trace
