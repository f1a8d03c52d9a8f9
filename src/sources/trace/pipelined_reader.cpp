#include "sources/trace/pipelined_reader.h"

#include <utility>

namespace vw::trace {

PipelinedTraceReader::PipelinedTraceReader(std::unique_ptr<TraceReader> inner)
    : inner_(std::move(inner)), format_(inner_->format()), bytes_total_(inner_->bytes_total()), ring_(kBatches) {
  for (Batch& b : ring_) b.records.resize(kBatchRecords);
}

PipelinedTraceReader::~PipelinedTraceReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  freed_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void PipelinedTraceReader::Work() {
  size_t fill = 0;
  size_t last_skipped = 0;
  for (;;) {
    Batch* b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      freed_cv_.wait(lock, [&] { return stop_ || !ring_[fill].full; });
      if (stop_) return;
      b = &ring_[fill];
    }
    // The batch is ours until it is marked full: fill it without the lock.
    b->count = 0;
    b->last = false;
    b->status = Status::Ok();
    while (b->count < kBatchRecords) {
      auto more = inner_->NextInto(&b->records[b->count]);
      if (!more.ok()) {
        b->status = more.status();
        b->last = true;
        break;
      }
      if (!*more) {
        b->last = true;
        break;
      }
      ++b->count;
    }
    b->skipped_count = inner_->skipped_count();
    b->skipped_changed = b->skipped_count != last_skipped;
    if (b->skipped_changed) b->skipped = inner_->skipped_examples();
    last_skipped = b->skipped_count;
    b->synthetic_time = inner_->synthetic_time();
    b->has_zone = inner_->has_zone();
    b->tail_left_out = inner_->unterminated_tail_bytes();
    bytes_read_.store(inner_->bytes_read(), std::memory_order_relaxed);
    const bool last = b->last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      b->full = true;
    }
    filled_cv_.notify_one();
    if (last) return;
    fill = (fill + 1) % kBatches;
  }
}

PipelinedTraceReader::Batch& PipelinedTraceReader::TakeBatch() {
  if (!started_) {
    started_ = true;
    worker_ = std::thread([this] { Work(); });
  }
  Batch* b = &ring_[take_];
  {
    std::unique_lock<std::mutex> lock(mu_);
    filled_cv_.wait(lock, [&] { return b->full; });
  }
  skipped_count_ = b->skipped_count;
  if (b->skipped_changed) skipped_ = b->skipped;
  synthetic_time_ = b->synthetic_time;
  has_zone_ = b->has_zone;
  tail_left_out_ = b->tail_left_out;
  return *b;
}

void PipelinedTraceReader::ReleaseBatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_->full = false;
  }
  freed_cv_.notify_one();
  current_ = nullptr;
  take_ = (take_ + 1) % kBatches;
}

Result<const TraceRecord*> PipelinedTraceReader::NextRecord() {
  for (;;) {
    if (done_) {
      if (!error_.ok()) return error_;
      return static_cast<const TraceRecord*>(nullptr);
    }
    if (current_ == nullptr) {
      current_ = &TakeBatch();
      pos_ = 0;
    }
    if (pos_ < current_->count) return static_cast<const TraceRecord*>(&current_->records[pos_++]);
    if (current_->last) {
      done_ = true;
      error_ = current_->status;
      continue;
    }
    ReleaseBatch();
  }
}

Result<std::optional<TraceRecord>> PipelinedTraceReader::Next() {
  auto r = NextRecord();
  if (!r.ok()) return r.status();
  if (*r == nullptr) return std::optional<TraceRecord>();
  return std::optional<TraceRecord>(**r);
}

Result<bool> PipelinedTraceReader::NextInto(TraceRecord* record) {
  auto r = NextRecord();
  if (!r.ok()) return r.status();
  if (*r == nullptr) return false;
  *record = **r;
  return true;
}

}  // namespace vw::trace
