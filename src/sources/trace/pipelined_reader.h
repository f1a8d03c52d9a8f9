// PipelinedTraceReader: runs another TraceReader on a worker thread, so parsing a trace overlaps
// with whatever the caller does with the records (`analyze` feeds the series builders).
//
// The worker fills batches of records into a small ring (kBatches batches of kBatchRecords
// records, reused: no allocation per record once warm) and the caller takes them out in the same
// order. Records, errors and lenient skip counts are exactly those of the wrapped reader: an error
// is returned after every record read before it, as the wrapped reader would. Memory is bounded by
// the ring, never by the file size.
//
// Threading: one caller thread uses this object; the wrapped reader is used only by the worker
// (started on the first read, stopped and joined by the destructor). skipped_count(),
// skipped_examples(), synthetic_time() and has_zone() are those of the wrapped reader as of the
// end of the batch the last record came from (exact once the end or an error was reached).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sources/trace/trace_reader.h"

namespace vw::trace {

class PipelinedTraceReader : public TraceReader {
 public:
  static constexpr size_t kBatchRecords = 2048;
  static constexpr size_t kBatches = 4;

  explicit PipelinedTraceReader(std::unique_ptr<TraceReader> inner);
  ~PipelinedTraceReader() override;
  PipelinedTraceReader(const PipelinedTraceReader&) = delete;
  PipelinedTraceReader& operator=(const PipelinedTraceReader&) = delete;

  // The next record, valid until the next call; nullptr at the end of the file.
  Result<const TraceRecord*> NextRecord();

  Result<std::optional<TraceRecord>> Next() override;   // copies the record
  Result<bool> NextInto(TraceRecord* record) override;  // copies the record
  TraceFormat format() const override { return format_; }
  uint64_t bytes_read() const override { return bytes_read_.load(std::memory_order_relaxed); }
  uint64_t bytes_total() const override { return bytes_total_; }
  size_t skipped_count() const override { return skipped_count_; }
  const std::vector<SkippedLine>& skipped_examples() const override { return skipped_; }
  bool synthetic_time() const override { return synthetic_time_; }
  bool has_zone() const override { return has_zone_; }
  uint64_t unterminated_tail_bytes() const override { return tail_left_out_; }

 private:
  struct Batch {
    std::vector<TraceRecord> records;  // kBatchRecords slots; the first `count` are filled
    size_t count = 0;
    bool last = false;  // no batch follows (end of file, or `status` is an error)
    Status status;      // the wrapped reader's error after `count` records
    size_t skipped_count = 0;
    bool skipped_changed = false;  // `skipped` holds a new copy of the examples
    std::vector<SkippedLine> skipped;
    bool synthetic_time = false;
    bool has_zone = false;
    uint64_t tail_left_out = 0;
    bool full = false;  // filled by the worker, not yet released by the caller
  };

  void Work();
  // Waits for the batch at `take_` (starting the worker on first use).
  Batch& TakeBatch();
  void ReleaseBatch();

  std::unique_ptr<TraceReader> inner_;
  TraceFormat format_;
  uint64_t bytes_total_;
  std::atomic<uint64_t> bytes_read_{0};

  std::mutex mu_;
  std::condition_variable filled_cv_, freed_cv_;
  std::vector<Batch> ring_;
  bool stop_ = false;  // set by the destructor
  std::thread worker_;
  bool started_ = false;

  // Caller side.
  size_t take_ = 0;  // ring index of the batch being read
  Batch* current_ = nullptr;
  size_t pos_ = 0;     // next record in *current_
  bool done_ = false;  // end of file or error handed out
  Status error_;
  size_t skipped_count_ = 0;
  std::vector<SkippedLine> skipped_;
  bool synthetic_time_ = false;
  bool has_zone_ = false;
  uint64_t tail_left_out_ = 0;
};

}  // namespace vw::trace
